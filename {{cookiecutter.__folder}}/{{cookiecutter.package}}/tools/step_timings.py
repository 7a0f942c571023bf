"""What one training step costs, and what it costs without each of our parts: `bench-train`
(bench_train.py is its command line, so that `--help` loads no TensorFlow).

On the accelerator `accelerator.detect` finds, for --backbone at --image-size, with the
global batch, precision and steps per execution `train` would use, one process fits each
of these in turn, `repeats` times (medians; a device call that compiles, the first, or
starts the input pipeline, OURS' first of each turn, is not timed):

  OURS    train's step: model.py's model, compiled by compile_model, on the input pipeline
  CACHED  the same compiled model fed one cached batch: the input out of the picture
  UNMIXED CACHED with MixUp and CutMix off (where --mixup or --cutmix turns one on)
  BARE    the same keras-hub backbone with a plain head (pooling, dense), compiled plainly
  STOCK   BARE as keras-hub ships it, padding before every depthwise convolution
          (EfficientNets: efficientnet_padding.py makes it "same" at stride 1)
  APPS    keras.applications' network of the same architecture (EfficientNet-B0, -B3)

RATIOS says what each ratio of two of them tells. With --weights none the backbones are
built from their known architectures (architectures.py), offline; with a preset (imagenet,
a folder) from that preset.

The cached batch is fed as arrays (under JAX put on the device once), not through tf.data:
without TensorFlow (a GPU machine with JAX alone, Colab's TPU runtime) every variant but
OURS, which reads the records through tf.data, still runs.
"""

from __future__ import annotations

import dataclasses
import math
import os
import statistics
import sys
import time

import keras
import numpy as np

from ..runtime.backbone_choices import BACKBONES, weights
from ..runtime.config import Config
from ..runtime.errors import UserError
from ..runtime.learning import attention, averaging, backbones, efficientnet_padding, plan
from ..runtime.platform import accelerator, backend
from ..runtime.platform.accelerator import Accelerator
from .architectures import ARCHITECTURES

RATIOS = (  # numerator, denominator, what the ratio tells
    ("OURS", "CACHED", "the input pipeline"),
    ("CACHED", "UNMIXED", "MixUp and CutMix in the model"),
    ("CACHED", "BARE", "model.py's uint8 input, layers and metrics against a plain model"),
    ("BARE", "APPS", "keras-hub's network against keras.applications'"),
    ("STOCK", "APPS", "keras-hub's network as it ships"),
    ("STOCK", "BARE", "what efficientnet_padding.py saves"),
)
IMAGENET_MEAN, IMAGENET_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


class StepTimes(keras.callbacks.Callback):
    """When each device call of a fit ended. Keras reads a call's loss back before it calls a
    callback's on_train_batch_end, so the call has finished by then."""

    def on_train_begin(self, logs=None):
        self.ends = [time.perf_counter()]

    def on_train_batch_end(self, batch, logs=None):
        self.ends.append(time.perf_counter())


def backbone_for(cfg: Config, precision: str) -> backbones.Backbone:
    """The backbone `train` would load; with --weights none, built from its known
    architecture (no download) where there is one."""
    architecture = ARCHITECTURES.get(cfg.backbone)
    if weights(cfg) != "none" or architecture is None:
        return backbones.load(cfg, precision)
    import keras_hub

    if BACKBONES[cfg.backbone].attention:  # as backbones.load does
        attention.prepare(cfg.backbone, cfg.image_size, precision)
    name, arguments, _ = architecture
    arguments = {**arguments, **backbones.changed_arguments(cfg)}  # as train changes them
    model = getattr(keras_hub.models, name)(**arguments, dtype=precision)
    scale = [1 / (255 * s) for s in IMAGENET_STD]
    offset = [-m / s for m, s in zip(IMAGENET_MEAN, IMAGENET_STD, strict=True)]
    source = f"architecture only, {name} as its preset builds it, nothing downloaded"
    return backbones.Backbone(backbones.prepared(model), scale, offset, source)


def another(model: keras.Model) -> keras.Model:
    """A new network of `model`'s class and arguments, as keras-hub builds it (clone_model would
    copy our changes to its layers)."""
    return type(model).from_config(model.get_config())


def plain(cfg: Config, backbone: keras.Model, name: str) -> keras.Model:
    """`backbone` under global pooling and a dense softmax: a bare Keras classifier."""
    inputs = keras.Input((cfg.image_size, cfg.image_size, 3), name="image")
    names = backbone.input if isinstance(backbone.input, dict) else None
    x = backbone({next(iter(names)): inputs} if names else inputs)
    two_d = len(x.shape) == 4  # a convolutional network's map; else a transformer's tokens
    x = (keras.layers.GlobalAveragePooling2D if two_d else keras.layers.GlobalAveragePooling1D)()(x)
    outputs = keras.layers.Dense(cfg.num_classes, "softmax", dtype="float32")(x)
    return keras.Model(inputs, outputs, name=name)


