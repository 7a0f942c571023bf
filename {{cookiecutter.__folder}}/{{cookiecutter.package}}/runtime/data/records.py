"""TFRecord files in a folder, /kaggle/input or a gs:// bucket, found, counted, checked and read:
Records, the reader source.py opens for them, and Split, what a reader says of a split."""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import tensorflow as tf

from ..config import Config, targets, validating_fold
from ..errors import UserError, named
from ..platform.files import MANIFEST, reaching
from ..platform.paths import Places
from . import record_folds, scan, steps
from .manifest import check_count, skipped_tests
from .scan import COUNT_IN_NAME

AUTO = tf.data.AUTOTUNE
# What the pipeline parses each feature as.
KINDS = {"bytes": "bytes_list", "int64": "int64_list", "float": "float_list"}


def find(pattern: str, field: str, also: str = "") -> list[str]:
    """Every file matching the pattern (or comma-separated patterns), sorted; an error naming
    the field when there is none, and `also`, the pattern in the data folder looked in too."""
    with reaching(pattern):
        files = sorted({path for part in pattern.split(",") for path in tf.io.gfile.glob(part)})
    if "://" not in pattern:  # a bucket has no folders, and asking costs a request per file
        folders = [path for path in files if os.path.isdir(path)]
        files = [path for path in files if path not in folders]
        if folders and not files:
            raise UserError(
                f"{pattern!r} ({named(field)}) matches only folders ({', '.join(folders[:3])}); "
                f"give a pattern of the files in them, such as {os.path.join(folders[0], '*.tfrec')!r}"
            )
    if not files:
        if also:  # where the pattern was looked for too
            also = f" from where you run ({os.getcwd()}), nor in the data folder ({also!r})"
        raise UserError(
            f"no files match {pattern!r} ({named(field)}){also}; set {named('data_dir')} to the "
            f"folder that holds them, or {field} to their pattern"
        )
    return files


def count(files: list[str]) -> int:
    """Records in the files: from Kaggle-style names when every file has one, else by reading."""
    counts = [COUNT_IN_NAME.search(os.path.basename(name)) for name in files]
    if all(counts):
        return sum(int(match.group(1)) for match in counts)
    return sum(1 for _ in tf.data.TFRecordDataset(files))


def features_of(path: str) -> dict[str, str]:
    """Feature names and kinds ("bytes", "int64", "float") of the file's first record."""
    for raw in tf.data.TFRecordDataset(path).take(1):
        example = tf.train.Example.FromString(raw.numpy())
        return {
            name: next((kind for kind, field in KINDS.items() if feature.HasField(field)), "empty")
            for name, feature in example.features.feature.items()
        }
    raise UserError(f"{path} holds no records; remove it or point the file flag elsewhere")


def check(path: str, wanted: dict[str, tuple[str, str]]) -> None:
    """Fail before training when the first record lacks a `wanted` feature or has another kind."""
    found = features_of(path)
    for name, (kind, field) in wanted.items():
        if name not in found:
            raise UserError(
                f"{path}: no feature {name!r} ({named(field)}); the records hold "
                f"{', '.join(f'{key} ({value})' for key, value in sorted(found.items()))}; "
                f"set {field} to one of them"
            )
        if found[name] != kind:
            raise UserError(
                f"{path}: feature {name!r} ({named(field)}) is {found[name]}, the pipeline "
                f"needs {kind}; set {field} to a {kind} feature"
            )


