"""`bench train`, with the batch, precision and steps per execution `train` would use: OURS is
train's step on its input pipeline; CACHED the same model fed one cached batch (as arrays: all
but OURS run without TensorFlow); UNMIXED that without MixUp and CutMix; BARE the backbone under
a plain head; STOCK that as keras-hub ships it (efficientnet_padding.py); APPS
keras.applications' network. A call that compiles or starts OURS' pipeline is not timed.
`bench compile`: two folds' first training steps, JAX's compilation cache off, then on.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import multiprocessing
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor

import keras
import numpy as np
from keras import layers

from ..runtime.backbone_choices import BACKBONES, weights
from ..runtime.config import Config
from ..runtime.errors import UserError
from ..runtime.learning import (
    attention,
    averaging,
    backbones,
    efficientnet_padding,
    model,
    plan,
    recipe,
)
from ..runtime.platform import backend
from ..runtime.stages.run import Run, started
from .architectures import ARCHITECTURES
from .bench import REPEATS, report, take_turns

STEP_RATIOS = (  # numerator, denominator, what the ratio tells
    ("OURS", "CACHED", "the input pipeline"),
    ("CACHED", "UNMIXED", "MixUp and CutMix in the model"),
    ("CACHED", "BARE", "model.py's uint8 input, layers and metrics against a plain model"),
    ("BARE", "APPS", "keras-hub's network against keras.applications'"),
    ("STOCK", "APPS", "keras-hub's network as it ships"),
    ("STOCK", "BARE", "what efficientnet_padding.py saves"),
)
IMAGENET_MEAN, IMAGENET_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
FOLDS = 2  # bench compile's


def command(args, run: Run) -> None:
    if args.mode == "compile":
        compile_cache(run.cfg)
    else:
        step_seconds(run, args.variants, args.timed_steps, args.repeats or REPEATS["train"])


def step_seconds(
    run: Run | Config, variants: tuple[str, ...], steps: int = 5, repeats: int = 3
) -> dict:
    """Print each variant's seconds a step and their ratios; returns the medians by variant.
    `variants` picks some of STEP_VARIANTS, in that order; the model and its recipe are
    model.py's."""
    run, planned, files, no_records = the_run(run)

    cfg, found, per_call = run.cfg, run.accelerator, planned.steps_per_execution
    keras.utils.set_random_seed(cfg.seed)
    calls = max(1, math.ceil(steps / per_call))  # timed device calls a turn
    per_turn = (calls + 1) * per_call
    training = None
    if files and "OURS" in variants:  # TensorFlow's tf.data: imported where it is installed
        from .bench_input import ours

        training = ours(files, run, planned.global_batch, found.image_dtype)
    fits, skipped = {}, {}
    with found.scope():
        keras.mixed_precision.set_global_policy(planned.precision)
        backbone = backbone_for(cfg, planned.precision)
        cached = cached_batch(cfg, planned, training, found.image_dtype)
        if {"CACHED", "OURS"} & set(variants):
            net = our_model(cfg, found, planned, per_turn, backbone)
            fits["CACHED"] = (net, cached)
            if training is not None:
                fits["OURS"] = (net, training)
            elif "OURS" in variants:
                skipped["OURS"] = f"no training records to read ({no_records})"
        mixes = (cfg.mixup or cfg.cutmix) and cfg.mix_probability
        if "UNMIXED" in variants and not mixes:
            skipped["UNMIXED"] = "mixing is off: --mixup or --cutmix switches it on"
        elif "UNMIXED" in variants:
            # A network of its own: under JAX, fit frees the variables of the model it trains.
            unmixed = dataclasses.replace(cfg, mix_probability=0.0)
            fits["UNMIXED"] = (our_model(unmixed, found, planned, per_turn), cached)
        floats = cached[0].astype(np.float32)
        classes = np.random.default_rng(cfg.seed).integers(0, cfg.num_classes, len(floats))
        for name, model in plain_variants(cfg, backbone.model, variants, skipped).items():
            adam = keras.optimizers.Adam(1e-4)
            model.compile(adam, "sparse_categorical_crossentropy", steps_per_execution=per_call)
            fits[name] = (model, (floats, classes))
        fits = {name: fits[name] for name in variants if name in fits}
        medians, first = step_turns(fits, calls, per_call, repeats)
    batch = planned.global_batch
    print(
        f"{cfg.backbone} ({backbone.source}) at {cfg.image_size}x{cfg.image_size}, global batch "
        f"{batch}, {planned.precision}, steps per execution: {per_call}; {found.backend} "
        f"on the {found.kind}, replicas: {found.replicas}, host cores: {os.cpu_count()}"
    )
    # JAX and TensorFlow compile a model for its first call: it takes that much longer.
    compiled = [name for name in medians if name != "OURS"]  # OURS runs what CACHED compiled
    took = [f"{n} {first[n] - medians[n] * per_call:.1f} s" for n in compiled]
    print("first call, compiling: " + ", ".join(took))
    figure = "{:8.3f} s a step, {:,.1f} images/s (median of {} device calls)".format
    report(medians, lambda seconds: figure(seconds, batch / seconds, repeats * calls), STEP_RATIOS)
    for name, why in skipped.items():
        print(f"not measured: {name}: {why}")
    return medians