def the_run(cfg: Config, found: Accelerator) -> tuple[Config, plan.Plan, list[str], str]:
    """The config as train resolves it, its plan, the training files, and why none (or "")."""
    if not backend.tensorflow_installed():
        problems = ["no TensorFlow installed, whose tf.data reads them"]
    else:
        from ..runtime.data import source
        from ..runtime.stages import preflight, training_checks

        try:
            cfg, _ = source.resolved(cfg)
        except UserError as error:
            problems = [str(error)]
        else:
            checked = preflight.check(cfg, found, "preview", training=training_checks.CHECKS)
            if checked.plan:  # made from the training files, once they are checked
                return cfg, checked.plan.value, checked.train.value.files, ""
            problems = checked.problems or ["no training records"]
    steps, note = plan.steps_per_execution(found, cfg.steps_per_execution, sys.maxsize)
    precision = found.precision(cfg.precision)
    run = plan.Plan(found.global_batch(cfg.batch_size), 0, precision, steps, note)
    return cfg, run, [], "; ".join(problems)


def cached_batch(cfg: Config, run: plan.Plan, training, image_dtype: str) -> tuple:
    """One batch of the pipeline's, or of random pixels without records."""
    if training is not None:
        images, labels = next(iter(training))
        return np.asarray(images), np.asarray(labels)
    rng = np.random.default_rng(cfg.seed)
    shape = (run.global_batch, cfg.image_size, cfg.image_size, 3)
    images = rng.integers(0, 256, shape, dtype=np.uint8).astype(image_dtype)
    classes = rng.integers(0, cfg.num_classes, run.global_batch)
    labels = np.eye(cfg.num_classes, dtype=np.float32)[classes] if cfg.multi_label else classes
    return images, labels.astype(np.float32 if cfg.multi_label else np.int32)


def bench(
    cfg: Config, variants: tuple[str, ...], found: Accelerator | None = None, steps: int = 5,
    repeats: int = 3,
) -> dict:  # fmt: skip
    """Print each variant's seconds a step and their ratios; returns the medians by variant.
    `variants` picks some of bench_train.VARIANTS, in that order; the model and its recipe are
    model.py's."""
    found = found or accelerator.detect(cfg)
    from ..runtime.learning.model import build_model, compile_model, host_augmentations

    keras.utils.set_random_seed(cfg.seed)
    cfg, run, files, no_records = the_run(cfg, found)
    calls = max(1, math.ceil(steps / run.steps_per_execution))  # timed device calls a turn
    training = None
    if files and "OURS" in variants:
        from ..runtime.data import pipeline

        training = pipeline.for_training(
            files, cfg, run.global_batch, found.image_dtype, augmentations=host_augmentations(cfg)
        )
    with found.scope():
        keras.mixed_precision.set_global_policy(run.precision)
        backbone = backbone_for(cfg, run.precision)
        images, labels = cached_batch(cfg, run, training, found.image_dtype)
        fits, skipped = {}, {}
        per_call = run.steps_per_execution
        per_turn = (calls + 1) * per_call
        if {"CACHED", "OURS"} & set(variants):
            net = build_model(cfg, backbone, found.image_dtype)
            compile_model(net, cfg, found.replicas, per_turn, steps_per_execution=per_call)
            fits["CACHED"] = (net, (images, labels))
            if training is not None:
                fits["OURS"] = (net, training)
            elif "OURS" in variants:
                skipped["OURS"] = f"no training records to read ({no_records})"
        mixes = (cfg.mixup or cfg.cutmix) and cfg.mix_probability
        if "UNMIXED" in variants and not mixes:
            skipped["UNMIXED"] = "mixing is off: --mixup or --cutmix switches it on"
        elif "UNMIXED" in variants:
            unmixed = dataclasses.replace(cfg, mix_probability=0.0)
            # A network of its own: under JAX, fit frees the variables of the model it trains.
            net = build_model(unmixed, backbone_for(cfg, run.precision), found.image_dtype)
            compile_model(net, unmixed, found.replicas, per_turn, steps_per_execution=per_call)
            fits["UNMIXED"] = (net, (images, labels))
        plainly, why_not = plain_variants(cfg, backbone.model, variants)
        skipped.update(why_not)
        floats = images.astype(np.float32)
        classes = np.random.default_rng(cfg.seed).integers(0, cfg.num_classes, len(images))
        for name, model in plainly.items():
            adam = keras.optimizers.Adam(1e-4)
            model.compile(adam, "sparse_categorical_crossentropy", steps_per_execution=per_call)
            fits[name] = (model, (floats, classes))
        fits = {name: fits[name] for name in variants if name in fits}
        medians, first = take_turns(fits, calls, per_call, repeats)
    report(cfg, found, run, backbone, medians, first, skipped, repeats * calls)
    return medians


