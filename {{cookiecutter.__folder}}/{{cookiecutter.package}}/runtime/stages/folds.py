"""k-fold: which folds a run trains, where each fold's run writes, the trained fold models
`predict` averages, and the out-of-fold predictions that score every fold together.

With records in folds (`records --folds K`), fold k's run validates on fold k, trains on the
others and writes into <output>/fold<k>/, so each fold resumes on its own.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..config import Config, class_names, given, places_of, validating_fold
from ..errors import UserError, first_line, named
from ..learning import scoring
from ..learning.grades import graded
from ..learning.thresholds import applied
from ..outputs.run_record import read_record, run_records
from ..outputs.submission_shapes import probability_columns
from ..platform.files import for_pandas, written_whole


def count(cfg: Config) -> int:
    """The folds of the records in the data folder; 1 without a manifest or without folds."""
    return data_folds(cfg) or 1


def data_folds(cfg: Config) -> int | None:
    """The folds the data says it has; None where it says nothing (records without a
    manifest, or a folder that holds only a test set)."""
    from ..data import source  # TensorFlow: `scored` alone (kaggle submit) needs none

    _, manifest = source.resolved(cfg)
    return manifest["folds"] if manifest else None


def chosen(cfg: Config) -> list[int]:
    """The folds this run trains: every one for `--fold all`, else the one asked for."""
    return list(range(count(cfg))) if cfg.fold == "all" else [int(cfg.fold)]


def runs(cfg: Config) -> list[Config]:
    """The runs `train` makes: one per chosen fold with records in folds, else the one run."""
    return [run_config(cfg, fold) for fold in chosen(cfg)] if count(cfg) > 1 else [cfg]


def class_shares(cfg: Config, said: dict | None) -> list[float] | None:
    """Each class's share of the run's training images (the folds but the one that
    validates), from what the records' manifest or the CSV counted of each fold; None where
    the data counts nothing (a TFDS set)."""
    per_fold = ((said or {}).get("train") or {}).get("per_fold")
    if not per_fold:
        return None
    held_out = str(validating_fold(cfg))
    counts = np.zeros(cfg.num_classes)
    for fold, held in per_fold.items():
        if len(per_fold) > 1 and fold == held_out:
            continue
        for number, count in held["classes"].items():
            if int(number) < cfg.num_classes:
                counts[int(number)] += count
    return (counts / counts.sum()).tolist() if counts.sum() else None


def check_each_fold_validates(cfg: Config) -> None:
    """`--fold all` scores each fold's model on the fold it holds out; validating nothing
    (valid_files given empty) would leave every fold unscored and no out-of-fold table."""
    if cfg.fold == "all" and not cfg.valid_files and given(cfg, "valid_files"):
        raise UserError(
            f"{named('fold')} all scores each fold's model on the images its fold holds out, "
            f"and {named('valid_files')} is empty, so none would be scored: leave "
            f"{named('valid_files')} out to validate each fold on its own, or train one fold "
            f"({named('fold')} 0) without validation"
        )


def run_config(cfg: Config, fold: int) -> Config:
    """One fold's run: that fold validates, and the run writes into <output>/fold<k>/ (and,
    from a trained run elsewhere, reads <trained>/fold<k>/)."""
    trained = str(places_of(cfg).trained / f"fold{fold}") if cfg.trained_dir else ""
    out = str(places_of(cfg).output / f"fold{fold}")
    return dataclasses.replace(cfg, fold=str(fold), output_dir=out, trained_dir=trained)


def run_root(folder: Path) -> Path:
    """The folder a whole run writes in (or was trained in): for a fold's run, the one above
    its own <folder>/fold<k>, as run_config names it; else the folder itself."""
    return folder.parent if re.fullmatch(r"fold\d+", folder.name) else folder


def trained_runs(cfg: Config) -> list[Config]:
    """The runs whose trained weights `predict` averages: every trained fold's, else the run
    in the output folder itself. A fold model the current folds did not make (fold7/ left
    beside records in 5 folds) is refused, not averaged in. Where the data says nothing of
    folds (a code competition's rerun mounts only the test set beside the trained run), a
    trained run given by Config.trained_dir is taken as it was trained."""
    said = data_folds(cfg)
    found = {
        int(match.group(1)): path
        for path in sorted(places_of(cfg).trained.glob("fold*/model.weights.h5"))
        if (match := re.fullmatch(r"fold(\d+)", path.parent.name))
    }
    if said is None and cfg.trained_dir and found:
        return [run_config(cfg, fold) for fold in sorted(found)]
    folds = said or 1
    stale = [str(path) for number, path in sorted(found.items()) if number >= folds or folds == 1]
    if stale:
        made = f"folds 0 to {folds - 1}" if folds > 1 else "no folds"
        raise UserError(
            f"{', '.join(stale)}: trained on folds the current records do not have (they have "
            f"{made}); move these out of {places_of(cfg).trained} or delete them, so that only the "
            "current folds' models are averaged"
        )
    return [run_config(cfg, number) for number in sorted(found)] or [cfg]


def write_predictions(
    cfg: Config, probabilities: np.ndarray, labels, ids, thresholds=None
) -> pd.DataFrame:
    """One fold's validation predictions as valid.csv: id, fold, true and predicted classes
    (numbers, space-separated for multi-label; and names when the classes have them), then
    each class's probability."""
    names = class_names(cfg)
    if thresholds is None or not cfg.multi_label:  # the most probable class, or the grade
        predicted = (
            probabilities.argmax(-1) if thresholds is None else graded(probabilities, thresholds)
        )
        truth, guess = [str(n) for n in labels], [str(n) for n in predicted]
    else:  # multi-hot rows: the classes set, as numbers
        predicted = applied(probabilities, thresholds)
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


def score_out_of_fold(cfg: Config, folds: list[int]) -> float:
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
SCORED_AS = ("metric", "num_classes", "multi_label", "pauc_min_tpr", "map_k")


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
