"""k-fold: which folds a run trains, where each fold's run writes, the trained fold models
`predict` averages, and the out-of-fold predictions that score every fold together.

With records in folds (`records --folds K`), fold k's run validates on fold k, trains on the
others and writes into <output>/fold<k>/, so each fold resumes on its own.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pandas as pd

from . import records, scoring
from .config import Config, output_dir, output_path
from .files import written_whole


def count(cfg: Config) -> int:
    """The folds of the records in the data folder; 1 without a manifest or without folds."""
    _, manifest = records.with_manifest(cfg)
    return manifest["folds"] if manifest else 1


def chosen(cfg: Config) -> list[int]:
    """The folds this run trains: every one for `--fold all`, else the one asked for."""
    return list(range(count(cfg))) if cfg.fold == "all" else [int(cfg.fold)]


def runs(cfg: Config) -> list[Config]:
    """The runs `train` makes: one per chosen fold with records in folds, else the one run."""
    return [run_config(cfg, fold) for fold in chosen(cfg)] if count(cfg) > 1 else [cfg]


def run_config(cfg: Config, fold: int) -> Config:
    """One fold's run: that fold validates, and the run writes into <output>/fold<k>/."""
    return dataclasses.replace(cfg, fold=str(fold), output_dir=str(output_dir(cfg) / f"fold{fold}"))


def trained_runs(cfg: Config) -> list[Config]:
    """The runs whose trained weights `predict` averages: every trained fold's, else the run
    in the output folder itself."""
    found = sorted(output_dir(cfg).glob("fold*/model.weights.h5"))
    numbers = [re.fullmatch(r"fold(\d+)", path.parent.name) for path in found]
    runs = [run_config(cfg, int(match.group(1))) for match in numbers if match]
    return sorted(runs, key=lambda run: int(run.fold)) or [cfg]


def write_predictions(cfg: Config, probabilities: np.ndarray, labels, ids) -> pd.DataFrame:
    """One fold's validation predictions, with every class's probability, as valid.csv."""
    table = pd.DataFrame(
        {"id": ids, "label": labels, "fold": cfg.fold, "predicted": probabilities.argmax(-1)}
    )
    table = pd.concat(
        [table, pd.DataFrame(probabilities, columns=[f"p{n}" for n in range(cfg.num_classes)])],
        axis=1,
    )
    with written_whole(output_path(cfg, "valid.csv")) as temporary:
        table.to_csv(temporary, index=False)
    return table


def score_out_of_fold(cfg: Config, folds: list[int]) -> float:
    """Gather every fold's validation predictions into oof.csv; print the metric per fold
    and over all of them; returns the out-of-fold score."""
    tables = [
        pd.read_csv(output_path(run_config(cfg, fold), "valid.csv"), dtype={"id": str})
        for fold in folds
    ]
    for fold, table in zip(folds, tables, strict=True):
        print(
            f"fold {fold} {cfg.metric}: {scoring.score(table.label, table.predicted, cfg.metric):.4f}"
        )
    everything = pd.concat(tables, ignore_index=True)
    path = output_path(cfg, "oof.csv")
    with written_whole(path) as temporary:
        everything.to_csv(temporary, index=False)
    result = scoring.score(everything.label, everything.predicted, cfg.metric)
    print(f"out-of-fold {cfg.metric}: {result:.4f} ({len(everything)} records, {path})")
    return result