def the_run(run: Run | Config) -> tuple[Run, plan.Plan, list[str], str]:
    """The run on its accelerator, found first (it picks Keras' backend), with its data as
    train reads it; its plan, the training files, and why none (or "")."""
    run = started(run, read=False)
    cfg, found = run.cfg, run.accelerator
    if not backend.tensorflow_installed():
        problem = "no TensorFlow installed, whose tf.data reads them"
    else:
        from ..runtime.stages import preflight, training_checks

        try:
            run = started(run)
        except UserError as error:
            problem = str(error)
        else:
            checked = preflight.check(run, "preview", training=training_checks.CHECKS)
            if checked.plan:  # made from the training files, once they are checked
                return run, checked.plan.value, checked.train.value.files, ""
            problem = "; ".join(checked.problems or ["no training records"])
    steps, note = plan.steps_per_execution(found, cfg.steps_per_execution, sys.maxsize)
    precision = found.precision(cfg.precision)
    planned = plan.Plan(found.global_batch(cfg.batch_size), 0, precision, steps, note)
    return run, planned, [], problem


def backbone_for(cfg: Config, precision: str):
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


def our_model(cfg: Config, device, planned: plan.Plan, steps: int, backbone=None):
    """model.py's model, compiled as train compiles it (recipe.py) for `steps` steps."""
    backbone = backbone or backbone_for(cfg, planned.precision)
    net = model.build_model(cfg, backbone, device.image_dtype)
    each = planned.steps_per_execution
    recipe.compile_model(net, cfg, device.replicas, steps, steps_per_execution=each)
    return net


def cached_batch(cfg: Config, planned: plan.Plan, training, image_dtype: str) -> tuple:
    """One batch of the pipeline's, or of random pixels without records."""
    if training is not None:
        images, labels = next(iter(training))
        return np.asarray(images), np.asarray(labels)
    rng = np.random.default_rng(cfg.seed)
    shape = (planned.global_batch, cfg.image_size, cfg.image_size, 3)
    images = rng.integers(0, 256, shape, dtype=np.uint8).astype(image_dtype)
    classes = rng.integers(0, cfg.num_classes, planned.global_batch)
    labels = np.eye(cfg.num_classes, dtype=np.float32)[classes] if cfg.multi_label else classes
    return images, labels.astype(np.float32 if cfg.multi_label else np.int32)


def plain_variants(cfg: Config, loaded: keras.Model, variants, skipped: dict) -> dict:
    """Those of BARE, STOCK and APPS asked for that can be built (uncompiled), each its network
    under global pooling and a dense softmax; why not, where not, into `skipped`."""

    def another() -> keras.Model:  # as keras-hub builds it (clone_model would copy our changes)
        return type(loaded).from_config(loaded.get_config())

    def plain(network: keras.Model, name: str) -> keras.Model:
        backbones.synchronize_batch_statistics(network)  # as ours
        inputs = keras.Input((cfg.image_size, cfg.image_size, 3), name="image")
        names = network.input if isinstance(network.input, dict) else None
        x = network({next(iter(names)): inputs} if names else inputs)
        two_d = len(x.shape) == 4  # a convolutional network's map; else a transformer's tokens
        x = (layers.GlobalAveragePooling2D if two_d else layers.GlobalAveragePooling1D)()(x)
        outputs = layers.Dense(cfg.num_classes, "softmax", dtype="float32")(x)
        return keras.Model(inputs, outputs, name=name)

    plainly, title = {}, BACKBONES[cfg.backbone].title
    if "BARE" in variants:
        plainly["BARE"] = plain(backbones.prepared(another()), "bare")
    stock = another() if "STOCK" in variants else None
    if stock is not None and efficientnet_padding.padded_at_stride_one(stock):
        plainly["STOCK"] = plain(stock, "stock")
    elif stock is not None:
        skipped["STOCK"] = (
            f"{title} has no stride-1 depthwise convolution padded beforehand: "
            "efficientnet_padding.py changes nothing"
        )
    network = ARCHITECTURES.get(cfg.backbone, ("", {}, ""))[2]
    if "APPS" in variants and network:
        size = (cfg.image_size, cfg.image_size, 3)
        apps = getattr(keras.applications, network)(
            include_top=False, weights=None, input_shape=size
        )
        plainly["APPS"] = plain(apps, "applications")
    elif "APPS" in variants:
        skipped["APPS"] = f"keras.applications has no network of {title}'s"
    return plainly


