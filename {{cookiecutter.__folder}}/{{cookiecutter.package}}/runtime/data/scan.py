"""Read every record of a split and say what is wrong, shard by shard: its label or id, so a bad
one stops a run before it starts, naming the shard; `doctor --scan` decodes images too."""

from __future__ import annotations

import collections
import dataclasses
import os
import re

import tensorflow as tf
from google.protobuf.message import DecodeError
from tqdm.auto import tqdm

from ..config import Config, targets
from ..errors import UserError, named
from . import steps

# Kaggle names shards like "00-512x512-798.tfrec": the last number is the record count.
COUNT_IN_NAME = re.compile(r"-(\d+)\.tfrec$")

SHOWN = 5  # shards named in one error; doctor --scan lists them all
WHOLE_FILE = -1  # a problem of the file, not of one record
# A split is not read again while the fields a check reads and its files stay the same.
READS = ("image_key", "label_key", "id_key", "num_classes", "multi_label", "image_size", "metric")
checked: dict[tuple, list] = {}


@dataclasses.dataclass
class Shard:
    """A shard's records, problems (records each, the first), notes, ids, values or shares."""

    path: str
    records: int = 0
    problems: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    first: dict[str, int] = dataclasses.field(default_factory=dict)
    notes: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    ids: list[str] = dataclasses.field(default_factory=list)
    bad: set[int] = dataclasses.field(default_factory=set)  # the numbers of bad records
    first_ids: dict[str, str] = dataclasses.field(default_factory=dict)  # of test records
    labels: list[list[float]] = dataclasses.field(default_factory=list)

    def problem(self, what: str, index: int) -> None:
        self.problems[what] += 1
        self.first.setdefault(what, index)
        if index != WHOLE_FILE:
            self.bad.add(index)

    def describe(self) -> str:
        def said(what: str, count: int) -> str:
            if self.first[what] == WHOLE_FILE:
                return what
            by_id = f", id {self.first_ids[what]}" if what in self.first_ids else ""
            first = f"first: record {self.first[what]}{by_id}"
            return f"{count} of {self.records} records {what} ({first})"

        return f"{self.path}: " + "; ".join(said(*problem) for problem in self.problems.items())


def scan_shard(path: str, cfg: Config, labeled: bool, decode: bool = False) -> Shard:
    """Every record of the shard: its features, its label or id, and with `decode` its image."""
    shard = Shard(path)
    try:
        for index, raw in enumerate(tf.data.TFRecordDataset(path).as_numpy_iterator()):
            shard.records += 1
            check_record(shard, index, raw, cfg, labeled, decode)
    except tf.errors.DataLossError:  # the file ends inside a record, or its bytes changed
        shard.problem(f"is truncated or corrupt after record {shard.records}", WHOLE_FILE)
        return shard
    promised = COUNT_IN_NAME.search(os.path.basename(path))
    if shard.records == 0:
        shard.problem("holds no records", WHOLE_FILE)
    elif promised and int(promised.group(1)) != shard.records:
        what = f"has a name that promises {promised.group(1)} records, and holds {shard.records}"
        shard.problem(what, WHOLE_FILE)
    return shard


def check_record(shard: Shard, index: int, raw: bytes, cfg: Config, labeled: bool, decode):
    try:
        features = tf.train.Example.FromString(raw).features.feature
    except DecodeError:
        shard.problem("are not tf.train.Example records", index)
        return
    image = features.get(cfg.image_key)
    if image is None or not image.bytes_list.value:
        shard.problem(f"have no {cfg.image_key!r} feature ({named('image_key')})", index)
    elif decode:
        check_image(shard, index, image.bytes_list.value[0], cfg.image_size)
    key = features.get(cfg.id_key)  # optional in a labeled record: kept where given
    if labeled:
        label = features.get(cfg.label_key)
        if what := label_problem(label, cfg):
            shard.problem(what, index)
        elif targets(cfg) != "classes":
            shard.labels.append(list(label.float_list.value))
        if key is not None and key.bytes_list.value:
            shard.ids.append(key.bytes_list.value[0].decode(errors="replace"))
        return
    if key is None or not key.bytes_list.value:
        shard.problem(f"have no {cfg.id_key!r} feature ({named('id_key')})", index)
        return
    try:
        shard.ids.append(key.bytes_list.value[0].decode())
    except UnicodeDecodeError:
        shard.problem("have ids that are not UTF-8 text", index)
        return
    for what, first in shard.first.items():  # a test record's problem is named by its id
        if first == index:
            shard.first_ids[what] = shard.ids[-1]


