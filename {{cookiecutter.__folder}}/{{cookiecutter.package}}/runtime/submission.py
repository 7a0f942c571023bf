"""submission.csv as the competition's sample asks for it: its columns, its ids as it spells
them, one row per id in its order, written whole.

The sample's columns say what to write besides the id (Config.submission can say it
instead): one column of labels (one class per image, or several separated by spaces for
multi-label competitions), or one column of probabilities per class.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import numpy as np
import pandas as pd
import tensorflow as tf

from . import tables
from .config import Config, UserError, first_line, given, named
from .files import IMAGE_SUFFIXES, written_whole
from .paths import field_path, reaching
from .thresholds import applied


@dataclasses.dataclass
class Layout:
    """What submission.csv holds: the id column, then `columns`: the one label column
    ("labels"), or one column per class, in class order ("probabilities")."""

    id_column: str
    kind: str
    columns: list[str]
    order: list[str]  # the sample's columns as it orders them


def describe(shape: Layout, multi_label: bool) -> str:
    """The submission's columns, as doctor and predict say them."""
    if shape.kind == "probabilities":
        return f"{shape.id_column} and a probability column per class"
    return f"{shape.id_column} and {'labels' if multi_label else 'a class'} in {shape.columns[0]}"


def load_sample(cfg: Config) -> pd.DataFrame | None:
    """The sample submission, or None (rows sorted by id) when there is none. A path the user
    gave must exist; the default is looked up in the data folder."""
    if not cfg.sample_submission:
        return None
    path = field_path(cfg, "sample_submission")
    with reaching(path):
        return read_sample_at(cfg, path)


def read_sample_at(cfg: Config, path: str) -> pd.DataFrame | None:
    if not tf.io.gfile.exists(path):
        if given(cfg, "sample_submission"):
            raise UserError(
                f"{path} ({named('sample_submission')}, from the {given(cfg, 'sample_submission')}) "
                "does not exist; give the sample's path from where you run, or leave it out to "
                "use the data folder's sample_submission.csv"
            )
        print(f"no sample submission at {path}: rows are sorted by id, unchecked")
        return None
    if tf.io.gfile.isdir(path):
        raise UserError(
            f"{path} ({named('sample_submission')}) is a folder; give the sample submission's "
            "CSV file, as the competition's data page lists it (often sample_submission.csv)"
        )
    with tf.io.gfile.GFile(path, "rb") as file:  # gs:// too
        return read_sample(file.read(), path)


def read_sample(data: bytes, where: str) -> pd.DataFrame:
    """The sample submission, every value as text (ids such as 007 stay as they are). A
    byte-order mark, as spreadsheet programs write, is read past."""
    try:
        sample = tables.read_csv(data)
    except ValueError as error:  # pandas' parser errors and undecodable bytes are ValueErrors
        raise UserError(
            f"{where} is not a CSV file pandas can read ({first_line(error)}); give the "
            "competition's sample submission "
            f"({named('sample_submission')})"
        ) from error
    if len(sample.columns) < 2:
        raise UserError(
            f"{where} has columns {list(sample.columns)}: a sample submission has an id column "
            f"and at least one more; check {named('sample_submission')}"
        )
    sample.attrs["path"] = where
    return sample


