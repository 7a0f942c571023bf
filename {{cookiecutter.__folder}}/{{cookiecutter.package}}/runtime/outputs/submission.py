"""submission.csv as the competition's sample asks for it: its columns, its ids as it spells them,
one row per id in its order, written whole, in one of submission_shapes.py's shapes."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
import tensorflow as tf

from ..config import Config, Sources, came_from, class_names, given, names_in, targets
from ..data import tables
from ..errors import UserError, first_line, named
from ..learning import grades
from ..platform.files import MANIFEST, reaching, written_whole
from ..platform.paths import Places
from ..scoring import METRICS, as_rows
from ..submission_shapes import SHAPES, Labels, Shape, TopLabels, probability_columns


def load_sample(cfg: Config, sources: Sources, places: Places) -> pd.DataFrame | None:
    """The sample submission, or None (rows sorted by id): a path the user gave must exist."""
    if not cfg.sample_submission:
        return None
    path = places.file("sample_submission")
    with reaching(path):
        if not tf.io.gfile.exists(path):
            if given(cfg, sources, "sample_submission"):
                raise UserError(
                    f"{path} ({came_from(cfg, sources, 'sample_submission')}) does not exist; "
                    "give the sample's path from where you run, or leave it out to use the data "
                    "folder's sample_submission.csv"
                )
            print(f"no sample submission at {path}: rows are sorted by id, unchecked")
            return None
        if tf.io.gfile.isdir(path):
            raise UserError(
                f"{path} ({named('sample_submission')}) is a folder; give the sample "
                "submission's CSV file, as the competition's data page lists it (often "
                "sample_submission.csv)"
            )
        with tf.io.gfile.GFile(path, "rb") as file:  # gs:// too
            return read_sample(file.read(), path)


def read_sample(data: bytes, where: str) -> pd.DataFrame:
    """The sample submission as text (tables.read_csv), with an id column and at least one more."""
    try:
        sample = tables.read_csv(data, where)
    except ValueError as error:  # pandas' parser errors and undecodable bytes are ValueErrors
        raise UserError(
            f"{where} is not a CSV file pandas can read ({first_line(error)}); give the "
            f"competition's sample submission ({named('sample_submission')})"
        ) from error
    if len(sample.columns) < 2:
        raise UserError(
            f"{where} has columns {list(sample.columns)}: a sample submission has an id column "
            f"and at least one more; check {named('sample_submission')}"
        )
    sample.attrs["path"] = where
    return sample


def layout(
    cfg: Config, sources: Sources, sample: pd.DataFrame | None, num_classes: int, names, ids=()
) -> Shape:
    """The submission's shape (`shape_of`); its id column the user's or the records' where the
    sample has it, else the one holding most test `ids` (a sample may put its labels first)."""
    if sample is None:
        shape = shape_of(cfg, 1).without_sample(cfg.id_column, cfg.label_column, names, num_classes)
        return with_k(shape, cfg)
    where, present = sample.attrs.get("path", "the sample submission"), list(sample.columns)
    for field in ("id_column", "label_column"):  # label_column: one per target
        if given(cfg, sources, field) and not set(names_in(getattr(cfg, field))) <= set(present):
            raise UserError(
                f"{where} has columns {present}, not {getattr(cfg, field)!r} "
                f"({came_from(cfg, sources, field)}); give one of its columns, or leave it out to "
                "follow the sample"
            )
    id_column = cfg.id_column if cfg.id_column in present else holding(sample, ids)
    rest = [column for column in present if column != id_column]
    shape = shape_of(cfg, len(rest)).of_sample(sample, id_column, rest, names, num_classes)
    repeated = sample[id_column][sample[id_column].duplicated()].unique().tolist()
    if repeated:
        raise UserError(
            f"{where}: {len(repeated)} ids occur more than once in column {id_column!r} "
            f"(e.g. {repeated[:3]}); a submission has one row per id. Check that this is the "
            f"competition's sample ({named('sample_submission')}) and that {id_column!r} is "
            f"its id column ({named('id_column')})"
        )
    return with_k(shape, cfg)


def holding(sample: pd.DataFrame, ids) -> str:
    """The sample's column that holds the most of `ids` as it spells them; its first on a tie."""
    held = [len(set(as_sample_spells(ids, sample, name)) & set(sample[name])) for name in sample]
    return sample.columns[held.index(max(held))]


def shape_of(cfg: Config, columns: int) -> type[Shape]:
    """Config.submission's shape, or auto's pick by the metric and the sample's other `columns`."""
    if cfg.submission != "auto":
        return SHAPES[cfg.submission]
    if targets(cfg) == "values":
        return SHAPES["values"]
    if columns > 1:
        return SHAPES["probabilities"]
    if METRICS[cfg.metric].ranked:
        return SHAPES["top"]
    binary = cfg.num_classes == 2 and not cfg.multi_label
    positive = binary and METRICS[cfg.metric].reads == "probabilities"
    return SHAPES["positive" if positive else "labels"]


def with_k(shape: Shape, cfg: Config) -> Shape:
    return dataclasses.replace(shape, k=cfg.map_k) if isinstance(shape, TopLabels) else shape


def written_from(cfg: Config, shape: Shape, probabilities, cuts) -> tuple:
    """The probabilities and thresholds `shape` writes from: where qwk's cuts were fitted between
    grades, each image's grade as a one-hot row (grades.py), so that labels hold the grade."""
    # One test, cfg's first: a notebook whose metric is not graded carries no grades.py.
    if (
        METRICS[cfg.metric].graded
        and not cfg.multi_label
        and cuts is not None
        and (type(shape) is Labels)
    ):
        return as_rows(grades.applied(probabilities, cuts), probabilities.shape[1]), None
    return probabilities, cuts