def step_turns(fits: dict, calls: int, steps_per_call: int, repeats: int) -> tuple[dict, dict]:
    """Fit each variant in turn, `repeats` times, `calls` timed device calls a turn, after an
    untimed one where it compiles (the first turn) or starts the input pipeline (OURS): the
    median seconds a step, and each variant's first call (compiling)."""
    first = {}

    def measure(name: str, turn: int):
        model, data = fits[name]
        untimed = 1 if turn == 0 or not isinstance(data, tuple) else 0
        ends = fit_turn(model, data, (calls + untimed) * steps_per_call)
        seconds = np.diff(ends)[untimed:] / steps_per_call
        if turn == 0:  # a first pass can take minutes: say how it goes
            first[name] = ends[1] - ends[0]
            print(f"{name}: first call {first[name]:.1f} s, then {seconds[-1]:.3f} s a step")
        return seconds

    return take_turns(measure, list(fits), repeats, "{:.3f} s".format), first


def fit_turn(model: keras.Model, data, steps: int) -> list[float]:
    """Fit `steps` steps; when each device call ended, after the fit's start. Keras reads a
    call's loss back before it calls on_train_batch_end, so the call has finished by then.
    One batch (a tuple) is fed over and over: under TensorFlow as a tf.data dataset; under JAX
    as the arrays themselves, put on the device once where one device trains (DataParallel
    splits them over several itself), so neither tf.data nor a copy from the host each step."""
    ends: list[float] = []
    timer = keras.callbacks.LambdaCallback(
        on_train_begin=lambda logs: ends.append(time.perf_counter()),
        on_train_batch_end=lambda batch, logs: ends.append(time.perf_counter()),
    )
    if isinstance(data, tuple) and keras.backend.backend() == "tensorflow":
        import tensorflow as tf

        data = tf.data.Dataset.from_tensors(data).repeat()
    elif isinstance(data, tuple):
        import jax

        batch = jax.device_put(data) if keras.distribution.distribution() is None else data
        data = (batch for _ in itertools.count())
    model.fit(data, epochs=1, steps_per_epoch=steps, callbacks=[timer], verbose=0, shuffle=False)
    averaging.unshared(model)  # for its next turn, under JAX
    return ends


def compile_cache(cfg: Config) -> dict[str, list[tuple[float, float]]]:
    """Each cache setting's folds' first and second steps' seconds, each setting in a process
    of its own (JAX reads the cache folder once), spawned with Keras on JAX; prints them and
    their ratios."""
    firsts, spawn = {}, multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory(prefix="bench-compile-") as scratch:
        for cache in ("off", "on"):
            print(f"--- compile cache {cache}: {FOLDS} folds in one process", flush=True)
            # The settings alone: the child finds the data and its places again.
            settings = dataclasses.replace(
                cfg, backend="jax", compile_cache=cache == "on", output_dir=f"{scratch}/{cache}"
            )
            with ProcessPoolExecutor(
                1, mp_context=spawn, initializer=backend.use, initargs=("jax",)
            ) as child:
                firsts[cache] = child.submit(first_steps, settings).result()
    print(f"first training step of each fold, Keras on JAX, {cfg.backbone} at {cfg.image_size}px")
    print("(beyond: the first step less the second, what tracing and compiling took)")
    print("cache  fold 1     fold 2     fold 2/fold 1  beyond: fold 1   fold 2   fold 2/fold 1")
    for cache, ((first, then), (second, again)) in firsts.items():
        print(
            f"{cache:<5}  {first:7.2f} s  {second:7.2f} s  {second / first:13.2f}  "
            f"{first - then:15.2f} s {second - again:6.2f} s  {(second - again) / (first - then):.2f}"
        )
    return firsts


def first_steps(cfg: Config) -> list[tuple[float, float]]:
    """Each fold's first and second device calls' seconds in this process (a step each, or
    steps_per_execution): a new model, built, compiled and fit as train does it, on one
    cached batch. The accelerator keeps compiled programs in the output, if asked."""
    run, planned, _, _ = the_run(cfg)

    cfg, found, per_call = run.cfg, run.accelerator, planned.steps_per_execution
    batch = cached_batch(cfg, planned, None, found.image_dtype)
    firsts = []
    for fold in range(FOLDS):
        keras.utils.set_random_seed(cfg.seed)
        with found.scope():
            keras.mixed_precision.set_global_policy(planned.precision)
            net = our_model(cfg, found, planned, 2 * per_call)  # one call compiles; one runs
            ends = fit_turn(net, batch, 2 * per_call)
        first, then = ends[1] - ends[0], ends[2] - ends[1]  # device calls of equal steps
        firsts.append((first, then))
        print(f"fold {fold + 1}: first step {first:.2f} s, then {then / per_call:.3f} s a step")
    return firsts