def label_problem(label, cfg: Config) -> str:
    """What is wrong with a record's label (a tf.train.Feature, or None; "": nothing), the one
    check of labels: a class number, a multi-hot row, or num_classes values or shares."""
    floats, key, multi_hot = targets(cfg) != "classes", cfg.label_key, cfg.multi_label
    row = [] if label is None else (label.float_list if floats else label.int64_list).value
    if not row:
        return f"have no {key!r} feature ({named('label_key')})"
    if floats:
        wrong = len(row) != cfg.num_classes
        return f"have another number of values than {named('num_classes')}" if wrong else ""
    if multi_hot and len(row) == 1:
        return (
            f"have one class number in {key!r}, and this multi-label run expects a multi-hot "
            f"row; set {named('multi_label')} to False (--no-multi-label)"
        )
    if multi_hot and len(row) != cfg.num_classes:
        return (
            f"have multi-hot rows in {key!r} of another length than {cfg.num_classes} "
            f"({named('num_classes')})"
        )
    if multi_hot:
        return f"have multi-hot rows in {key!r} with values not 0 or 1" if set(row) - {0, 1} else ""
    if len(row) > 1:
        return (
            f"have multi-hot rows in {key!r} (several labels per image), and this run expects "
            f"one class number; set {named('multi_label')}"
        )
    if not 0 <= row[0] < cfg.num_classes:
        return f"have labels outside 0..{cfg.num_classes - 1} ({named('num_classes')})"
    return ""


def check_image(shard: Shard, index: int, encoded: bytes, size: int) -> None:
    try:
        image = steps.decoded(encoded)  # as training decodes it
    except tf.errors.InvalidArgumentError:
        shard.problem("have image bytes that do not decode", index)
        return
    if not tf.io.is_jpeg(encoded):
        shard.notes["PNG or other non-JPEG images (decoded as RGB all the same)"] += 1
    if tuple(image.shape[:2]) != (size, size):
        shard.notes[f"images of another size than {size}x{size} (resized)"] += 1


def scan_split(files: list[str], cfg: Config, labeled: bool, decode: bool = False) -> list[Shard]:
    """Every shard of a split; a progress bar when images are decoded (doctor --scan)."""
    shards = tqdm(files, desc="scanning", unit="shard", disable=not decode)
    return [scan_shard(path, cfg, labeled, decode) for path in shards]


def skipped(shards: list[Shard]) -> frozenset[str]:
    """The bad records of these shards as the pipeline leaves them out: "<file>#<number>"."""
    return frozenset(f"{shard.path}#{index}" for shard in shards for index in shard.bad)


def check_split(files: list[str], cfg: Config, field: str, labeled: bool) -> list[Shard]:
    """Every shard of the split (read once while unchanged); one error naming each bad shard."""
    stamps = [(stat.length, stat.mtime_nsec) for stat in map(tf.io.gfile.stat, files)]
    key = (labeled, steps.decoded, *(getattr(cfg, name) for name in READS), *files, *stamps)
    if key not in checked:
        checked[key] = scan_split(files, cfg, labeled)
    shards = checked[key]
    if bad := [shard for shard in shards if shard.problems]:
        listed = "\n".join(f"  {shard.describe()}" for shard in bad[:SHOWN])
        more = f"\n  and {len(bad) - SHOWN} more shards" if len(bad) > SHOWN else ""
        raise UserError(
            f"{len(bad)} of {len(shards)} shards of {named(field)} have bad records:\n"
            f"{listed}{more}\nwrite them again or leave them out of {field}; "
            "`doctor --scan` lists every problem"
        )
    return shards
