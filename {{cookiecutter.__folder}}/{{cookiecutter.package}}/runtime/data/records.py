"""TFRecord files (a folder, /kaggle/input, a gs:// bucket) found, counted, checked and read.

Records with no folds (Kaggle's shards) are pooled where a run asks for one, as the best public
k-fold notebooks do: the train and val files split by file where there are two a fold or more,
else by record (stratified by class), depending on the files and Config.fold_seed alone."""

from __future__ import annotations

import dataclasses
import os
import warnings
from itertools import compress

import numpy as np
import tensorflow as tf

from ..config import Config, targets, validating_fold
from ..errors import UserError, named
from ..platform.files import MANIFEST, reaching
from ..platform.paths import Places, instead_in
from . import scan, steps
from .kinds import Reader, Split
from .manifest import check_count, skipped_tests
from .scan import COUNT_IN_NAME

AUTO = tf.data.AUTOTUNE
KINDS = {"bytes": "bytes_list", "int64": "int64_list", "float": "float_list"}


def find(pattern: str, field: str, also: str = "") -> list[str]:
    """Every file the (comma-separated) patterns match, sorted; else an error (`also`: tried)."""
    with reaching(pattern):
        files = sorted({path for part in pattern.split(",") for path in tf.io.gfile.glob(part)})
    if "://" not in pattern:  # a bucket has no folders, and asking costs a request per file
        folders = [path for path in files if os.path.isdir(path)]
        files = [path for path in files if path not in folders]
        if folders and not files:
            raise UserError(
                f"{pattern!r} ({named(field)}) matches only folders ({', '.join(folders[:3])});"
                f" give a pattern of the files in them, such as "
                f"{os.path.join(folders[0], '*.tfrec')!r}"
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


def find_checked(cfg: Config, places: Places, field: str, labeled: bool) -> list[str]:
    """A split's files, after checking its first shard's image and label (or id) features."""
    pattern = places.file(field)
    # A path the user typed is read where they run, else in the data folder (defaults: there).
    as_given = pattern == getattr(cfg, field)
    try:
        files = find(pattern, field, instead_in(places.data, pattern) if as_given else "")
    except UserError as error:  # where the data folder holds the training CSV, not its images
        csv, images = places.file("train_csv"), places.file("train_images")
        if not labeled or "://" in csv or not os.path.isfile(csv) or os.path.isdir(images):
            raise
        raise UserError(
            f"{error}; {csv} is here but not {images} ({named('train_images')}), the images it "
            "names: give that folder to train on the images and CSV"
        ) from None
    kind = "int64" if labeled and targets(cfg) == "classes" else "float"  # values, shares: rows
    wanted = {cfg.label_key: (kind, "label_key")} if labeled else {cfg.id_key: ("bytes", "id_key")}
    check(files[0], {cfg.image_key: ("bytes", "image_key"), **wanted})  # its labels: scan.py
    return files


pooled_splits: dict[tuple, Pooled] = {}  # split once a session while unchanged


def pooled(cfg: Config, places: Places) -> Pooled:
    """The train and val files of records that carry no folds, split into Config.folds folds."""
    train = find_checked(cfg, places, "train_files", True)
    valid = find_checked(cfg, places, "valid_files", True) if cfg.valid_files else []
    one_class = targets(cfg) == "classes" and not cfg.multi_label  # else not stratified
    key = (tuple(train), tuple(valid), cfg.folds, cfg.fold_seed, cfg.label_key, one_class)
    if key not in pooled_splits:
        pooled_splits[key] = pool_folds(
            train, valid, [count([path]) for path in dict.fromkeys([*train, *valid])],
            lambda files: class_numbers(files, cfg.label_key) if one_class else None,
            cfg.folds, cfg.fold_seed,
        )  # fmt: skip
    return pooled_splits[key]


@dataclasses.dataclass(frozen=True)
class Pooled:
    """The pooled files split into folds: each file's fold, or each record's."""

    folds: int
    files: tuple[str, ...]  # the training files, then the validation files
    from_train: int  # how many of `files` Config.train_files names; the rest, valid_files
    counts: tuple[int, ...]  # records in each file
    by_file: tuple[int, ...] = ()  # each file's fold, where split by file
    by_record: tuple[np.ndarray, ...] = ()  # each file's records' folds, where split by record
    stratified: bool = False

    def files_of(self, fold: int, validating: bool) -> list[str]:
        """The files that hold the records fold `fold` validates on, or trains on."""
        if not self.by_file:
            return list(self.files)
        files = zip(self.files, self.by_file, strict=True)
        return [path for path, held in files if (held == fold) == validating]

    def kept(self, fold: int, validating: bool) -> list[np.ndarray] | None:
        """Which records of each of `files_of`'s files are on that side; None: all of them."""
        return None if self.by_file else [(folds == fold) == validating for folds in self.by_record]

    def keep(self, fold: int, validating: bool):
        """kept as a predicate tf.data can run: (file, the record's number in it) -> bool."""
        starts = np.cumsum([0, *self.counts[:-1]]).astype(np.int64)
        init = tf.lookup.KeyValueTensorInitializer(list(self.files), starts)
        first = tf.lookup.StaticHashTable(init, -1)
        mask = tf.constant(np.concatenate(self.kept(fold, validating)))
        return lambda path, number: tf.gather(mask, first.lookup(path) + number)

    def records(self, fold: int, validating: bool) -> int:
        kept = self.kept(fold, validating)
        if kept is None:
            files = zip(self.counts, self.by_file, strict=True)
            return sum(count for count, held in files if (held == fold) == validating)
        return int(sum(mask.sum() for mask in kept))

    def describe(self) -> str:
        where = f"({self.from_train} train, {len(self.files) - self.from_train} val)"
        if self.by_file:
            held = [self.by_file.count(fold) for fold in range(self.folds)]
            what, each = f"{len(self.files)} files {where}", f"{spread(held)} files"
        else:
            held = [self.records(fold, True) for fold in range(self.folds)]
            kind = ", stratified by class" if self.stratified else ""
            what = f"the {sum(self.counts):,} records of {len(self.files)} files {where}{kind}"
            each = f"{spread(held)} records"
        return f"{self.folds} folds over {what}: each fold validates on {each}"


def spread(counts: list[int]) -> str:
    low, high = min(counts), max(counts)
    return f"{low:,}" if low == high else f"{low:,} {'or' if high == low + 1 else 'to'} {high:,}"


def pool_folds(
    train: list[str], valid: list[str], counts: list[int], labels, folds: int, seed: int
) -> Pooled:
    """The files of both splits pooled into `folds` folds; `labels(files)`: class_numbers."""
    files = [*train, *[path for path in valid if path not in train]]
    if sum(counts) < folds:
        raise UserError(
            f"{named('fold')}: {named('folds')} {folds} folds need at least {folds} labelled "
            f"records, and the train and val files ({len(files)}) hold {sum(counts)}; give "
            f"--folds {max(sum(counts), 2)} or fewer, or leave {named('fold')} out to train on "
            "the train files and validate on the val files as given"
        )
    made = (folds, tuple(files), len(train), tuple(counts))
    if len(files) >= 2 * folds:
        return Pooled(*made, by_file=tuple(dealt(counts, folds, seed)))
    fold, stratified = by_record(labels(files), sum(counts), folds, seed)
    in_files = tuple(np.split(fold, np.cumsum(counts)[:-1]))
    return Pooled(*made, by_record=in_files, stratified=stratified)


def dealt(counts: list[int], folds: int, seed: int) -> list[int]:
    """A fold per file, shuffled, then dealt largest first back and forth: even files, records."""
    order = np.random.default_rng(seed).permutation(len(counts))
    order = sorted(order, key=lambda index: -counts[index])  # stable: the shuffle breaks ties
    turns = [*range(folds), *reversed(range(folds))]
    fold = [0] * len(counts)
    for place, index in enumerate(order):
        fold[index] = turns[place % len(turns)]
    return fold


def by_record(classes: np.ndarray | None, records: int, folds: int, seed: int):
    """A fold per record, stratified by class where the labels allow (one class a record)."""
    from sklearn.model_selection import KFold, StratifiedKFold

    stratified = classes is not None and np.bincount(classes).max() >= folds
    splitter = (StratifiedKFold if stratified else KFold)(folds, shuffle=True, random_state=seed)
    fold = np.zeros(records, np.int64)
    with warnings.catch_warnings():  # a class rarer than the folds: some folds lack it
        warnings.simplefilter("ignore", UserWarning)
        held_out = splitter.split(np.zeros((records, 1)), classes if stratified else None)
        for number, (_, held) in enumerate(held_out):
            fold[held] = number
    return fold, stratified


def class_numbers(files: list[str], label_key: str) -> np.ndarray | None:
    """Each record's class number, in file order; None where a record holds other than one."""
    spec = {label_key: tf.io.RaggedFeature(tf.int64)}
    batches = tf.data.TFRecordDataset(files).batch(4096)
    rows = [batch for batch in batches.map(lambda r: tf.io.parse_example(r, spec)[label_key])]
    if any((row.row_lengths().numpy() != 1).any() for row in rows):
        return None
    numbers = np.concatenate([row.flat_values.numpy() for row in rows])
    return numbers if numbers.min() >= 0 else None


def kept_records(
    files: list[str], cfg: Config, skipped: frozenset[str], every_nth: bool, pooled_keep=None
):
    """A file's records this process reads: not `skipped`, the fold's, maybe every N-th of all."""
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

    def read(path):  # records have no other name than file and number
        numbered = tf.data.TFRecordDataset(path).enumerate()
        return numbered.filter(lambda n, record: keep(path, n)).map(lambda n, record: record)

    return read


def of_records(shards: list[scan.Shard], name: str, kept: list | None) -> list:
    """What the shards read of each record ("ids", "labels"), those `kept` keeps (None: all);
    none of a shard that read none of a record's."""
    if kept is None:
        return [item for shard in shards for item in getattr(shard, name)]
    read = [(getattr(shard, name), keep) for shard, keep in zip(shards, kept, strict=True)]
    whole = [compress(items, keep) for items, keep in read if len(items) == len(keep)]
    return [item for items in whole for item in items]


class Records(Reader):
    """TFRecord shards, with `records`' manifest where there is one, or `pool`, their folds."""

    kind = "records"

    def __init__(self, cfg: Config, places: Places, manifest: dict | None, pool=None):
        self.cfg, self.places, self.manifest, self.pool = cfg, places, manifest, pool

    def describe(self) -> str:
        """Their manifest's folds and classes, or how the pooled files are split; "": neither."""
        cfg, manifest = self.cfg, self.manifest
        if self.pool:
            held_out = "all in turn" if cfg.fold == "all" else f"fold {cfg.fold} validates"
            return f"records: {self.pool.describe()}; {held_out}"
        if not manifest:
            return ""
        heading = f"records: {self.places.in_data(MANIFEST)}: {self.folds_and_classes()}"
        balance = [  # what each fold holds: a fold short of a class scores it badly
            f"  fold {fold}: {held['records']} records, {min(held['classes'].values())} to "
            f"{max(held['classes'].values())} per class ({len(held['classes'])} classes)"
            for fold, held in manifest["train"]["per_fold"].items()
        ]
        return "\n".join([heading, *balance])

    def split(self, field: str, labeled: bool) -> Split:
        """Every record's label (or id) read, after the first shard's features are checked so
        that a wrong key is named before anything is read; of pooled files, the fold's side."""
        cfg, pool = self.cfg, self.pool if labeled else None
        fold, validating = validating_fold(cfg), field == "valid_files"
        if pool:
            files, kept = pool.files_of(fold, validating), pool.kept(fold, validating)
        else:
            files, kept = find_checked(cfg, self.places, field, labeled), None
        shards = scan.check_split(files, cfg, field, labeled)
        count = pool.records(fold, validating) if kept else sum(shard.records for shard in shards)
        check_count(cfg, self.places, field, count, self.manifest)
        where = f"fold {fold} of {pool.folds}" if pool else self.places.file(field)
        said = f"{len(files)} files, {count} records ({where})"
        skipped = {} if labeled else skipped_tests(self.manifest)
        ids, labels = of_records(shards, "ids", kept), of_records(shards, "labels", kept)
        return Split(files, count, ids, said, skipped=skipped, labels=labels)

    def training(self, files: list[str], skipped: frozenset[str] = frozenset(), with_ids=False):
        """A shuffled pass over this process's files (or every N-th record), less `skipped`."""
        cfg, pool = self.cfg, self.pool
        processes, process = cfg.num_processes, cfg.process_id
        by_file = len(files) % processes == 0
        own = files[process::processes] if by_file else files
        names = tf.data.Dataset.from_tensor_slices(own).shuffle(len(own), seed=cfg.seed)
        read = tf.data.TFRecordDataset
        in_fold = pool.keep(validating_fold(cfg), False) if pool and not pool.by_file else None
        if skipped or not by_file or in_fold:
            read = kept_records(files, cfg, skipped, not by_file, in_fold)
        serialized = names.interleave(read, num_parallel_calls=AUTO, deterministic=False)
        return serialized.map(steps.parse(cfg, True, with_ids), num_parallel_calls=AUTO)

    def in_order(self, files: list[str], labeled: bool, with_ids: bool = False):
        """Every record once, in order, and their count (a short shard fails); pooled: a fold's."""
        pool = self.pool if labeled else None
        if pool and not pool.by_file:
            fold = validating_fold(self.cfg)
            read = kept_records(files, self.cfg, frozenset(), False, pool.keep(fold, True))
            total = pool.records(fold, True)
        else:
            read, total = tf.data.TFRecordDataset, count(files)
        names = tf.data.Dataset.from_tensor_slices(files)
        serialized = names.interleave(read, min(len(files), 16), num_parallel_calls=AUTO)
        serialized = serialized.apply(tf.data.experimental.assert_cardinality(total))
        parse = steps.parse(self.cfg, labeled, with_ids)
        return serialized.map(parse, num_parallel_calls=AUTO), total

    def carries_ids(self, files: list[str]) -> bool:
        return self.cfg.id_key in features_of(files[0])

    def scanned(self, files: list[str], labeled: bool, ids=None) -> list[scan.Shard] | None:
        return scan.scan_split(files, self.cfg, labeled, decode=True)