def check_labels(path: str, label_key: str, num_classes: int, multi_label: bool = False) -> None:
    """Fail before training when a record's label is not one class number in 0..num_classes-1,
    or with `multi_label` not a row of num_classes 0s and 1s. Only the label is parsed: fast."""
    spec = {label_key: tf.io.RaggedFeature(tf.int64)}
    batches = tf.data.TFRecordDataset(path).batch(4096)
    wanted = num_classes if multi_label else 1
    low, high, start = num_classes, -1, 0
    for batch in batches.map(lambda r: tf.io.parse_example(r, spec)[label_key]):
        lengths, values = batch.row_lengths().numpy(), batch.flat_values.numpy()
        odd = (lengths != wanted).nonzero()[0]
        if odd.size:
            length = int(lengths[odd[0]])
            if length == 0:
                fix = "every record needs its label; write the records again"
            elif multi_label and length == 1:
                fix = (
                    "one class number, and this multi-label run expects a multi-hot row of "
                    f"{num_classes}; set {named('multi_label')} to False (--no-multi-label) "
                    "for single-label records"
                )
            elif multi_label:
                fix = (
                    f"a multi-hot row of {length} classes, and {named('num_classes')} is "
                    f"{num_classes}; set num_classes to {length}"
                )
            else:
                fix = (
                    "a multi-hot row (several labels per image), and this run expects one "
                    f"class number; set {named('multi_label')} for multi-label records"
                )
            raise UserError(
                f"{path}: record {start + int(odd[0])} holds {length} values in "
                f"{label_key!r}: {fix}"
            )
        if multi_label:
            odd = ((values != 0) & (values != 1)).nonzero()[0]
            if odd.size:
                record = start + int(batch.value_rowids().numpy()[odd[0]])
                raise UserError(
                    f"{path}: record {record} holds {values[odd[0]]} in its multi-hot row "
                    f"{label_key!r}, which holds only 0s and 1s; write the records again"
                )
        elif values.size:
            low, high = min(low, int(values.min())), max(high, int(values.max()))
        start += len(lengths)
    if low < 0 or high >= num_classes:
        raise UserError(
            f"{path}: labels {label_key!r} run from {low} to {high}, outside 0..{num_classes - 1} "
            f"({named('num_classes')} {num_classes}); set num_classes to at least {high + 1}"
        )


def images_hint(places: Places) -> str:
    """Why no records are found, where the data folder holds the training CSV but not its images."""
    csv, images = places.file("train_csv"), places.file("train_images")
    if "://" in csv or not os.path.isfile(csv) or os.path.isdir(images):
        return ""
    return (
        f"; {csv} is here but not {images} ({named('train_images')}), the images it names: "
        "give that folder to train on the images and CSV"
    )


def find_checked(cfg: Config, places: Places, field: str, labeled: bool) -> list[str]:
    """A split's files, after checking its first shard's image and label (or id) features."""
    pattern = places.file(field)
    # Read as given (the places kept a path the user typed where they run): the data folder is
    # the other place it could mean. Defaults come back joined to the data folder, or absolute.
    as_given = pattern == getattr(cfg, field)
    try:
        files = find(pattern, field, places.in_data_folder(pattern) if as_given else "")
    except UserError as error:
        raise UserError(f"{error}{images_hint(places) if labeled else ''}") from None
    classes = labeled and targets(cfg) == "classes"  # values or shares: scan.py checks each row
    kind = "int64" if classes else "float"
    wanted = {cfg.label_key: (kind, "label_key")} if labeled else {cfg.id_key: ("bytes", "id_key")}
    check(files[0], {cfg.image_key: ("bytes", "image_key"), **wanted})
    if classes:
        check_labels(files[0], cfg.label_key, cfg.num_classes, cfg.multi_label)
    return files


pooled_splits: dict[tuple, record_folds.Pooled] = {}  # split once a session while unchanged


def pooled(cfg: Config, places: Places) -> record_folds.Pooled:
    """The train and val files of records that carry no folds, split into Config.folds folds
    (record_folds.py), where the run asks for a fold."""
    train = find_checked(cfg, places, "train_files", True)
    valid = find_checked(cfg, places, "valid_files", True) if cfg.valid_files else []
    one_class = targets(cfg) == "classes" and not cfg.multi_label  # else not stratified
    key = (tuple(train), tuple(valid), cfg.folds, cfg.fold_seed, cfg.label_key, one_class)
    if key not in pooled_splits:
        files = [*train, *[path for path in valid if path not in train]]
        pooled_splits[key] = record_folds.split(
            train, valid, [count([path]) for path in files],
            lambda files: record_folds.class_numbers(files, cfg.label_key) if one_class else None,
            cfg.folds, cfg.fold_seed,
        )  # fmt: skip
    return pooled_splits[key]


