"""Label corrections a competitor keeps, such as the rows of `audit`'s label_audit.csv:
training images to leave out (Config.drop_ids) and labels to change (Config.relabel), each a
CSV of ids (and labels). They apply as the training pipeline reads each example; the records,
the images and the training CSV stay as they are. Validation keeps the labels it was given,
so a run's CV is scored on the same answers as the run the corrections came from."""

from __future__ import annotations

import dataclasses

import pandas as pd
import tensorflow as tf

from ..config import Config, class_names
from ..errors import UserError, first_line, named
from ..platform.paths import Places
from .tables import read_csv

# Where the labels of a --relabel file are: the label column, or the audit's column of the
# label its models give.
LABELS = ("label", "suggested_label")
LEFT_OUT = -2  # what `applied`'s table of new labels holds for an id left out (-1: unchanged)


@dataclasses.dataclass(frozen=True)
class Corrections:
    """Ids to leave out of training, and new labels by id (class numbers)."""

    dropped: frozenset[str] = frozenset()
    relabeled: dict[str, int] = dataclasses.field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.dropped or self.relabeled)

    def training(self, ids: list[str]) -> int:
        """How many of these training images remain to train on."""
        return sum(1 for key in ids if key not in self.dropped)

    def applied(self, examples: tf.data.Dataset, cfg: Config) -> tf.data.Dataset:
        """The examples (each with its id) without the ids left out, relabeled."""
        keys = sorted(self.dropped | self.relabeled.keys())
        values = tf.constant([self.relabeled.get(key, LEFT_OUT) for key in keys], tf.int64)
        labels = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(keys, values), -1)

        def relabel(ex):
            new = labels.lookup(ex[cfg.id_key])
            given = ex[cfg.label_key]
            return {**ex, cfg.label_key: tf.where(new >= 0, tf.cast(new, given.dtype), given)}

        kept = examples.filter(lambda ex: labels.lookup(ex[cfg.id_key]) != LEFT_OUT)
        return kept.map(relabel, num_parallel_calls=tf.data.AUTOTUNE)


def read(cfg: Config, places: Places) -> Corrections:
    """The corrections Config.drop_ids and Config.relabel name (none where both are empty)."""
    dropped = frozenset(rows_of(cfg, places, "drop_ids")[1]["id"]) if cfg.drop_ids else frozenset()
    relabeled = new_labels(cfg, places) if cfg.relabel else {}
    both = sorted(dropped & relabeled.keys())
    if both:
        raise UserError(
            f"{named('drop_ids')} and {named('relabel')} both name {len(both)} ids (e.g. "
            f"{both[0]!r}): an image is left out or relabeled, not both; take it out of one file"
        )
    return Corrections(dropped, relabeled)


def rows_of(cfg: Config, places: Places, field: str) -> tuple[str, pd.DataFrame]:
    """The file a field names, read as text, its column of ids named `id` (its first, unless
    one is named `id` or Config.id_column), each id once."""
    path = places.file(field)
    try:
        rows = read_csv(path, f"{named(field)} {path}")
    except (OSError, ValueError) as error:
        raise UserError(
            f"{named(field)} {path}: cannot be read as a CSV of ids ({first_line(error)}); "
            "give a CSV whose first row names its columns, one of them `id`"
        ) from None
    column = next((name for name in ("id", cfg.id_column) if name in rows.columns), rows.columns[0])
    rows = rows.rename(columns={column: "id"})
    repeated = rows["id"][rows["id"].duplicated()].tolist()
    if repeated:
        raise UserError(
            f"{named(field)} {path}: id {repeated[0]!r} is named twice; name each image once"
        )
    return path, rows


def new_labels(cfg: Config, places: Places) -> dict[str, int]:
    """Config.relabel's labels as class numbers: by name (the data's class names) or number."""
    if cfg.multi_label:
        raise UserError(
            f"{named('relabel')}: a run of several labels per image ({named('multi_label')}) "
            f"takes no new labels; leave such images out with {named('drop_ids')}"
        )
    path, rows = rows_of(cfg, places, "relabel")
    column = next((name for name in LABELS if name in rows.columns), None)
    if column is None:
        raise UserError(
            f"{named('relabel')} {path}: no column of labels (it has {', '.join(rows.columns)}); "
            "give a CSV of id,label (label_audit.csv's suggested_label serves too)"
        )
    names = class_names(cfg) or []
    numbers = {name: number for number, name in enumerate(names)}
    labels = {}
    for line, (key, label) in enumerate(zip(rows["id"], rows[column], strict=True), 2):
        if label in numbers:
            labels[key] = numbers[label]
        elif label.isdigit() and int(label) < cfg.num_classes:
            labels[key] = int(label)
        else:
            known = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
            spelled = f"a class name ({known}) or" if names else "a"
            raise UserError(
                f"{named('relabel')} {path}, line {line}: label {label!r} of id {key!r} is no "
                f"class; give {spelled} class number below {cfg.num_classes}"
            )
    return labels


def checked(places: Places, made: Corrections, training: list[str], labeled: set[str]) -> str:
    """What the corrections do to this run's training images (`training`, their ids), said in
    one line; ids of no labeled image (`labeled`: every split's), or corrections that would
    leave most of the training images out, are refused."""
    file = places.file  # of each corrections field
    for field, ids in (("drop_ids", made.dropped), ("relabel", made.relabeled.keys())):
        unknown = sorted(set(ids) - labeled)
        if unknown:
            raise UserError(
                f"{named(field)} {file(field)}: {len(unknown)} ids are no labeled image's (e.g. "
                f"{unknown[0]!r}); give the ids as oof.csv or the training CSV spells them"
            )
    kept = made.training(training)
    if made.dropped and kept < len(training) / 2:
        raise UserError(
            f"{named('drop_ids')} {file('drop_ids')} leaves out {len(training) - kept} "
            f"of the {len(training)} training images, more than half: give only the rows to "
            "leave out (such as audit's likely_wrong.csv)"
        )
    ours = set(training)
    said = []
    if made.dropped:
        left_out = f"{len(training) - kept} of {len(training)} training images left out"
        said.append(f"{left_out} ({file('drop_ids')})")
    if made.relabeled:
        said.append(f"{len(ours & made.relabeled.keys())} relabeled ({file('relabel')})")
    elsewhere = len((made.dropped | made.relabeled.keys()) - ours)
    if elsewhere:
        said.append(f"{elsewhere} more named validate, with the labels they were given")
    return "label corrections: " + "; ".join(said)
