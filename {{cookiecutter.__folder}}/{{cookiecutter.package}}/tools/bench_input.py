"""`bench input`, over the training records (or photo-like JPEGs it writes, --synthetic), or
image files and records written from them (-REC): DN decodes only, on every core; DA adds the
host's resize; OURS is `train`'s pipeline with the host's augmentations; B1 the textbook Kaggle
pipeline (decode, float32 / 255, reshape, flip). docs/speed.md says what each ratio tells. The
first batch of a pass, which fills the buffers, is not timed.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
import tensorflow as tf
from PIL import Image, ImageDraw, ImageFilter

from ..runtime.config import Config
from ..runtime.data import competition_files, images, pipeline, records, steps
from ..runtime.data.kinds import Data
from ..runtime.errors import UserError, named
from ..runtime.stages.run import Run, start, started
from .bench import REPEATS, report, take_turns
from .shards import write_shards

INPUT_RATIOS = (("OURS", "DN", ""), ("OURS", "DA", ""), ("OURS", "B1", ""))
FILE_RATIOS = (
    ("OURS", "DN", "files"), ("OURS-REC", "DN-REC", "records"),
    ("OURS-REC", "OURS", "records against files"),
)  # fmt: skip


def command(args, run: Run) -> None:
    repeats = args.repeats or REPEATS["input"]
    input_rates(run, args.synthetic, args.image_folder, args.images_per_pass, repeats)


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
    found = sorted(tf.io.gfile.glob(str(folder / "*.tfrec")))
    if found and records.count(found) == count:
        return found
    print(f"writing {what} to {folder}")
    return write_shards(str(folder), list(examples), 8, cfg.image_size)


def encoded(cfg: Config):
    spec = {cfg.image_key: tf.io.FixedLenFeature([], tf.string)}
    return lambda record: tf.io.parse_single_example(record, spec)[cfg.image_key]


def decoded_batches(read, image_of, decode, batch: int, ordered: bool = False):
    options = tf.data.Options()
    options.deterministic = ordered
    decoded = read.with_options(options).map(
        lambda item: decode(image_of(item)), num_parallel_calls=tf.data.AUTOTUNE
    )
    return decoded.batch(batch, True).prefetch(tf.data.AUTOTUNE)


def ours(files: list[str], run: Run, batch: int, image_dtype="uint8", as_records=False):
    """The training pipeline as `train` builds it, with the recipe's host augmentations;
    `as_records`: reading the shards it is given as records, as given (those bench writes)."""
    if as_records:
        shards = records.Records(run.cfg, run.places, None)
        run = dataclasses.replace(run, data=Data("records", "records", None, shards, shards))
    augmentations = pipeline.host_augmentations(run.cfg)
    return pipeline.for_training(
        run.data, files, run.cfg, batch, image_dtype, augmentations=augmentations
    )
