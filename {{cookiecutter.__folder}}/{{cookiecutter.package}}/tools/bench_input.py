"""`bench-input`: how fast the input pipeline serves training images, against the limit.

Four pipelines over the same training records, in one process, taking turns, each timed
`repeats` times (medians; the first batch of each pass, which fills buffers, is not timed):

  DN    decode only, on every core: what this machine can do at all
  DA    decode plus the host's part of ours (a resize, only for images not at size)
  OURS  the training pipeline exactly as `train` builds it (pipeline.for_training), with
        the recipe's host augmentations (model.py: RandAugment, if on)
  B1    the textbook Kaggle pipeline: decode, cast to float32 and divide by 255, reshape,
        flip, batch, prefetch, in order

On the configured training records, or with `--synthetic` on photo-like
JPEGs at --image-size that it writes first. The model mixes, crops and flips (augment.py), so
the host decodes and batches, and OURS should come close to DN with any of those on; switch
RandAugment on (`--rand-augment 0.5`) to see what a host augmentation costs.

On a competition's image files (the images-and-CSV data source, or any folder of images
given by --image-folder), the same turns over the files and over records written from the
same images: each pipeline against reading and decoding those files (or records) alone,
and records against files, the faster path for big data.
"""

from __future__ import annotations

import dataclasses
import os
import statistics
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..runtime.config import FIELDS, Config, places_of
from ..runtime.errors import UserError, count_flag, named

if TYPE_CHECKING:
    import numpy as np

# TensorFlow and the pipeline are loaded by each function that uses them: `bench-input --help`
# needs neither.
VARIANTS = ("DN", "DA", "OURS", "B1")
# On image files: decoding alone and ours, over the files and over records of the same images.
FILE_VARIANTS = ("DN", "OURS", "DN-REC", "OURS-REC")


def photo_like(rng: np.random.Generator, size: int) -> bytes:
    """A JPEG that compresses like a photo: smooth colour regions, edges and some grain."""
    import numpy as np
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


def synthetic_records(cfg: Config, images: int, shards: int = 8) -> list[str]:
    """`images` photo-like JPEG records at --image-size in `shards` shards, written once
    under the output folder and reused."""
    import numpy as np
    import tensorflow as tf

    from .shards import write_shards

    folder = places_of(cfg).output / f"bench-input/{cfg.image_size}x{cfg.image_size}-{images}"
    found = sorted(tf.io.gfile.glob(str(folder / "*.tfrec")))
    if len(found) == shards:
        return found
    print(f"writing {images} photo-like JPEGs at {cfg.image_size}x{cfg.image_size} to {folder}")
    rng = np.random.default_rng(cfg.seed)
    examples = [
        {cfg.image_key: photo_like(rng, cfg.image_size), cfg.label_key: index % 2}
        for index in range(images)
    ]
    return write_shards(str(folder), examples, shards, cfg.image_size)


def pipelines(files: list[str], cfg: Config, batch: int) -> dict:
    """Each variant as a function that builds its dataset afresh."""
    import tensorflow as tf

    from ..runtime.data import pipeline, steps
    from ..runtime.learning.model import host_augmentations  # as train runs them

    auto = tf.data.AUTOTUNE
    spec = {cfg.image_key: tf.io.FixedLenFeature([], tf.string)}
    unordered = tf.data.Options()
    unordered.deterministic = False
    size = cfg.image_size

    def image_of(record):
        return tf.io.parse_single_example(record, spec)[cfg.image_key]

    def batched(decode, options=unordered):
        """The records, each decoded by `decode` on every core, batched and prefetched."""
        read = tf.data.TFRecordDataset(files, num_parallel_reads=auto).with_options(options)
        return read.map(decode, num_parallel_calls=auto).batch(batch, True).prefetch(auto)

    def decode_only(record):
        return tf.ensure_shape(steps.decoded(image_of(record)), [size, size, 3])

    def decode_and_host_steps(record):
        return steps.to_size(steps.decoded(image_of(record)), size)

    def textbook(record):  # as most Kaggle TPU notebooks write it
        image = tf.image.decode_jpeg(image_of(record), channels=3)
        image = tf.cast(image, tf.float32) / 255.0
        image = tf.reshape(image, [size, size, 3])
        return tf.image.random_flip_left_right(image)

    return {
        "DN": lambda: batched(decode_only),
        "DA": lambda: batched(decode_and_host_steps),
        "OURS": lambda: pipeline.for_training(
            files, cfg, batch, augmentations=host_augmentations(cfg)
        ),
        "B1": lambda: batched(textbook, tf.data.Options()),  # in order, as it is written
    }


def images_per_second(make, batches: int, batch: int) -> float:
    """Images per second over `batches` batches, after a first one that fills the buffers."""
    stream = iter(make())
    next(stream)
    start = time.perf_counter()
    for _ in range(batches):
        next(stream)
    return batches * batch / (time.perf_counter() - start)