def wanted_records(
    files: list[str], cfg: Config, skipped: frozenset[str], every_nth: bool, pooled_keep=None
):
    """Whether this process trains on record n of a file: not a skipped one, with
    `pooled_keep` (record_folds.Pooled.keep) one of its fold's, and with `every_nth`, only
    every num_processes-th record, numbered over all the files in order."""
    processes, process = cfg.num_processes, cfg.process_id
    if every_nth:  # each file's first record's number over all the files
        starts = np.cumsum([0] + [count([path]) for path in files[:-1]])
        first = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(files, starts), -1)
    leave_out = None
    if skipped:
        keys = tf.lookup.KeyValueTensorInitializer(sorted(skipped), [True] * len(skipped))
        leave_out = tf.lookup.StaticHashTable(keys, False)

    def keep(path, n):
        wanted = (first.lookup(path) + n) % processes == process if every_nth else tf.constant(True)
        if leave_out is not None:
            key = path + "#" + tf.strings.as_string(n)
            wanted = tf.logical_and(wanted, tf.logical_not(leave_out.lookup(key)))
        if pooled_keep is not None:
            wanted = tf.logical_and(wanted, pooled_keep(path, n))
        return wanted

    return keep


@dataclasses.dataclass
class Split:
    """One split as checked: its files (for a TFDS set, the one split string), its size, its
    ids in record order (where its records carry them), and what doctor says of it."""

    files: list[str]
    records: int
    ids: list[str]
    said: str
    fields: tuple[str, ...] = ("test_files", "id_key")  # what names its ids, for messages
    skipped: dict[str, str] = dataclasses.field(default_factory=dict)  # unreadable test images
    labels: list = dataclasses.field(default_factory=list)  # a labeled split's values or shares


def of_records(shards: list[scan.Shard], name: str, kept: list | None) -> list:
    """What the shards read of each record ("ids", "labels"), less those `kept` leaves out
    (each shard's records; None: all). A shard that read none of a record's, none."""
    if kept is None:
        return [item for shard in shards for item in getattr(shard, name)]
    return [
        item
        for shard, keep in zip(shards, kept, strict=True)
        if len(getattr(shard, name)) == len(keep)
        for item, wanted in zip(getattr(shard, name), keep, strict=True)
        if wanted
    ]


