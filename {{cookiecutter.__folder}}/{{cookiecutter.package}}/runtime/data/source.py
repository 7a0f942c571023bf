"""Where a run's examples come from: TFRecord files (a folder, Kaggle's input, a gs://
bucket), a competition's own images and CSV (train_images/ and train.csv, images.py), or a
TensorFlow Datasets set (`--data-dir tfds:NAME`).

`resolved(cfg)`, every command's first step, picks one for training and one for the test
set (test images given by --test-images are read as files whatever trains), once, and fills
in what the data says; `of(cfg, field)` hands a split's source to train, predict, evaluate,
doctor and the pipeline, which ask it for each split's files and counts and the examples: the
choice between them is made here and nowhere else. Each serves examples as the records' features:
{image_key: encoded bytes, label_key: class, id_key: id}; image files serve their paths as
image_key, which `encoded` reads where the pipeline decodes them.
"""

from __future__ import annotations

import dataclasses

import tensorflow as tf

from ..config import Config, carrying, inputs_of, places_of, resolved_for
from ..errors import named
from ..platform import paths
from ..platform.files import MANIFEST
from . import images, records, scan, tfds_sets
from .manifest import check_count, skipped_tests, with_manifest


@dataclasses.dataclass
class Split:
    """One split as checked: its files (for a TFDS set, the one split string), its size, its
    ids in record order (a labeled split's where its records carry them; a TFDS set's labeled
    splits, none), and what doctor says of it."""

    files: list[str]
    records: int
    ids: list[str]
    said: str
    fields: tuple[str, ...] = ("test_files", "id_key")  # what names its ids, for messages
    skipped: dict[str, str] = dataclasses.field(default_factory=dict)  # unreadable test images


class Records:
    """TFRecord shards, with the manifest `records` writes beside them where there is one."""

    def resolved(self, cfg: Config) -> tuple[Config, dict | None]:
        """The config with what the manifest says for the fields the user did not give, and
        the manifest (None without one)."""
        return with_manifest(cfg)

    def describe(self, cfg: Config, manifest: dict) -> str:
        folds, classes = manifest["folds"], manifest["classes"]
        held_out = f", fold {cfg.fold} validates" if folds > 1 else ""
        names = (
            f": {', '.join(classes[:5])}{', ...' if len(classes) > 5 else ''}" if classes else ""
        )
        heading = (
            f"records: {places_of(cfg).in_data(MANIFEST)}: {folds} folds{held_out}, "
            f"{manifest['num_classes']} classes{names}"
        )
        balance = [  # what each fold holds: a fold short of a class scores it badly
            f"  fold {fold}: {held['records']} records, {min(held['classes'].values())} to "
            f"{max(held['classes'].values())} per class ({len(held['classes'])} classes)"
            for fold, held in manifest["train"]["per_fold"].items()
        ]
        return "\n".join([heading, *balance])

    def split(self, cfg: Config, field: str, labeled: bool) -> Split:
        """Every record's label (or id) read, shard by shard; the first shard's features
        checked by name and kind first, so a wrong key is named before anything is read."""
        files = records.find_checked(cfg, field, labeled)
        shards = scan.check_split(files, cfg, field, labeled)
        count = sum(shard.records for shard in shards)
        _, manifest = resolved(cfg)  # as the command read it: a resolved config is not again
        check_count(cfg, field, count, manifest)
        ids = [key for shard in shards for key in shard.ids]
        said = f"{len(files)} files, {count} records ({places_of(cfg).file(field)})"
        skipped = {} if labeled else skipped_tests(manifest)
        return Split(files, count, ids, said, skipped=skipped)

    def training(
        self, cfg: Config, files: list[str], skipped: frozenset[str] = frozenset(),
        with_ids: bool = False,
    ) -> tf.data.Dataset:  # fmt: skip
        """One pass over this process's share of the records, in shuffled file order."""
        return records.training_examples(files, cfg, skipped, with_ids)

    def in_order(
        self, cfg: Config, files: list[str], labeled: bool, with_ids: bool = False
    ) -> tuple[tf.data.Dataset, int]:
        """Every record once, in one fixed order, and how many there are."""
        return records.examples_in_order(files, cfg, labeled, with_ids)

    def carries_ids(self, cfg: Config, files: list[str]) -> bool:
        return cfg.id_key in records.features_of(files[0])

    def encoded(self, image: tf.Tensor) -> tf.Tensor:
        """An example's image feature as encoded bytes: the feature itself."""
        return image

    def scanned(self, cfg: Config, files: list[str], labeled: bool) -> list[scan.Shard] | None:
        """Every image decoded, shard by shard."""
        return scan.scan_split(files, cfg, labeled, decode=True)