def timed(made: dict, names: tuple[str, ...], batches: int, batch: int, repeats: int) -> dict:
    """The median images/s of each pipeline, taking turns: a noisy neighbour slows every one
    alike."""
    runs: dict[str, list[float]] = {name: [] for name in names}
    for repeat in range(repeats):
        for name in names:
            runs[name].append(images_per_second(made[name], batches, batch))
        print(f"pass {repeat + 1}/{repeats}: " + ", ".join(f"{n} {runs[n][-1]:.0f}" for n in names))
    return {name: statistics.median(values) for name, values in runs.items()}


def check_size(path: str, cfg: Config) -> None:
    """DN and B1 take images at --image-size, as their Kaggle originals do."""
    import tensorflow as tf

    from ..runtime.data import steps

    for raw in tf.data.TFRecordDataset(path).take(1):
        image = steps.decoded(tf.io.parse_single_example(
            raw, {cfg.image_key: tf.io.FixedLenFeature([], tf.string)})[cfg.image_key])  # fmt: skip
        if tuple(image.shape[:2]) != (cfg.image_size, cfg.image_size):
            raise UserError(
                f"{path}: images of {image.shape[1]}x{image.shape[0]}, not "
                f"{named('image_size')} {cfg.image_size}; the benchmark compares pipelines on "
                "images at that size: set it to theirs, or measure with --synthetic"
            )