def layout(cfg: Config, sample: pd.DataFrame | None, num_classes: int, names) -> Layout:
    """The submission's columns: the sample's, else the config's. The id column is the one the
    user gave, else the records' (their manifest's) when the sample has it, else the sample's
    first; the rest are one label column or a column per class."""
    if sample is None:
        kind = "probabilities" if cfg.submission == "probabilities" else "labels"
        columns = (
            list(names or map(str, range(num_classes)))
            if kind == "probabilities"
            else [cfg.label_column]
        )
        return Layout(cfg.id_column, kind, columns, [cfg.id_column, *columns])
    where, present = sample.attrs.get("path", "the sample submission"), list(sample.columns)
    for field in ("id_column", "label_column"):
        if given(cfg, field) and getattr(cfg, field) not in present:
            raise UserError(
                f"{where} has columns {present}, not {getattr(cfg, field)!r} ({named(field)}, "
                f"from the {given(cfg, field)}); give one of its columns, or leave it out to "
                "follow the sample"
            )
    id_column = cfg.id_column if cfg.id_column in present else present[0]
    rest = [column for column in present if column != id_column]
    kind = cfg.submission if cfg.submission != "auto" else (
        "probabilities" if len(rest) > 1 else "labels"
    )  # fmt: skip
    if kind == "labels" and len(rest) != 1:
        raise UserError(
            f"{where} has {len(rest)} columns besides {id_column!r} ({rest}); a labels "
            f"submission has one. Set {named('submission')} probabilities for a column per class"
        )
    if kind == "probabilities":
        rest = class_columns(rest, num_classes, names, where)
    repeated = sample[id_column][sample[id_column].duplicated()].unique().tolist()
    if repeated:
        raise UserError(
            f"{where}: {len(repeated)} ids occur more than once in column {id_column!r} "
            f"(e.g. {repeated[:3]}); a submission has one row per id. Check that this is the "
            f"competition's sample ({named('sample_submission')}) and that {id_column!r} is "
            f"its id column ({named('id_column')})"
        )
    return Layout(id_column, kind, rest, present)


def class_columns(columns: list[str], num_classes: int, names, where: str) -> list[str]:
    """The sample's probability columns in class order, matched by name: the class names, or
    the class numbers (0, 1, ...), in whatever order the sample has them. Columns that are
    neither are refused: matched by position, one class's probability would be written under
    another's name, and nothing would show it before the leaderboard."""
    numbers = [str(number) for number in range(num_classes)]
    for wanted in (names or [], numbers):
        if wanted and len(columns) == len(wanted) and set(columns) == set(wanted):
            return list(wanted)
    expected = numbers if not names or all(column.isdigit() for column in columns) else names
    unknown = [column for column in columns if column not in expected]
    missing = [name for name in expected if name not in columns]
    said = []
    if unknown:
        said.append(f"column(s) {shown(unknown)}: no class of the model")
    if missing:
        said.append(f"class(es) {shown(missing)}: no column")
    classes = "class numbers" if expected is numbers else "class names"
    raise UserError(
        f"{where}: {'; '.join(said) or f'{len(columns)} columns'} (the model's {num_classes} "
        f"{classes}: {shown(expected)}); a probability column per class, named by it. Check the "
        f"sample and {named('class_names')}, which names the classes in class order"
    )


def shown(items: list[str], most: int = 5) -> str:
    """A list as a message names it: the first few, and how many more."""
    more = f" and {len(items) - most} more" if len(items) > most else ""
    return ", ".join(repr(item) for item in items[:most]) + more


def numbered(shape: Layout, names, numbers_wanted: bool) -> str:
    """Where the classes have names and the submission numbers them, which number is which
    class, as one line to print: the records number the classes in their names' order, and
    the competition's data page says whether its numbers are the same."""
    if not names or not (numbers_wanted or shape.columns == [str(n) for n in range(len(names))]):
        return ""
    pairs = ", ".join(f"{number} = {name}" for number, name in enumerate(names))
    return (
        f"the sample submission numbers the classes, in class order: {pairs}; check this "
        "against the competition's data page"
    )


def as_sample_spells(ids: list[str], sample: pd.DataFrame | None, id_column: str) -> list[str]:
    """The ids as the sample spells them: records made from file names say t0.jpg where a
    sample may say t0, or the other way round, and an image in a nested folder (sub/t0.jpg) may
    be t0.jpg there. Unchanged when they match already, or when no spelling pairs them up one
    to one."""
    if sample is None:
        return ids
    wanted = set(sample[id_column])
    best, matched = ids, sum(key in wanted for key in ids)
    if matched == len(ids):
        return ids
    for spell in SPELLINGS:
        by_spelling = {spell(key): key for key in wanted}
        if len(by_spelling) < len(wanted) or len({spell(key) for key in ids}) < len(ids):
            continue  # two ids share a spelling: pairing by it could swap rows
        spelled = [by_spelling.get(spell(key), key) for key in ids]
        hits = sum(key in wanted for key in spelled)
        if hits > matched:
            best, matched = spelled, hits
    return best


