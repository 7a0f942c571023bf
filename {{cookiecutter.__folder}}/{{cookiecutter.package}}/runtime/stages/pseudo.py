"""`pseudo`: soft labels for the test images, from a predicted `--fold all` run (or a blend),
to train a next run on them (`train --pseudo-labels FILE`).

Each fold's rows are that fold model's probabilities (`predict` leaves them in
fold<k>/test_probabilities.csv; a blend's, its runs' fold models weighed as it weighed the runs),
kept where the most probable class reaches --min-confidence: by default every test image, with its
soft label. On Fashion-MNIST (docs/commands.md) every image lifted held-out accuracy in both runs
measured; only those at 0.9 or above, the images the models already get right, did not. The next
run's fold k trains on fold k's rows alone: they come from a model that never saw fold k's labels,
so the fold's validation score stays honest (data/pseudo_labels.py). Writes pseudo_labels.csv (the
test id, the fold, each class's probability) into the run's folder."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..errors import UserError, first_line
from ..learning import blending
from ..outputs import blend_record
from ..platform.files import BLEND, place, written_whole
from .out_of_fold import test_probabilities

PSEUDO = "pseudo_labels.csv"


def fold_tables(folder: Path) -> dict[str, pd.DataFrame]:
    """A predicted run's test probabilities by fold (fold<k>/test_probabilities.csv); {"": the
    averaged ones} where it has none by fold (one fold, or predicted before they were kept)."""
    found = {
        path.parent.name.removeprefix("fold"): path
        for path in sorted(folder.glob("fold*/test_probabilities.csv"))
        if path.parent.name.removeprefix("fold").isdigit()
    }
    if not found and (folder / "test_probabilities.csv").is_file():
        found = {"": folder / "test_probabilities.csv"}
    if not found:
        raise UserError(
            f"pseudo: {folder} holds no test_probabilities.csv; run `predict --output-dir "
            f"{folder}` on the run first (it writes each fold model's beside its own)"
        )
    try:
        return {fold: test_probabilities(path) for fold, path in found.items()}
    except ValueError as error:
        raise UserError(f"pseudo: {folder}: {first_line(error)}; predict the run again") from None


def blended_tables(folder: Path) -> dict[str, pd.DataFrame]:
    """A blend's runs' test probabilities by fold, weighed as the blend weighed the runs."""
    weighed = [run for run in blend_record.read(folder / BLEND)["runs"] if run["weight"]]
    weights = [run["weight"] for run in weighed]
    read = [fold_tables(place(run["folder"])) for run in weighed]
    if any(set(tables) != set(read[0]) for tables in read):  # one predicted before folds' were kept
        raise UserError(
            f"pseudo: the runs of {folder} were predicted with and without each fold's "
            "probabilities; run `predict` on each run again"
        )
    return {
        fold: blending.weighted([tables[fold] for tables in read], weights, first.columns[1:])
        for fold, first in read[0].items()
    }


def pseudo_labels(folder: str, min_confidence: float) -> pd.DataFrame:
    """Each fold's test images at min_confidence or above, written beside the run."""
    run = place(folder)
    if not run.is_dir():
        raise UserError(f"pseudo: {run} is not a folder; give a predicted run's or a blend's")
    tables = blended_tables(run) if (run / BLEND).is_file() else fold_tables(run)
    kept = []
    for fold, table in tables.items():
        probabilities = table.iloc[:, 1:].to_numpy(float)
        confident = probabilities.max(1) >= min_confidence
        rows = table[confident].copy()
        if fold:
            rows.insert(1, "fold", fold)
        kept.append(rows)
        where = f"fold {fold}'s model" if fold else "the run's models together"
        print(
            f"{where}: {int(confident.sum())} of {len(table)} test images at "
            f"{min_confidence} or above"
        )
    written = pd.concat(kept, ignore_index=True)
    classes = written.columns[2 if "fold" in written.columns else 1 :]
    most = written[classes].astype(float).idxmax(axis=1).value_counts()
    print("the rows kept by their most probable class:",
          ", ".join(f"{name} {most.get(name, 0)}" for name in classes))  # fmt: skip
    path = run / PSEUDO
    with written_whole(path) as temporary:
        written.to_csv(temporary, index=False, float_format="%.5f")
    print(f"wrote {path}; train on it: `train --fold all --pseudo-labels {path}`")
    if "fold" not in written.columns:
        print(
            "no fold model's own probabilities: every fold of the next run trains on the same "
            "rows, and its out-of-fold score may flatter it; predict the run again to keep them"
        )
    return written


def arguments(parser) -> None:
    run = "the output folder of a predicted --fold all run, or a blend"
    parser.add_argument("run", metavar="RUN_DIR", help=run)
    keep = "keep a test image where its most probable class reaches P (default: 0, every one)"
    parser.add_argument("--min-confidence", type=float, default=0.0, metavar="P", help=keep)


def command(args, run) -> int:
    if not 0 <= args.min_confidence < 1:
        raise UserError(
            f"pseudo --min-confidence {args.min_confidence}: must be from 0 (every test image) "
            "to below 1"
        )
    pseudo_labels(args.run, args.min_confidence)
    return 0
