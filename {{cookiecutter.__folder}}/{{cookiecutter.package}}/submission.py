"""submission.csv: one row per test id, in the sample submission's order, written whole."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import tensorflow as tf

from .config import Config, UserError, data_path, named
from .files import written_whole


def load_sample(cfg: Config) -> pd.DataFrame | None:
    """The sample submission, or None (rows sorted by id) when the config names none."""
    if not cfg.sample_submission:
        return None
    path = data_path(cfg, cfg.sample_submission)
    if not tf.io.gfile.exists(path):
        print(f"no sample submission at {path}: rows are sorted by id, unchecked")
        return None
    if tf.io.gfile.isdir(path):
        raise UserError(
            f"{path} ({named('sample_submission')}) is a folder; give the sample submission's "
            "CSV file, as the competition's data page lists it (often sample_submission.csv)"
        )
    with tf.io.gfile.GFile(path, "rb") as file:  # gs:// too
        return read_sample(file.read(), path, cfg.id_column, cfg.label_column)


def read_sample(data: bytes, where: str, id_column: str, label_column: str) -> pd.DataFrame:
    """The sample submission, every value as text (ids such as 007 stay as they are), after
    checking its columns. A byte-order mark, as spreadsheet programs write, is read past."""
    try:
        sample = pd.read_csv(
            io.BytesIO(data), dtype=str, keep_default_na=False, encoding="utf-8-sig"
        )
    except ValueError as error:  # pandas' parser errors and undecodable bytes are ValueErrors
        raise UserError(
            f"{where} is not a CSV file pandas can read ({type(error).__name__}: "
            f"{str(error).splitlines()[0]}); give the competition's sample submission "
            f"({named('sample_submission')})"
        ) from error
    if sorted(sample.columns) != sorted([id_column, label_column]):
        raise UserError(
            f"{where} has columns {list(sample.columns)}, expected {id_column!r} and "
            f"{label_column!r}; set {named('id_column')} and {named('label_column')} to the "
            "sample's column names"
        )
    return sample


def arrange(
    ids: list[str],
    labels: list,
    sample: pd.DataFrame | None,
    id_column: str = "id",
    label_column: str = "label",
) -> pd.DataFrame:
    """The rows to submit: in the sample's rows and columns (sorted by id without a sample),
    every id exactly once."""
    check_ids(ids, sample, id_column)
    predicted = pd.DataFrame({id_column: ids, label_column: labels})
    if sample is None:
        return predicted.sort_values(id_column, ignore_index=True)
    rows = sample[[id_column]].merge(predicted, on=id_column, how="left", validate="many_to_one")
    return rows[list(sample.columns)]


def check_ids(ids: list[str], sample: pd.DataFrame | None, id_column: str = "id") -> None:
    """Every test id once, and (with a sample) exactly the sample's ids: predict checks this
    before the model runs, and again before it writes."""
    given = pd.Series(ids, dtype=str)
    repeated = given[given.duplicated()].unique().tolist()
    if repeated:
        raise UserError(
            f"{len(repeated)} ids occur more than once in the test records, e.g. {repeated[:3]}; "
            f"check {named('test_files')} for a shard given twice or ids that are not unique"
        )
    if sample is None:
        return
    missing = sample[id_column][~sample[id_column].isin(given)].tolist()
    unexpected = sorted(given[~given.isin(sample[id_column])])
    if missing or unexpected:
        raise UserError(
            f"test records and sample submission disagree: {len(missing)} sample ids have no "
            f"test record (e.g. {missing[:3]}), {len(unexpected)} test ids are not in the sample "
            f"(e.g. {unexpected[:3]}); check {named('test_files')}, {named('id_key')} and "
            f"{named('sample_submission')}"
        )


def write(path: Path, rows: pd.DataFrame) -> None:
    with written_whole(path) as temporary:
        rows.to_csv(temporary, index=False)
