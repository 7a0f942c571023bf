"""Labels that are numbers, read from the training CSV's columns where the metric scores them
(competition_files.py asks for it): values to regress (one column per target: PetFinder's
Pawpularity, Image2Biomass' five) or votes over the classes (HMS' six vote columns), made
shares that sum to 1. Every cell is checked before a shard is written, and the folds are
stratified on what the labels hold: the values' bins, or each image's most voted class.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..config import Config, targets
from ..errors import UserError, named
from . import tables


def share_columns(
    rows: pd.DataFrame, csv: str, id_column: str, cfg: Config, sample_given: bool
) -> str:
    """The columns of votes, where none were given: the CSV's columns that the competition's
    sample submission (the one given, else the one beside the CSV) names besides the id (HMS'
    sample names its six)."""
    beside = Path(csv).with_name("sample_submission.csv")
    sample = Path(cfg.sample_submission) if sample_given else beside
    listed = list(tables.read_csv(str(sample)).columns) if sample.is_file() else []
    shared = [column for column in listed if column in rows.columns and column != id_column]
    if len(shared) < 2:
        found = f"{sample} names {len(shared)} of its columns" if listed else f"no {sample}"
        raise UserError(
            f"{csv}: which columns hold the votes {named('metric')} {cfg.metric} scores? "
            f"({found}); set {named('label_column')} to them, comma-separated: a,b,c"
        )
    return ",".join(shared)


def read(rows: pd.DataFrame, columns: list[str], cfg: Config, csv: str) -> list[list[float]]:
    """Each row's values, or its votes scaled to shares that sum to 1: a cell that is no
    number, a negative vote or votes that sum to 0 is refused, naming its row (the header is
    row 1) and column."""
    shares = targets(cfg) == "shares"
    numbers = rows[columns].apply(pd.to_numeric, errors="coerce").to_numpy(float)
    wrong = ~np.isfinite(numbers) | (shares & (numbers < 0))
    reads = "votes or probabilities, 0 or more" if shares else "numbers"
    if wrong.any():
        row, column = np.argwhere(wrong)[0]
        raise UserError(
            f"{csv}: row {rows.index[row] + 2} holds {rows[columns[column]].iloc[row]!r} in "
            f"{columns[column]!r}; {named('metric')} {cfg.metric} reads {reads} in "
            f"{', '.join(columns)} ({named('label_column')}): fix the cell, or give those "
            "columns, or a metric of classes"
        )
    if shares and (numbers.sum(1) <= 0).any():
        row = np.flatnonzero(numbers.sum(1) <= 0)[0]
        raise UserError(
            f"{csv}: row {rows.index[row] + 2} has no vote in {', '.join(columns)} (they sum "
            "to 0), so no share of a class to learn; give its votes, or leave the row out"
        )
    return (numbers / numbers.sum(1, keepdims=True) if shares else numbers).tolist()


def strata(labels: pd.Series, cfg: Config) -> list[int]:
    """What the folds stratify on: each image's most voted class (shares), or (values) its
    bin of the images ranked by their mean standardized value, up to 10 bins of as many
    images each, and as many at least as there are folds."""
    rows = np.array(labels.tolist(), float)
    if targets(cfg) == "shares":
        return rows.argmax(1).tolist()
    spread = np.where(rows.std(0) > 0, rows.std(0), 1)
    ranks = pd.Series(((rows - rows.mean(0)) / spread).mean(1)).rank(method="first") - 1
    bins = max(1, min(10, len(rows) // max(cfg.folds, 1)))
    return (ranks * bins // len(rows)).astype(int).tolist()
