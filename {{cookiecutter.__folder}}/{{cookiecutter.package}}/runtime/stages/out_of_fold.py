"""Out of fold: each fold's validation predictions (valid.csv, written by train), gathered into
oof.csv and scored together, every training image predicted by the fold model that never
trained on it; and a run's CV read back from its files, as the run scored it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd

from ..config import Config, class_names, places_of, targets
from ..errors import UserError, first_line
from ..learning import cuts, scoring
from ..outputs.run_record import read_record, run_records
from ..outputs.submission_shapes import probability_columns
from ..platform.files import for_pandas, written_whole
from .folds import run_config


def write_predictions(
    cfg: Config, probabilities: np.ndarray, labels, ids, thresholds=None
) -> pd.DataFrame:
    """One fold's validation predictions as valid.csv: id, fold, true and predicted classes
    (numbers, space-separated for multi-label; and names when the classes have them), then
    each class's probability; of values or shares, the true row's numbers, space-separated,
    and each target's value (or class's probability)."""
    names = class_names(cfg)
    if thresholds is None:  # the most probable class
        predicted = probabilities.argmax(-1)
    else:  # the grade the cuts give, or each class at or above its threshold
        predicted = cuts.answered(cfg, probabilities, thresholds)
    if targets(cfg) != "classes":  # the predictions are the columns after
        truth, guess = [" ".join(f"{value:.7g}" for value in row) for row in labels], ""
    elif predicted.ndim == 1:
        truth, guess = [str(n) for n in labels], [str(n) for n in predicted]
    else:  # multi-hot rows: the classes set, as numbers
        truth, guess = as_numbers(labels), as_numbers(predicted)
    table = pd.DataFrame({"id": ids, "fold": cfg.fold, "label": truth, "predicted": guess})
    if names and targets(cfg) == "classes":
        for column in ("label", "predicted"):
            table[f"{column}_name"] = [
                " ".join(names[int(n)] for n in value.split()) for value in table[column]
            ]
    columns = probability_columns(names, cfg.num_classes)
    table = pd.concat([table, pd.DataFrame(probabilities, columns=columns)], axis=1)
    with written_whole(places_of(cfg).output / "valid.csv") as temporary:
        table.to_csv(temporary, index=False)
    return table


def as_numbers(rows: np.ndarray) -> list[str]:
    """Multi-hot rows as the class numbers they set, separated by spaces."""
    return [" ".join(str(n) for n in np.flatnonzero(row)) for row in rows]


def truth(cfg: Config, table: pd.DataFrame, column: str = "label") -> np.ndarray:
    """valid.csv's or oof.csv's labels (or its answers, `column` "predicted"): class numbers,
    multi-hot rows (multi-label), or rows of values or shares."""
    if targets(cfg) != "classes":
        return np.array([value.split() for value in table[column]], float)
    rows = scoring.label_rows(table[column].astype(str), cfg.num_classes)
    return rows if cfg.multi_label else rows.argmax(-1)


def scored(cfg: Config, table: pd.DataFrame) -> float:
    """The metric of valid.csv's rows: of its probabilities (or values), or of its answers as
    written."""
    probabilities = table[table.columns[-cfg.num_classes :]].to_numpy(float)
    predicted = truth(cfg, table, "predicted") if targets(cfg) == "classes" else None
    return scoring.of_run(cfg, truth(cfg, table), probabilities, predicted=predicted)


def scored_folds(cfg: Config, folds: list[int]) -> float:
    """Gather every fold's validation predictions into oof.csv; print the metric per fold
    and over all of them; returns the out-of-fold score."""
    tables = [
        pd.read_csv(
            for_pandas(places_of(run_config(cfg, fold)).output / "valid.csv"),
            dtype={"id": str, "label": str, "predicted": str},
            keep_default_na=False,
        )
        for fold in folds
    ]
    for fold, table in zip(folds, tables, strict=True):
        print(f"fold {fold} {cfg.metric}: {scored(cfg, table):.4f}")
    everything = pd.concat(tables, ignore_index=True)
    path = places_of(cfg).output / "oof.csv"
    with written_whole(path) as temporary:
        everything.to_csv(temporary, index=False)
    result = scored(cfg, everything)
    print(f"out-of-fold {cfg.metric}: {result:.4f} ({len(everything)} records, {path})")
    return result


# What a run recorded in model.json that decides how its validation predictions score.
SCORED_AS = ("metric", "num_classes", "multi_label", "pauc_min_tpr", "map_k", "target_weights")


def run_tables(folder: Path) -> list[Path]:
    """The validation predictions of the run in `folder`: oof.csv (a `--fold all` run), else
    its valid.csv, else its folds' (fold<k>/valid.csv: a run of one fold of records in folds)."""
    for name in ("oof.csv", "valid.csv"):
        if (folder / name).is_file():
            return [folder / name]
    return sorted(folder.glob("fold*/valid.csv"))


def run_cv(cfg: Config, folder: Path) -> tuple[str, float] | None:
    """The metric and CV of the run in `folder` (None without validation predictions),
    scored with the metric and classes the run recorded in its model.json: a run trained with
    other flags, or fetched from a notebook with `kaggle output`, scores as it trained."""
    tables = run_tables(folder)
    if not tables:
        return None
    path = next(iter(run_records(folder)), None)
    recorded = read_record(path) if path else {}
    try:
        run = dataclasses.replace(
            cfg, **{name: recorded[name] for name in SCORED_AS if name in recorded}
        )
    except UserError as error:  # a hand-edited model.json: name it, and the field
        raise UserError(f"{path}: {error}; train again, or put back its model.json") from None
    text = {"id": str, "label": str, "predicted": str}  # 007 stays 007
    try:
        read = [pd.read_csv(for_pandas(path), dtype=text, keep_default_na=False) for path in tables]
        return run.metric, scored(run, pd.concat(read, ignore_index=True))
    except (ValueError, KeyError, IndexError) as error:
        raise UserError(
            f"cannot score {', '.join(map(str, tables))} for the run's CV "
            f"({first_line(error)}); train again, or move it out of {folder}"
        ) from error
