"""Where a run's examples come from: TFRecord files, a competition's own images and CSV
(images.py), or a TensorFlow Datasets set (`--data-dir tfds:NAME`, tfds_sets.py). `read`, every
command's first look at its data, picks a reader for training and one for testing and fills in
what the data says (a manifest's, the CSV's classes, the set's splits), once for the run."""

from __future__ import annotations

import os

import tensorflow as tf

from ..config import Config, Sources, given_fields, validating_fold
from ..errors import UserError, named
from ..platform import paths
from ..platform.files import MANIFEST
from ..platform.paths import Places
from . import images, records, tfds_sets
from .kinds import Data
from .manifest import with_manifest


def read(cfg: Config, sources: Sources, places: Places) -> tuple[Config, Sources, Places, Data]:
    """The config with what the data says for the fields not given, their sources, the places
    found again, and the Data. A kind's module is imported only where the run reads that kind
    (tools/carried.py reads these tests)."""
    typed = given_fields(cfg, sources, typed=True)
    trains_from = chosen(cfg, places, typed)
    if trains_from != "records" and validating_fold(cfg) >= cfg.folds:  # records: their manifest's
        folds = f"{named('folds')} is {cfg.folds}"
        raise UserError(f"{named('fold')} {cfg.fold}: {folds}; pick 0 to {cfg.folds - 1}")
    if trains_from == "tfds":
        cfg, sources, manifest = tfds_sets.with_splits(cfg, sources, places)
    elif trains_from == "images":
        cfg, sources, manifest = images.with_table(cfg, sources, places)
    else:
        cfg, sources, manifest = with_manifest(cfg, sources, places)
    places = paths.find(cfg, sources)  # the data may have named the files of each split
    tests_from = "images" if reads_test_images(places, typed) else trains_from
    # Folds asked of records with none; not where none are here (a code competition's rerun).
    pooling = trains_from == "records" and manifest is None and cfg.fold and cfg.folds > 1
    pool = records.pooled(cfg, places) if pooling and records_there(places, "train_files") else None
    if trains_from == "tfds":
        train = tfds_sets.TfdsSet(cfg, places, manifest)
    elif trains_from == "images":
        train = images.CompetitionImages(cfg, places, manifest, trains_from)
    else:
        train = records.Records(cfg, places, manifest, pool)
    test = train
    if tests_from != trains_from:  # a code competition's rerun: its test folder, read as files
        test = images.CompetitionImages(cfg, places, manifest, trains_from)
    data = Data(trains_from, tests_from, manifest, train, test, pool, cfg.metadata_columns)
    return cfg, sources, places, data


def chosen(cfg: Config, places: Places, typed: frozenset[str]) -> str:
    """Which source trains: images and CSV given (`typed`), or with no records, as files."""
    if places.data.startswith("tfds:"):
        return "tfds"
    if {"train_csv", "train_images"} & typed:
        return "images"
    if "train_files" in typed:  # before the CSV's place is found: a Kaggle input, perhaps absent
        return "records"
    csv, images = places.file("train_csv"), places.file("train_images")
    on_disk = "://" not in csv and os.path.isfile(csv) and os.path.isdir(images)
    if on_disk and not os.path.exists(places.in_data(MANIFEST)):
        return "records" if records_there(places, "train_files") else "images"
    return "records"


def records_there(places: Places, field: str) -> bool:
    return any(tf.io.gfile.glob(part) for part in places.file(field).split(","))


def reads_test_images(places: Places, typed: frozenset[str]) -> bool:
    """Whether test images are read as files: given, or with no test records (a rerun's)."""
    if "test_images" in typed:
        return True
    if "test_files" in typed or places.data.startswith("tfds:"):
        return False
    folder = places.file("test_images")  # read where no test records are beside it
    return "://" not in folder and os.path.isdir(folder) and not records_there(places, "test_files")