def plain_variants(cfg: Config, loaded: keras.Model, variants) -> tuple[dict, dict]:
    """Those of BARE, STOCK and APPS asked for that can be built (uncompiled), and why not
    where not."""
    plainly, skipped = {}, {}
    if "BARE" in variants:
        plainly["BARE"] = plain(cfg, backbones.prepared(another(loaded)), "bare")
    stock = another(loaded) if "STOCK" in variants else None
    if stock is not None and efficientnet_padding.padded_at_stride_one(stock):
        backbones.synchronize_batch_statistics(stock)
        plainly["STOCK"] = plain(cfg, stock, "stock")
    elif stock is not None:
        skipped["STOCK"] = (
            f"{BACKBONES[cfg.backbone].title} has no stride-1 depthwise convolution padded beforehand: "
            "efficientnet_padding.py changes nothing"
        )
    network = ARCHITECTURES.get(cfg.backbone, ("", {}, ""))[2]
    if "APPS" in variants and network:
        size = (cfg.image_size, cfg.image_size, 3)
        make = getattr(keras.applications, network)
        applications = make(include_top=False, weights=None, input_shape=size)
        backbones.synchronize_batch_statistics(applications)
        plainly["APPS"] = plain(cfg, applications, "applications")
    elif "APPS" in variants:
        skipped["APPS"] = f"keras.applications has no network of {BACKBONES[cfg.backbone].title}'s"
    return plainly, skipped


def take_turns(fits: dict, calls: int, steps_per_call: int, repeats: int) -> tuple[dict, dict]:
    """Fit each variant in turn, `repeats` times, `calls` timed device calls a turn, after an
    untimed one where it compiles (the first turn) or starts the input pipeline (OURS): the
    median seconds a step, and each variant's first call (compiling)."""
    times = {name: [] for name in fits}
    first = {}
    for turn in range(repeats):  # taking turns: a noisy neighbour slows every one alike
        for name, (model, data) in fits.items():
            untimed = 1 if turn == 0 or not isinstance(data, tuple) else 0
            ends = fit_turn(model, data, (calls + untimed) * steps_per_call)
            times[name].extend(np.diff(ends)[untimed:] / steps_per_call)
            if turn == 0:  # a first pass can take minutes: say how it goes
                first[name] = ends[1] - ends[0]
                print(
                    f"{name}: first call {first[name]:.1f} s, then {times[name][-1]:.3f} s a step"
                )
        print(
            f"pass {turn + 1}/{repeats}: "
            + ", ".join(f"{n} {statistics.median(times[n][-calls:]):.3f} s" for n in fits)
        )
    return {name: statistics.median(values) for name, values in times.items()}, first


def fit_turn(model: keras.Model, data, steps: int) -> list[float]:
    """Fit `steps` steps; when each device call ended, after the fit's start."""
    timer = StepTimes()
    if isinstance(data, tuple):
        data = repeated(data)
    model.fit(data, epochs=1, steps_per_epoch=steps, callbacks=[timer], verbose=0, shuffle=False)
    averaging.unshared(model)  # for its next turn, under JAX
    return timer.ends


def repeated(batch: tuple):
    """One batch, over and over, as fit takes it: under TensorFlow a tf.data dataset; under
    JAX the arrays themselves, put on the device once where one device trains (DataParallel
    splits them over several itself), so neither tf.data nor a copy from the host each step."""
    if keras.backend.backend() == "tensorflow":
        import tensorflow as tf

        return tf.data.Dataset.from_tensors(batch).repeat()
    if keras.distribution.distribution() is None:
        import jax

        batch = jax.device_put(batch)

    def forever():
        while True:
            yield batch

    return forever()


def report(cfg, found, run, backbone, medians, first, skipped, count) -> None:
    size = f"{cfg.image_size}x{cfg.image_size}"
    print(
        f"{cfg.backbone} ({backbone.source}) at {size}, global batch {run.global_batch}, "
        f"{run.precision}, steps per execution: {run.steps_per_execution}; {found.backend} on the "
        f"{found.kind}, replicas: {found.replicas}, host cores: {os.cpu_count()}"
    )
    for name, seconds in medians.items():
        rate = f"{run.global_batch / seconds:,.1f} images/s"
        print(f"{name:<7} {seconds:8.3f} s a step, {rate} (median of {count} device calls)")
    # JAX and TensorFlow compile a model for its first call: it takes that much longer.
    compiled = [name for name in medians if name != "OURS"]  # OURS runs what CACHED compiled
    took = [f"{n} {first[n] - medians[n] * run.steps_per_execution:.1f} s" for n in compiled]
    print("first call, compiling: " + ", ".join(took))
    for over, under, meaning in RATIOS:
        if over in medians and under in medians:
            print(f"{over}/{under} {medians[over] / medians[under]:.2f} ({meaning})")
    for name, why in skipped.items():
        print(f"not measured: {name}: {why}")
