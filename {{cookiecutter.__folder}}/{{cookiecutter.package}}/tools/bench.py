"""`bench input|train|compile`: what the input pipeline, a training step and JAX's compilation
cache cost on this machine, each against what it could be (docs/speed.md shows what each mode
prints). A mode times its variants in one process, taking turns (a noisy neighbour slows every
one alike), and prints their medians and ratios. TensorFlow and Keras load only when a mode
runs, so the runtime's modules that load them are imported inside the functions: `--help`
needs neither, and `bench train` runs where Keras runs on JAX alone.

input, over the training records (or photo-like JPEGs it writes, --synthetic): DN decodes
only, on every core, what this machine can do at all; DA adds the host's part of ours (a
resize, only for images not at size); OURS is the training pipeline as `train` builds it, with
the recipe's host augmentations; B1 the textbook Kaggle pipeline (decode, float32 / 255,
reshape, flip, in order). On image files, DN and OURS over the files and over records written
from them (DN-REC, OURS-REC). The first batch of a pass, which fills the buffers, is not timed.
The model mixes (mixing.py), crops and flips (augment.py), so the host decodes and batches, and
OURS should come close to DN with any of those on; switch RandAugment on (`--rand-augment 0.5`)
to see what a host augmentation costs.

train, with the batch, precision and steps per execution `train` would use: OURS is train's
step on its input pipeline; CACHED the same compiled model fed one cached batch (as arrays,
not through tf.data: all but OURS run without TensorFlow); UNMIXED that with MixUp and CutMix
off; BARE the keras-hub backbone under a plain head (pooling, dense); STOCK that as keras-hub
ships it, padding before every depthwise convolution (efficientnet_padding.py makes it "same"
at stride 1); APPS keras.applications' network of the same architecture. A device call that
compiles, the first, or starts OURS' input pipeline, is not timed.

compile: two folds' first training steps, each fold a new model as `train --fold all` builds
it, in a process with JAX's compilation cache (Config.compile_cache) off, then with it on.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import itertools
import math
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..runtime.backbone_choices import BACKBONES, weights
from ..runtime.config import Config
from ..runtime.data.kinds import Data
from ..runtime.errors import UserError, count_flag, named, whole_number
from ..runtime.learning import attention, plan
from ..runtime.platform import backend, startup_logs
from ..runtime.stages.run import Run, start, started
from .architectures import ARCHITECTURES

if TYPE_CHECKING:
    import keras

MODES = {
    "input": "images a second of the input pipeline against decoding alone and the textbook",
    "train": "a training step's seconds, and without the input pipeline, our layers or keras-hub",
    "compile": "two folds' first training steps under JAX, with its compilation cache off and on",
}
REPEATS = {"input": 5, "train": 3}  # where --repeats is not given
INPUT_RATIOS = (("OURS", "DN", ""), ("OURS", "DA", ""), ("OURS", "B1", ""))
FILE_RATIOS = (
    ("OURS", "DN", "files"), ("OURS-REC", "DN-REC", "records"),
    ("OURS-REC", "OURS", "records against files"),
)  # fmt: skip
STEP_VARIANTS = ("CACHED", "OURS", "UNMIXED", "BARE", "STOCK", "APPS")
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


def arguments(parser) -> None:
    parser.add_argument("mode", choices=list(MODES), metavar="MODE", help="one of below")
    parser.formatter_class = argparse.RawDescriptionHelpFormatter  # the lines as written
    parser.epilog = "modes:\n" + "\n".join(f"  {mode:<9}{about}" for mode, about in MODES.items())
    parser.epilog += "\ntrain, compile: --weights none builds a backbone without downloading it"
    defaults = ", ".join(f"{times} for {mode}" for mode, times in REPEATS.items())
    parser.add_argument(
        "--repeats", type=whole_number("bench --repeats", 1),
        help=f"input: passes of each pipeline; train: turns of each variant (default: {defaults})",
    )  # fmt: skip
    given = parser.add_argument_group("bench input")
    given.add_argument(
        "--synthetic", action="store_true",
        help="measure on photo-like JPEGs it writes at --image-size, not the records",
    )  # fmt: skip
    given.add_argument(
        "--image-folder", default="",
        help="measure on the image files under this folder (nested too), and on records of them",
    )  # fmt: skip
    count_flag(given, "bench input", "--images-per-pass", 2048, "images a pass")
    steps = parser.add_argument_group("bench train")
    count_flag(steps, "bench train", "--timed-steps", 5, "steps of each variant timed a turn")
    steps.add_argument(
        "--variants", type=chosen, default=",".join(STEP_VARIANTS),
        help=f"those to time, comma-separated (default: {','.join(STEP_VARIANTS)})",
    )  # fmt: skip


def command(args, run: Run) -> int:
    repeats = args.repeats or REPEATS.get(args.mode, 1)
    if args.mode == "input":
        with startup_logs.held_to_level():  # TensorFlow's start-up lines, held back
            import tensorflow  # noqa: F401
        input_rates(run, args.synthetic, args.image_folder, args.images_per_pass, repeats)
    elif args.mode == "train":
        with startup_logs.held_to_level():  # found before Keras loads: it picks the backend
            run = started(run, read=False)
        step_seconds(run, args.variants, args.timed_steps, repeats)
    else:
        compile_cache(run.cfg)
    return 0


def take_turns(measure, names, repeats: int, shown) -> dict:
    """The median of each variant's figures, `measure(name, turn)` giving a turn's, the variants
    taking turns `repeats` times; each pass's line shows each one's turn, as `shown` writes it."""
    figures: dict[str, list[float]] = {name: [] for name in names}
    for turn in range(repeats):
        now = {name: list(measure(name, turn)) for name in names}
        for name in names:
            figures[name] += now[name]
        said = (f"{name} {shown(statistics.median(now[name]))}" for name in names)
        print(f"pass {turn + 1}/{repeats}: " + ", ".join(said))
    return {name: statistics.median(values) for name, values in figures.items()}


def report(medians: dict, figure, ratios) -> None:
    """Each variant's median as `figure` writes it, then each ratio of two measured."""
    for name, value in medians.items():
        print(f"{name:<8} {figure(value)}")
    for over, under, meaning in ratios:
        if over in medians and under in medians:
            about = f" ({meaning})" if meaning else ""
            print(f"{over}/{under} {medians[over] / medians[under]:.2f}{about}")