def as_sample_spells(ids: list[str], sample: pd.DataFrame | None, id_column: str) -> list[str]:
    """The ids as the sample spells them (sub/t0.jpg as t0), where a spelling pairs them 1:1."""
    if sample is None:
        return ids
    wanted = set(sample[id_column])
    best, matched = ids, sum(key in wanted for key in ids)
    for spell in SPELLINGS:
        by_spelling = {spell(key): key for key in wanted}
        if len(by_spelling) < len(wanted) or len({spell(key) for key in ids}) < len(ids):
            continue  # two ids share a spelling: pairing by it could swap rows
        spelled = [by_spelling.get(spell(key), key) for key in ids]
        hits = sum(key in wanted for key in spelled)
        if hits > matched:
            best, matched = spelled, hits
    return best


# An id without its file's extension, and by its file name alone, without its folders.
SPELLINGS = (tables.stem, lambda key: tables.stem(key.rsplit("/", 1)[-1]))


def check_ids(
    ids: list[str], sample: pd.DataFrame | None, id_column: str, fields=("test_files", "id_key"),
    skipped: dict[str, str] | None = None,
) -> None:  # fmt: skip
    """Every test id once, and (with a sample) exactly the sample's ids as it spells them.
    `fields`: the Config fields the ids came from; `skipped`: why `records` skipped each, by id."""
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
    skipped = skipped or {}
    spelled = as_sample_spells(list(skipped), sample, id_column)
    unreadable = dict(zip(spelled, skipped.values(), strict=True))
    lost = [key for key in missing if key in unreadable]
    if lost and len(lost) == len(missing) and not unexpected:  # records left them out
        raise UserError(
            f"{len(lost)} sample ids have no test record because `records` skipped their "
            f"images as unreadable (e.g. {lost[0]!r}: {unreadable[lost[0]]}); a submission needs "
            "every id: replace those images with readable ones and write the records again "
            f"(the records' {MANIFEST} lists every skipped file)"
        )
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


def answers_of(
    cfg: Config, places: Places, sample: pd.DataFrame | None, id_column: str, ids: list[str]
) -> list[str] | None:
    """Each test image's answer where several make one (views of a side): its Config.answer_columns
    in Config.test_csv joined by _, else its sample id column; None where each is its own."""
    columns = names_in(cfg.answer_columns) if cfg.answer_columns else [id_column]
    if not cfg.test_csv or (sample is None and not cfg.answer_columns):
        return None
    where = places.file("test_csv")
    try:
        table = tables.read_csv(where)
    except (OSError, ValueError) as error:
        raise UserError(f"{named('test_csv')} {where}: {first_line(error)}") from None
    key = cfg.id_column if cfg.id_column in table else table.columns[0]  # the image's id
    absent = [column for column in columns if column not in table]
    if cfg.answer_columns and absent:
        raise UserError(
            f"{named('answer_columns')} {cfg.answer_columns}: {where} has no column "
            f"{absent[0]!r} (its columns: {', '.join(table.columns)}); name the test table's"
        )
    if absent or key in columns:
        return None  # each image is its own answer
    by_image = tables.answer_by_id(table, key, columns)
    found = [next((by_image[k] for k in tables.spellings(i) if k in by_image), None) for i in ids]
    if None in found:
        raise UserError(
            f"{where} has no row for {found.count(None)} of the {len(ids)} test images (such "
            f"as {ids[found.index(None)]!r}); give each its row, with its answer in "
            + ", ".join(columns)
        )
    if sample is not None:
        lacking = sample[id_column][~sample[id_column].isin(found)].tolist()
        if lacking:
            raise UserError(
                f"{len(lacking)} ids of the sample have no test image in {where} (such as "
                f"{lacking[0]!r}); a submission needs every id: check {named('test_images')} "
                f"and the table's {', '.join(columns)}"
            )
        extra = sorted(set(found) - set(sample[id_column]))
        if extra:
            print(
                f"left out: the images of {len(extra)} answers the sample lacks (such as "
                f"{extra[0]!r})"
            )
    return found


def arrange(
    ids: list[str], predicted: pd.DataFrame, sample: pd.DataFrame | None, shape: Shape
) -> pd.DataFrame:
    """The rows to submit, every id once, in the sample's rows, columns and spelling."""
    check_ids(ids, sample, shape.id_column)
    return in_sample_order(ids, predicted, sample, shape.id_column)[shape.order]


def in_sample_order(
    ids: list[str], values: pd.DataFrame, sample: pd.DataFrame | None, id_column: str
) -> pd.DataFrame:
    """`values`, a row per id, with the ids spelt as the sample spells them, in its order."""
    spelled = pd.DataFrame({id_column: as_sample_spells(ids, sample, id_column)})
    rows = pd.concat([spelled, values], axis=1)
    if sample is None:
        return rows.sort_values(id_column, ignore_index=True)
    return sample[[id_column]].merge(rows, on=id_column, how="left", validate="one_to_one")


def probabilities_table(
    cfg: Config, ids: list[str], probabilities, sample: pd.DataFrame | None, shape: Shape
) -> pd.DataFrame:
    """Each class's probability for each id, in submission.csv's rows (what a blend reads)."""
    columns = probability_columns(class_names(cfg), cfg.num_classes)
    values = pd.DataFrame(probabilities, columns=columns)
    return in_sample_order(ids, values, sample, shape.id_column)


def write(path: Path, rows: pd.DataFrame) -> None:
    with written_whole(path) as temporary:
        rows.to_csv(temporary, index=False)
