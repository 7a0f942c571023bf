"""Folds for TFRecords that carry none (Kaggle's own shards, any --train-files/--valid-files):
where a run asks for a fold, the train and val files are pooled and split into Config.folds
folds, drawn with Config.fold_seed, as the strongest public k-fold notebooks on TFRecords do.

By file where there are at least two files a fold: each fold reads whole files, as fast as any
split, the files dealt largest first so that the folds hold about as many records. Else by
record, stratified by class where each record holds one. The split depends on nothing but the
files, their records and the seed, so every command holds the same folds."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import tensorflow as tf

from ..errors import UserError, named


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
        return [
            path
            for path, held in zip(self.files, self.by_file, strict=True)
            if (held == fold) == validating
        ]

    def kept(self, fold: int, validating: bool) -> list[np.ndarray] | None:
        """Which records of each of `files_of`'s files are on that side; None: all of them."""
        if self.by_file:
            return None
        return [(folds == fold) == validating for folds in self.by_record]

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
            return sum(
                c
                for c, held in zip(self.counts, self.by_file, strict=True)
                if (held == fold) == validating
            )
        return int(sum(mask.sum() for mask in kept))

    def describe(self) -> str:
        """What the split is, as a run's first lines say it."""
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
    return (
        f"{low:,}"
        if low == high
        else f"{low:,} or {high:,}"
        if high == low + 1
        else f"{low:,} to {high:,}"
    )


def split(
    train: list[str], valid: list[str], counts: list[int], labels, folds: int, seed: int
) -> Pooled:
    """The files of both splits pooled into `folds` folds; `labels(files)` reads each file's
    records' class numbers (None where a record holds other than one), where split by record."""
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
    ends = np.cumsum(counts)
    return Pooled(*made, by_record=tuple(np.split(fold, ends[:-1])), stratified=stratified)


def dealt(counts: list[int], folds: int, seed: int) -> list[int]:
    """A fold per file: shuffled by `seed`, then dealt largest first, back and forth over the
    folds, so that each holds about as many files and as many records."""
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
