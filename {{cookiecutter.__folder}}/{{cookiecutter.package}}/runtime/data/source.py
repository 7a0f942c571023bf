"""Where a run's examples come from: TFRecord files (a folder, Kaggle's input, a gs://
bucket), a competition's own images and CSV (images.py), or a TensorFlow Datasets set
(`--data-dir tfds:NAME`, tfds_sets.py), each serving examples as the records' features:
`resolved(cfg)`, every command's first step, picks one for training and one for testing."""

from __future__ import annotations

import dataclasses
import os

import tensorflow as tf

from ..config import Config, carrying, inputs_of, places_of, reading, reads, resolved_for
from ..platform import paths
from ..platform.files import MANIFEST
from . import records


def reader(cfg: Config, kind: str):
    """The reader of one kind of data, imported only where the run reads it (config.reads)."""
    if reads(cfg, "tfds") and kind == "tfds":
        from .tfds_sets import TfdsSet

        return TfdsSet()
    if reads(cfg, "images") and kind == "images":
        from .images import CompetitionImages

        return CompetitionImages(cfg.window)
    return records.Records()


def of(cfg: Config, field: str = "train_files"):
    """The reader of a split (`field`), as `resolved` chose it (else chosen now)."""
    found = inputs_of(cfg)
    kind = found.tests_from if field == "test_files" else found.trains_from
    return reader(cfg, kind or chosen(paths.placed(cfg), field))


def chosen(cfg: Config, field: str = "train_files") -> str:
    """Which source a split reads, looked at on disk. Test images given by a flag, or in a test
    folder with no test records beside it (a code competition's rerun), are read as files; so
    are a competition's images and CSV given by a flag, or in a data folder of no records."""
    if field == "test_files" and reads_test_images(cfg):
        return "images"
    if places_of(cfg).data.startswith("tfds:"):
        return "tfds"
    typed = inputs_of(cfg).typed
    if {"train_csv", "train_images"} & typed:
        return "images"
    if "train_files" in typed:  # before the CSV's place is found: a Kaggle input, perhaps absent
        return "records"
    csv, images = places_of(cfg).file("train_csv"), places_of(cfg).file("train_images")
    on_disk = "://" not in csv and os.path.isfile(csv) and os.path.isdir(images)
    if not on_disk or os.path.exists(places_of(cfg).in_data(MANIFEST)):
        return "records"
    return "records" if records_there(cfg, "train_files") else "images"


def records_there(cfg: Config, field: str) -> bool:
    """Whether the records' pattern of a split matches any file (a bucket's too)."""
    return any(tf.io.gfile.glob(part) for part in places_of(cfg).file(field).split(","))


def reads_test_images(cfg: Config) -> bool:
    """Whether the test set is read as image files, whatever trains: see `chosen`."""
    typed = inputs_of(cfg).typed
    if "test_images" in typed:
        return True
    if "test_files" in typed or places_of(cfg).data.startswith("tfds:"):
        return False
    folder = places_of(cfg).file("test_images")  # read where no test records are beside it
    return "://" not in folder and os.path.isdir(folder) and not records_there(cfg, "test_files")


def resolved(cfg: Config) -> tuple[Config, dict | None]:
    """The config with what the data says for the fields the user did not give, and what it
    said (None: records without a manifest); the sources chosen once, carried on the config."""
    found = inputs_of(cfg)
    if found.trains_from:
        return cfg, found.said
    # The places as given (those the command found, unless a value changed since) choose the
    # source and lead to what the data says; where it fills in a field, they are found again.
    cfg = paths.placed(cfg)
    given = dataclasses.replace(found, made_for=resolved_for(cfg), places=places_of(cfg))
    cfg = carrying(cfg, given)
    trains_from = chosen(cfg)
    cfg, said = reader(cfg, trains_from).resolved(cfg)
    inputs = dataclasses.replace(
        found,  # what the user gave: the data's values filled in count as none of it
        trains_from=trains_from,
        tests_from="images" if reads_test_images(cfg) else trains_from,
        said=said,
        made_for=resolved_for(cfg),
        read_from=reading(cfg),
        places=places_of(cfg),
    )
    return carrying(cfg, inputs), said
