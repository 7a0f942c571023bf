"""Out of fold: each fold's validation predictions (valid.csv, written by train), gathered into
oof.csv and scored together, every training image predicted by the fold model that never
trained on it."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..config import Config, class_names, places_of
from ..learning import cuts, scoring
from ..outputs.submission_shapes import probability_columns
from ..platform.files import for_pandas, written_whole
from .folds import run_config


def write_predictions(
    cfg: Config, probabilities: np.ndarray, labels, ids, thresholds=None
) -> pd.DataFrame:
    """One fold's validation predictions as valid.csv: id, fold, true and predicted classes
    (numbers, space-separated for multi-label; and names when the classes have them), then
    each class's probability."""
    names = class_names(cfg)
    if thresholds is None:  # the most probable class
        predicted = probabilities.argmax(-1)
    else:  # the grade the cuts give, or each class at or above its threshold
        predicted = cuts.answered(cfg, probabilities, thresholds)
    if predicted.ndim == 1:
        truth, guess = [str(n) for n in labels], [str(n) for n in predicted]
    else:  # multi-hot rows: the classes set, as numbers
        truth, guess = as_numbers(labels), as_numbers(predicted)
    table = pd.DataFrame({"id": ids, "fold": cfg.fold, "label": truth, "predicted": guess})
    if names:
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


def scored(cfg: Config, table: pd.DataFrame) -> float:
    """The metric of valid.csv's rows: of its probabilities, or of its answers as written."""
    rows = [
        scoring.label_rows(column.astype(str), cfg.num_classes)
        for column in (table.label, table.predicted)
    ]
    if not cfg.multi_label:
        rows = [row.argmax(-1) for row in rows]
    probabilities = table[table.columns[-cfg.num_classes :]].to_numpy(float)
    return scoring.of_run(cfg, rows[0], probabilities, predicted=rows[1])


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