class TfdsSet:
    """A TensorFlow Datasets set, prepared (downloaded once) where TFDS keeps its sets."""

    def resolved(self, cfg: Config) -> tuple[Config, dict]:
        """The config with the set's splits and classes, and what doctor shows of the set."""
        return tfds_sets.with_splits(cfg)

    def describe(self, cfg: Config, manifest: dict) -> str:
        return tfds_sets.describe(cfg, manifest)

    def split(self, cfg: Config, field: str, labeled: bool) -> Split:
        count, ids = tfds_sets.check_split(cfg, field, labeled)
        name = getattr(cfg, field)
        return Split([name], count, ids, f"{count} examples (TFDS split {name})")

    def training(
        self, cfg: Config, files: list[str], skipped: frozenset[str] = frozenset(),
        with_ids: bool = False,
    ) -> tf.data.Dataset:  # fmt: skip
        share = (cfg.process_id, cfg.num_processes)
        return tfds_sets.examples(cfg, files[0], shuffled=True, share=share)

    def in_order(
        self, cfg: Config, files: list[str], labeled: bool, with_ids: bool = False
    ) -> tuple[tf.data.Dataset, int]:
        examples = tfds_sets.examples(cfg, files[0])
        return examples, tfds_sets.size(examples)

    def carries_ids(self, cfg: Config, files: list[str]) -> bool:
        return True  # every example's tfds_id

    def encoded(self, image: tf.Tensor) -> tf.Tensor:
        return image

    def scanned(self, cfg: Config, files: list[str], labeled: bool) -> list[scan.Shard] | None:
        """None: TFDS checked the set's images when it prepared it."""
        return None


class CompetitionImages:
    """A competition's image files and its training CSV, folds made at run time (images.py)."""

    def resolved(self, cfg: Config) -> tuple[Config, dict]:
        return images.resolved(cfg)

    def describe(self, cfg: Config, manifest: dict) -> str:
        return images.describe(cfg, manifest)

    def split(self, cfg: Config, field: str, labeled: bool) -> Split:
        """A fold's images by the CSV (checked there, and images by their first bytes), or
        every image of the test folder with its id."""
        if labeled:
            rows = images.split_rows(cfg, field)
            paths = split_paths = rows["path"].tolist()
            flag, ids = named("train_images"), rows["id"].tolist()
        else:
            split_paths, ids = images.test_images(cfg)
            paths, flag = split_paths, named("test_images")
        images.checked(paths, flag)
        folder = places_of(cfg).file("train_images" if labeled else "test_images")
        said = f"{len(paths)} images ({folder})"
        return Split(split_paths, len(paths), ids, said, ("test_images",))

    def training(
        self, cfg: Config, files: list[str], skipped: frozenset[str] = frozenset(),
        with_ids: bool = False,
    ) -> tf.data.Dataset:  # fmt: skip
        return images.training(cfg, files, skipped, with_ids)

    def in_order(
        self, cfg: Config, files: list[str], labeled: bool, with_ids: bool = False
    ) -> tuple[tf.data.Dataset, int]:
        ids = None if labeled else images.ids_of(cfg, files)
        return images.in_order(cfg, files, labeled, with_ids, ids)

    def carries_ids(self, cfg: Config, files: list[str]) -> bool:
        return True

    def encoded(self, image: tf.Tensor) -> tf.Tensor:
        """The file the image feature names, read (images.examples)."""
        return images.read(image)

    def scanned(self, cfg: Config, files: list[str], labeled: bool) -> list[scan.Shard] | None:
        return images.scanned(cfg, files, None if labeled else images.ids_of(cfg, files))


KINDS = {"records": Records, "tfds": TfdsSet, "images": CompetitionImages}


def of(cfg: Config, field: str = "train_files") -> Records | TfdsSet | CompetitionImages:
    """The data source the config reads for a split (`field`: train_files, valid_files or
    test_files), as `resolved` chose it (for a config no command resolved, chosen now)."""
    found = inputs_of(cfg)
    kind = found.tests_from if field == "test_files" else found.trains_from
    return KINDS[kind or chosen(paths.placed(cfg), field)]()


def chosen(cfg: Config, field: str = "train_files") -> str:
    """Which source a split reads, looked at on disk: test images given by a flag are read as
    files whatever trains, and so are those of a test folder with no test records beside it
    (a code competition's rerun mounts the hidden test_images/ and the sample, perhaps nothing
    to train on)."""
    if field == "test_files" and reads_test_images(cfg):
        return "images"
    if tfds_sets.name_of(cfg):
        return "tfds"
    return "images" if images.chosen(cfg) else "records"


def reads_test_images(cfg: Config) -> bool:
    """Whether the test set is read as image files, whatever trains: see `chosen`."""
    return "test_images" in inputs_of(cfg).typed or images.only_test_images(cfg)


def resolved(cfg: Config) -> tuple[Config, dict | None]:
    """The config with what the data says (a manifest, a TFDS set, the training CSV) for the
    fields the user did not give, and what it said (None for records without a manifest).
    Every command's first step: the sources that train and test are chosen here, once, and
    carried on the config (Config.inputs) with what the user gave, what the data said and the
    run's places (platform/paths.py), for every module after it to read. A config resolved
    already, and not changed since, is returned as it is."""
    found = inputs_of(cfg)
    if found.trains_from:
        return cfg, found.said
    # The places as given (those the command found, unless a value changed since) choose the
    # source and lead to what the data says; where it fills in a field, they are found again.
    cfg = paths.placed(cfg)
    given = dataclasses.replace(found, made_for=resolved_for(cfg), places=places_of(cfg))
    cfg = carrying(cfg, given)
    trains_from = chosen(cfg)
    cfg, said = KINDS[trains_from]().resolved(cfg)
    inputs = dataclasses.replace(
        found,  # what the user gave: the data's values filled in count as none of it
        trains_from=trains_from,
        tests_from="images" if reads_test_images(cfg) else trains_from,
        said=said,
        made_for=resolved_for(cfg),
        places=places_of(cfg),
    )
    return carrying(cfg, inputs), said