def stem(key: str) -> str:
    base, extension = os.path.splitext(key)
    return base if extension.lower() in IMAGE_SUFFIXES else key


# Ways an id may be spelled on one side and not the other: without its image extension, and
# by its file name alone, without the folders above it.
SPELLINGS = (stem, lambda key: stem(key.rsplit("/", 1)[-1]))


def check_ids(
    ids: list[str], sample: pd.DataFrame | None, id_column: str, fields=("test_files", "id_key")
) -> None:
    """Every test id once, and (with a sample) exactly the sample's ids, as it spells them:
    predict checks this before the model runs, and again before it writes. `fields` are the
    Config fields the test ids came from, for the message."""
    given_ids = pd.Series(as_sample_spells(ids, sample, id_column), dtype=str)
    repeated = given_ids[given_ids.duplicated()].unique().tolist()
    if repeated:
        raise UserError(
            f"{len(repeated)} ids occur more than once in the test records, e.g. {repeated[:3]}; "
            f"check {named(fields[0])} for a shard given twice or ids that are not unique"
        )
    if sample is None:
        return
    missing = sample[id_column][~sample[id_column].isin(given_ids)].tolist()
    unexpected = sorted(given_ids[~given_ids.isin(sample[id_column])])
    if missing or unexpected:
        held = "image" if fields[0] == "test_images" else "record"  # test files, or records
        where = f" ({sample.attrs['path']})" if "path" in sample.attrs else ""
        raise UserError(
            f"test {held}s and sample submission disagree: {len(missing)} sample ids have no "
            f"test {held} (e.g. {missing[:3]}), {len(unexpected)} test ids are not in the sample "
            f"(e.g. {unexpected[:3]}); check "
            + ", ".join(named(field) for field in fields)
            + f" and {named('sample_submission')}{where}"
        )


def values(
    probabilities: np.ndarray, shape: Layout, names, numbers_wanted: bool, thresholds=None
) -> pd.DataFrame:
    """What the submission says of each image, from its class probabilities: the
    probabilities themselves, the most probable class (its name unless the competition
    wants numbers), or with `thresholds` (multi-label) every class at or above its own
    threshold, names separated by spaces (the most probable one when none is)."""
    if shape.kind == "probabilities":
        return pd.DataFrame(probabilities, columns=shape.columns)
    labels = [str(number) for number in range(probabilities.shape[1])]
    if names and not numbers_wanted:
        labels = list(names)
    if thresholds is None:
        chosen = [labels[number] for number in probabilities.argmax(-1)]
    else:
        above = applied(probabilities, thresholds)
        above[np.arange(len(above)), probabilities.argmax(-1)] = True  # at least one label
        chosen = [" ".join(labels[n] for n in np.flatnonzero(row)) for row in above]
    return pd.DataFrame({shape.columns[0]: chosen})


def wants_numbers(sample: pd.DataFrame | None, shape: Layout, names) -> bool:
    """Whether the sample's labels are class numbers where the classes also have names (the
    names are then for people: pictures and reports)."""
    if sample is None or shape.kind != "labels" or not names:
        return False
    shown = set(sample[shape.columns[0]]) - {""}
    return bool(shown) and not shown & set(names) and all(v.isdigit() for v in shown)


def arrange(
    ids: list[str], predicted: pd.DataFrame, sample: pd.DataFrame | None, shape: Layout
) -> pd.DataFrame:
    """The rows to submit: in the sample's rows and columns (sorted by id without a sample),
    every id exactly once, spelt as the sample spells it."""
    check_ids(ids, sample, shape.id_column)
    rows = pd.concat(
        [
            pd.DataFrame({shape.id_column: as_sample_spells(ids, sample, shape.id_column)}),
            predicted,
        ],
        axis=1,
    )
    if sample is None:
        return rows.sort_values(shape.id_column, ignore_index=True)
    rows = sample[[shape.id_column]].merge(
        rows, on=shape.id_column, how="left", validate="one_to_one"
    )
    return rows[shape.order]


def write(path: Path, rows: pd.DataFrame) -> None:
    with written_whole(path) as temporary:
        rows.to_csv(temporary, index=False)