class Records:
    """TFRecord shards, with the manifest `records` writes beside them where there is one, and
    `pool`, their files split into folds where they carry none and the run asks for a fold."""

    kind = "records"

    def __init__(self, cfg: Config, places: Places, manifest: dict | None, pool=None):
        self.cfg, self.places, self.manifest, self.pool = cfg, places, manifest, pool

    def describe(self) -> str:
        """What doctor and train say of the records: their manifest's folds and classes, or how
        the pooled files are split; "" for records read as given."""
        cfg, manifest = self.cfg, self.manifest
        if self.pool:
            held_out = "all in turn" if cfg.fold == "all" else f"fold {cfg.fold} validates"
            return f"records: {self.pool.describe()}; {held_out}"
        if not manifest:
            return ""
        folds, classes = manifest["folds"], manifest["classes"] or []
        held_out = f", fold {cfg.fold or 0} validates" if folds > 1 else ""
        more = ", ..." if len(classes) > 5 else ""
        names = f": {', '.join(classes[:5])}{more}" if classes else ""
        heading = (
            f"records: {self.places.in_data(MANIFEST)}: {folds} folds{held_out}, "
            f"{manifest['num_classes']} classes{names}"
        )
        balance = [  # what each fold holds: a fold short of a class scores it badly
            f"  fold {fold}: {held['records']} records, {min(held['classes'].values())} to "
            f"{max(held['classes'].values())} per class ({len(held['classes'])} classes)"
            for fold, held in manifest["train"]["per_fold"].items()
        ]
        return "\n".join([heading, *balance])

    def split(self, field: str, labeled: bool) -> Split:
        """Every record's label (or id) read, shard by shard; the first shard's features
        checked by name and kind first, so a wrong key is named before anything is read. With
        the files pooled into folds, the records of the fold's side."""
        cfg, pool = self.cfg, self.pool if labeled else None
        fold, validating = validating_fold(cfg), field == "valid_files"
        if pool:
            files = pool.files_of(fold, validating)
        else:
            files = find_checked(cfg, self.places, field, labeled)
        shards = scan.check_split(files, cfg, field, labeled)
        kept = pool.kept(fold, validating) if pool else None
        if kept is None:
            count = sum(shard.records for shard in shards)
        else:
            count = pool.records(fold, validating)
        check_count(cfg, self.places, field, count, self.manifest)
        ids = of_records(shards, "ids", kept)
        where = f"fold {fold} of {pool.folds}" if pool else self.places.file(field)
        said = f"{len(files)} files, {count} records ({where})"
        skipped = {} if labeled else skipped_tests(self.manifest)
        labels = of_records(shards, "labels", kept)
        return Split(files, count, ids, said, skipped=skipped, labels=labels)

    def training(
        self, files: list[str], skipped: frozenset[str] = frozenset(), with_ids: bool = False
    ) -> tf.data.Dataset:
        """One pass over this process's share (its own files, or every N-th record) as parsed
        examples, files shuffled, less `skipped` ("<file>#<record number>"), with ids if asked."""
        cfg, pool = self.cfg, self.pool
        processes, process = cfg.num_processes, cfg.process_id
        by_file = len(files) % processes == 0
        own = files[process::processes] if by_file else files
        names = tf.data.Dataset.from_tensor_slices(own).shuffle(len(own), seed=cfg.seed)
        read = tf.data.TFRecordDataset
        in_fold = pool.keep(validating_fold(cfg), False) if pool and not pool.by_file else None
        if skipped or not by_file or in_fold:  # records have no other name than file and number
            keep = wanted_records(files, cfg, skipped, not by_file, in_fold)

            def read(path):
                numbered = tf.data.TFRecordDataset(path).enumerate()
                return numbered.filter(lambda n, record: keep(path, n)).map(lambda n, rec: rec)

        serialized = names.interleave(read, num_parallel_calls=AUTO, deterministic=False)
        return serialized.map(steps.parse(cfg, True, with_ids), num_parallel_calls=AUTO)

    def in_order(
        self, files: list[str], labeled: bool, with_ids: bool = False
    ) -> tuple[tf.data.Dataset, int]:
        """Every record once, parsed, in order, and their count, which a short shard fails.
        With the files pooled into folds by record, labelled records are those the fold
        validates on."""
        pool = self.pool if labeled else None
        if pool and not pool.by_file:
            fold = validating_fold(self.cfg)
            keep, total = pool.keep(fold, True), pool.records(fold, True)

            def read(path):
                numbered = tf.data.TFRecordDataset(path).enumerate()
                return numbered.filter(lambda n, record: keep(path, n)).map(lambda n, rec: rec)

            names = tf.data.Dataset.from_tensor_slices(files)
            serialized = names.interleave(read, min(len(files), 16), num_parallel_calls=AUTO)
        else:
            total = count(files)
            serialized = tf.data.TFRecordDataset(files, num_parallel_reads=min(len(files), 16))
        serialized = serialized.apply(tf.data.experimental.assert_cardinality(total))
        parse = steps.parse(self.cfg, labeled, with_ids)
        return serialized.map(parse, num_parallel_calls=AUTO), total

    def carries_ids(self, files: list[str]) -> bool:
        return self.cfg.id_key in features_of(files[0])

    def encoded(self, image: tf.Tensor) -> tf.Tensor:
        """An example's image feature as encoded bytes: the feature itself."""
        return image

    def scanned(self, files: list[str], labeled: bool) -> list[scan.Shard] | None:
        """Every image decoded, shard by shard."""
        return scan.scan_split(files, self.cfg, labeled, decode=True)