def bench(cfg: Config, synthetic: bool = False, images: int = 2048, repeats: int = 5) -> dict:
    """Print the table; returns the median images/s of each variant."""
    import numpy as np
    import tensorflow as tf

    from ..runtime.data import records

    pattern = places_of(cfg).in_data(cfg.train_files).split(",")[0]
    files = synthetic_records(cfg, images) if synthetic else tf.io.gfile.glob(pattern)
    if not files:  # a folder mistyped must not measure made-up images instead
        raise UserError(
            f"no training records match {pattern} ({named('train_files')} in "
            f"{named('data_dir')}); give the folder that holds them, or measure with --synthetic"
        )
    check_size(files[0], cfg)
    records_held = records.count(files)
    batch = cfg.batch_size
    batches = max(1, min(images, records_held) // batch - 1)
    spec = {cfg.image_key: tf.io.FixedLenFeature([], tf.string)}
    lengths = tf.data.TFRecordDataset(files).map(
        lambda record: tf.strings.length(tf.io.parse_single_example(record, spec)[cfg.image_key])
    )
    mean_jpeg = float(lengths.reduce(np.int64(0), lambda total, n: total + tf.cast(n, tf.int64)))
    mean_jpeg /= records_held
    medians = timed(pipelines(files, cfg, batch), VARIANTS, batches, batch, repeats)
    print(
        f"cores: {os.cpu_count()}, records: {records_held} in {len(files)} shards "
        f"({Path(files[0]).parent}), mean JPEG {mean_jpeg / 1024:.1f} KiB, "
        f"{cfg.image_size}x{cfg.image_size}, batch {batch}, {batches} batches a pass"
    )
    for name in VARIANTS:
        print(f"{name:<5} {medians[name]:8.0f} images/s (median of {repeats})")
    for other in ("DN", "DA", "B1"):
        print(f"OURS/{other} {medians['OURS'] / medians[other]:.2f}")
    return medians


def image_files(
    cfg: Config, folder: str, images_wanted: int, written: Path
) -> tuple[Config, list[str]]:
    """The config that reads them and the first `images_wanted` training image files: the
    competition's (its training folds), or every image under `folder`, listed with made-up
    labels in a CSV the benchmark writes under `written`, so the pipeline reads them exactly
    as training does."""
    import pandas as pd

    from ..runtime.data import competition_files, images, source

    if folder:
        found = competition_files.image_files(folder, "--image-folder")
        paths = sorted(set(found.values()))
        own = written / f"{Path(folder).name}-files"
        own.mkdir(parents=True, exist_ok=True)
        names = [Path(path).relative_to(folder).as_posix() for path in paths]
        labels = [number % 2 for number in range(len(names))]
        pd.DataFrame({"image_id": names, "label": labels}).to_csv(own / "labels.csv", index=False)
        given = {"train_images": folder, "train_csv": str(own / "labels.csv"), "folds": 1}
        given["output_dir"] = str(own)  # not the output's folds.csv, of another run
        sources = {**cfg.sources, **dict.fromkeys(given, "flag")}
        cfg = dataclasses.replace(cfg, **given, sources=sources)
    cfg, _ = source.resolved(cfg)
    paths = images.split_rows(cfg, "train_files")["path"].tolist()
    return cfg, paths[:images_wanted]


def records_of(
    cfg: Config, paths: list[str], written: Path, shards: int = 8
) -> tuple[Config, list[str]]:
    """Records of the same images and labels, written under `written` (again only when the
    count changed), and the config that reads them as records."""
    import tensorflow as tf

    from ..runtime.data import images, records
    from .shards import write_shards

    folder = written / f"{Path(places_of(cfg).file('train_images')).name}-records-{len(paths)}"
    found = sorted(tf.io.gfile.glob(str(folder / "*.tfrec")))
    if not found or records.count(found) != len(paths):
        print(f"writing {len(paths)} images as records to {folder}")
        labels = images.labels_of(cfg, paths).tolist()
        examples = [
            {cfg.image_key: Path(path).read_bytes(), cfg.label_key: label}
            for path, label in zip(paths, labels, strict=True)
        ]
        found = write_shards(str(folder), examples, shards, cfg.image_size)
    # Read as records: the images and CSV no longer asked for, as a flag or a changed value would
    plain = {name: FIELDS[name].default for name in ("train_csv", "train_images")}
    untyped = {k: v for k, v in cfg.sources.items() if k not in plain}
    as_records = dataclasses.replace(cfg, **plain, sources={**untyped, "train_files": "flag"})
    return as_records, found


def file_pipelines(paths: list[str], cfg: Config, record_files, records_cfg, batch) -> dict:
    """Reading and decoding alone (resized where not at --image-size, as a batch needs), on
    every core, unordered, and ours, over the files and over the records; each endless, as
    ours is, so a pass may read the images more than once."""
    import tensorflow as tf

    from ..runtime.data import pipeline, steps
    from ..runtime.learning.model import host_augmentations  # as train runs them

    auto = tf.data.AUTOTUNE
    unordered = tf.data.Options()
    unordered.deterministic = False
    spec = {cfg.image_key: tf.io.FixedLenFeature([], tf.string)}

    def decode(encoded):
        return steps.to_size(steps.decoded(encoded), cfg.image_size)

    def alone(read: tf.data.Dataset, encoded) -> tf.data.Dataset:
        read = read.repeat().with_options(unordered)
        decoded = read.map(lambda item: decode(encoded(item)), num_parallel_calls=auto)
        return decoded.batch(batch, True).prefetch(auto)

    def records_alone():
        read = tf.data.TFRecordDataset(record_files, num_parallel_reads=auto)
        return alone(read, lambda record: tf.io.parse_single_example(record, spec)[cfg.image_key])

    return {
        "DN": lambda: alone(tf.data.Dataset.from_tensor_slices(paths), tf.io.read_file),
        "OURS": lambda: pipeline.for_training(
            paths, cfg, batch, augmentations=host_augmentations(cfg)
        ),
        "DN-REC": records_alone,
        "OURS-REC": lambda: pipeline.for_training(
            record_files, records_cfg, batch, augmentations=host_augmentations(records_cfg)
        ),
    }


def bench_files(cfg: Config, folder: str, images_wanted: int, repeats: int) -> dict:
    """Print the table on image files and on records of them; returns the median images/s."""
    written = places_of(cfg).output / "bench-input"
    cfg, paths = image_files(cfg, folder, images_wanted, written)
    records_cfg, record_files = records_of(cfg, paths, written)
    batch = cfg.batch_size
    batches = max(1, images_wanted // batch - 1)
    made = file_pipelines(paths, cfg, record_files, records_cfg, batch)
    medians = timed(made, FILE_VARIANTS, batches, batch, repeats)
    mean_size = sum(os.path.getsize(path) for path in paths) / len(paths)
    read = places_of(cfg).file("train_images")  # the folder image_files found them in
    print(
        f"cores: {os.cpu_count()}, image files: {len(paths)} ({read}), mean file "
        f"{mean_size / 1024:.1f} KiB, resized to {cfg.image_size}x{cfg.image_size} "
        f"where not at it, batch {batch}, {batches} batches a pass; records of them: "
        f"{len(record_files)} shards ({Path(record_files[0]).parent})"
    )
    for name in FILE_VARIANTS:
        print(f"{name:<8} {medians[name]:8.0f} images/s (median of {repeats})")
    print(f"OURS/DN {medians['OURS'] / medians['DN']:.2f} (files)")
    print(f"OURS-REC/DN-REC {medians['OURS-REC'] / medians['DN-REC']:.2f} (records)")
    print(f"OURS-REC/OURS {medians['OURS-REC'] / medians['OURS']:.2f} (records against files)")
    return medians


def arguments(parser) -> None:
    parser.add_argument(
        "--synthetic",
        action="store_true",
        help="measure on photo-like JPEGs it writes at --image-size, not the records",
    )
    parser.add_argument(
        "--image-folder",
        default="",
        help="measure on the image files under this folder (nested too), and on records of them",
    )
    count_flag(parser, "bench-input", "--images-per-pass", 2048, "images a pass")
    count_flag(parser, "bench-input", "--repeats", 5, "passes of each pipeline")


def command(args, cfg: Config, found=None) -> int:
    from ..runtime.data import source

    if args.image_folder or (not args.synthetic and source.of(cfg).kind == "images"):
        bench_files(cfg, args.image_folder, args.images_per_pass, args.repeats)
    else:
        bench(cfg, args.synthetic, args.images_per_pass, args.repeats)
    return 0