def input_rates(run: Run | Config, synthetic=False, folder="", images=2048, repeats=5) -> dict:
    """Print bench input's table; returns each pipeline's median images/s."""
    run = started(run, on_accelerator=False, read=not (synthetic or folder))
    cfg = run.cfg
    on_files = folder or (not synthetic and run.data.trains_from == "images")
    made, batches, heading, ratios = (
        on_image_files(run, folder, images) if on_files else on_records(run, synthetic, images)
    )

    def rate(name: str, turn: int) -> list[float]:
        stream = iter(made[name]())
        next(stream)  # fills the buffers
        start = time.perf_counter()
        for _ in range(batches):
            next(stream)
        return [batches * cfg.batch_size / (time.perf_counter() - start)]

    medians = take_turns(rate, list(made), repeats, "{:.0f}".format)
    print(heading)
    report(medians, lambda rate: f"{rate:8.0f} images/s (median of {repeats})", ratios)
    return medians


def on_records(run: Run, synthetic: bool, images: int) -> tuple[dict, int, str, tuple]:
    """Each pipeline over the training records (or photo-like ones) as a function that builds
    it afresh, the batches a pass, the heading and the ratios."""
    import tensorflow as tf

    from ..runtime.data import records, steps

    cfg = run.cfg
    size, batch, image_of = cfg.image_size, cfg.batch_size, encoded(cfg)
    # Pixels resized only where not at --image-size, as a batch needs and as ours does on the host
    at_size = functools.partial(steps.image, cfg=cfg)
    pattern = run.places.in_data(cfg.train_files).split(",")[0]
    if not synthetic:
        files = tf.io.gfile.glob(pattern)
    else:  # written once under the output folder, then reused
        folder = run.places.output / f"bench-input/{size}x{size}-{images}"
        rng = np.random.default_rng(cfg.seed)
        jpegs = (
            {cfg.image_key: photo_like(rng, size), cfg.label_key: index % 2}
            for index in range(images)
        )
        files = written(cfg, folder, images, jpegs, f"{images} photo-like JPEGs at {size}x{size}")
    if not files:  # a folder mistyped must not measure made-up images instead
        raise UserError(
            f"no training records match {pattern} ({named('train_files')} in "
            f"{named('data_dir')}); give the folder that holds them, or measure with --synthetic"
        )
    for raw in tf.data.TFRecordDataset(files[0]).take(1):  # DN and B1 take them at size
        image = steps.decoded(image_of(raw))
        if tuple(image.shape[:2]) != (size, size):
            raise UserError(
                f"{files[0]}: images of {image.shape[1]}x{image.shape[0]}, not "
                f"{named('image_size')} {size}; the benchmark compares pipelines on "
                "images at that size: set it to theirs, or measure with --synthetic"
            )
    held = records.count(files)
    lengths = tf.data.TFRecordDataset(files).map(lambda one: tf.strings.length(image_of(one)))
    total = lengths.reduce(np.int64(0), lambda total, n: total + tf.cast(n, tf.int64))
    batches = max(1, min(images, held) // batch - 1)
    heading = (
        f"cores: {os.cpu_count()}, records: {held} in {len(files)} shards "
        f"({Path(files[0]).parent}), mean JPEG {float(total) / held / 1024:.1f} KiB, "
        f"{size}x{size}, batch {batch}, {batches} batches a pass"
    )

    def textbook(jpeg):  # as most Kaggle TPU notebooks write it
        image = tf.cast(tf.image.decode_jpeg(jpeg, channels=3), tf.float32) / 255.0
        return tf.image.random_flip_left_right(tf.reshape(image, [size, size, 3]))

    def decode_only(jpeg):
        return tf.ensure_shape(steps.decoded(jpeg), [size, size, 3])

    read = tf.data.TFRecordDataset(files, num_parallel_reads=tf.data.AUTOTUNE)
    made = {
        "DN": lambda: decoded_batches(read, image_of, decode_only, batch),
        "DA": lambda: decoded_batches(read, image_of, at_size, batch),
        "OURS": lambda: ours(files, run, batch, as_records=not run.data),
        "B1": lambda: decoded_batches(read, image_of, textbook, batch, ordered=True),
    }
    return made, batches, heading, INPUT_RATIOS


def on_image_files(run: Run, folder: str, wanted: int) -> tuple[dict, int, str, tuple]:
    """As on_records, over the first `wanted` training image files and over records written
    from them: the competition's, or every image under `folder`, listed with made-up labels in
    a CSV it writes, so the pipeline reads them as training does."""
    import pandas as pd
    import tensorflow as tf

    from ..runtime.data import competition_files, images, steps

    under = run.places.output / "bench-input"
    if folder:
        paths = sorted(set(competition_files.image_files(folder, "--image-folder").values()))
        own = under / f"{Path(folder).name}-files"
        own.mkdir(parents=True, exist_ok=True)
        names = [Path(path).relative_to(folder).as_posix() for path in paths]
        labels = [number % 2 for number in range(len(names))]
        pd.DataFrame({"image_id": names, "label": labels}).to_csv(own / "labels.csv", index=False)
        given = {"train_images": folder, "train_csv": str(own / "labels.csv"), "folds": 1}
        given["output_dir"] = str(own)  # not the output's folds.csv, of another run
        sources = {**run.sources, **dict.fromkeys(given, "flag")}
        run = start(dataclasses.replace(run.cfg, **given), sources, on_accelerator=False)
    run = started(run, on_accelerator=False)
    cfg, places = run.cfg, run.places
    paths = images.split_rows(cfg, places, "train_files")["path"].tolist()[:wanted]
    found_in = places.file("train_images")
    shards = under / f"{Path(found_in).name}-records-{len(paths)}"
    labels = images.labels_of(cfg, places, paths).tolist()
    examples = (
        {cfg.image_key: Path(path).read_bytes(), cfg.label_key: label}
        for path, label in zip(paths, labels, strict=True)
    )
    record_files = written(cfg, shards, len(paths), examples, f"{len(paths)} images as records")
    batch, size = cfg.batch_size, cfg.image_size
    batches = max(1, wanted // batch - 1)
    heading = (
        f"cores: {os.cpu_count()}, image files: {len(paths)} ({found_in}), mean file "
        f"{sum(os.path.getsize(path) for path in paths) / len(paths) / 1024:.1f} KiB, resized "
        f"to {size}x{size} where not at it, batch {batch}, {batches} batches a pass; records "
        f"of them: {len(record_files)} shards ({shards})"
    )
    files = tf.data.Dataset.from_tensor_slices(paths).repeat()
    at_size = functools.partial(steps.image, cfg=cfg)  # as on_records
    read = tf.data.TFRecordDataset(record_files, num_parallel_reads=tf.data.AUTOTUNE).repeat()
    made = {  # each endless, as ours is, so a pass may read the images more than once
        "DN": lambda: decoded_batches(files, tf.io.read_file, at_size, batch),
        "OURS": lambda: ours(paths, run, batch),
        "DN-REC": lambda: decoded_batches(read, encoded(cfg), at_size, batch),
        "OURS-REC": lambda: ours(record_files, run, batch, as_records=True),
    }
    return made, batches, heading, FILE_RATIOS


def photo_like(rng: np.random.Generator, size: int) -> bytes:
    """A JPEG that compresses like a photo: smooth colour regions, edges and some grain."""
    import tensorflow as tf
    from PIL import Image, ImageDraw, ImageFilter

    coarse = rng.integers(0, 256, (6, 6, 3), dtype=np.uint8)
    image = Image.fromarray(coarse).resize((size, size), Image.BICUBIC)
    draw = ImageDraw.Draw(image)
    for _ in range(12):
        box = sorted(rng.integers(0, size, 2)), sorted(rng.integers(0, size, 2))
        colour = tuple(int(c) for c in rng.integers(0, 256, 3))
        draw.ellipse([box[0][0], box[1][0], box[0][1], box[1][1]], fill=colour)
    image = image.filter(ImageFilter.GaussianBlur(1.5))
    grain = rng.normal(0, 9, (size, size, 3))
    pixels = np.clip(np.asarray(image, dtype=np.float32) + grain, 0, 255).astype(np.uint8)
    return tf.io.encode_jpeg(pixels, quality=90).numpy()


def written(cfg: Config, folder: Path, count: int, examples, what: str) -> list[str]:
    """The records in `folder`, written from `examples` in 8 shards unless `count` are there."""
    import tensorflow as tf

    from ..runtime.data import records
    from .shards import write_shards

    found = sorted(tf.io.gfile.glob(str(folder / "*.tfrec")))
    if found and records.count(found) == count:
        return found
    print(f"writing {what} to {folder}")
    return write_shards(str(folder), list(examples), 8, cfg.image_size)


def encoded(cfg: Config):
    import tensorflow as tf

    spec = {cfg.image_key: tf.io.FixedLenFeature([], tf.string)}
    return lambda record: tf.io.parse_single_example(record, spec)[cfg.image_key]


def decoded_batches(read, image_of, decode, batch: int, ordered: bool = False):
    import tensorflow as tf

    options = tf.data.Options()
    options.deterministic = ordered
    decoded = read.with_options(options).map(
        lambda item: decode(image_of(item)), num_parallel_calls=tf.data.AUTOTUNE
    )
    return decoded.batch(batch, True).prefetch(tf.data.AUTOTUNE)


def ours(files: list[str], run: Run, batch: int, image_dtype="uint8", as_records=False):
    """The training pipeline as `train` builds it, with the recipe's host augmentations;
    `as_records`: reading the shards it is given as records, as given (those bench writes)."""
    from ..runtime.data import pipeline, records
    from ..runtime.data.pipeline import host_augmentations

    if as_records:
        shards = records.Records(run.cfg, run.places, None)
        run = dataclasses.replace(run, data=Data("records", "records", None, shards, shards))
    augmentations = host_augmentations(run.cfg)
    return pipeline.for_training(
        run.data, files, run.cfg, batch, image_dtype, augmentations=augmentations
    )


def chosen(flag: str) -> tuple[str, ...]:
    """The variants --variants names, in STEP_VARIANTS' order (an argparse type)."""
    unknown = set(flag.split(",")) - set(STEP_VARIANTS)
    if unknown:
        raise UserError(
            f"--variants {','.join(sorted(unknown))}: no such variant; pick from "
            + ",".join(STEP_VARIANTS)
        )
    return tuple(name for name in STEP_VARIANTS if name in flag.split(","))


def step_seconds(
    run: Run | Config, variants: tuple[str, ...], steps: int = 5, repeats: int = 3
) -> dict:
    """Print each variant's seconds a step and their ratios; returns the medians by variant.
    `variants` picks some of STEP_VARIANTS, in that order; the model and its recipe are
    model.py's."""
    run, planned, files, no_records = the_run(run)
    import keras

    cfg, found, per_call = run.cfg, run.accelerator, planned.steps_per_execution
    keras.utils.set_random_seed(cfg.seed)
    calls = max(1, math.ceil(steps / per_call))  # timed device calls a turn
    per_turn = (calls + 1) * per_call
    training = None
    if files and "OURS" in variants:
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
    from ..runtime.learning import backbones

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
    from ..runtime.learning import model, recipe

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
    import keras
    from keras import layers

    from ..runtime.learning import backbones, efficientnet_padding

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
    import keras

    from ..runtime.learning import averaging

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
    import keras

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
