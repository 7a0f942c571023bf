"""k-fold: which folds a run trains, and the trained fold models `predict` averages. With data
in folds (or records pooled into folds, records.py), fold k's run (Run.fold) validates on fold
k, trains on the others and writes into <output>/fold<k>/, so each fold resumes on its own."""

from __future__ import annotations

import re
from pathlib import Path

from ..config import given, validating_fold
from ..errors import UserError, named
from .run import Run


def chosen(run: Run) -> list[int]:
    """The folds the run asks for: every one (`all`), or the one that validates."""
    return list(range(run.data.folds)) if run.cfg.fold == "all" else [validating_fold(run.cfg)]


def runs(run: Run) -> list[Run]:
    """The runs `train` makes: one per chosen fold of data in folds, else the run itself."""
    return [run.fold(fold) for fold in chosen(run)] if run.data.folds > 1 else [run]


def check_each_fold_validates(run: Run) -> None:
    """`--fold all` with valid_files given empty would score no fold's model: no oof.csv."""
    cfg = run.cfg
    if run.data.pooled or cfg.fold != "all" or cfg.valid_files:
        return
    if given(cfg, run.sources, "valid_files"):
        raise UserError(
            f"{named('fold')} all scores each fold's model on the images its fold holds out, "
            f"and {named('valid_files')} is empty, so none would be scored: leave "
            f"{named('valid_files')} out to validate each fold on its own, or train one fold "
            f"({named('fold')} 0) without validation"
        )


def run_root(folder: Path) -> Path:
    """The folder a whole run writes in: for a fold's run (<folder>/fold<k>), the one above."""
    return folder.parent if re.fullmatch(r"fold\d+", folder.name) else folder


def trained_runs(run: Run) -> list[Run]:
    """The runs whose weights `predict` averages: every trained fold's (fold7/ beside 5 folds is
    refused), else the run itself; where the data says nothing of folds (a code competition's
    rerun mounts only the test set), Config.trained_dir's as it was trained."""
    data, trained = run.data, run.places.trained
    found = {
        int(match.group(1)): path
        for path in sorted(trained.glob("fold*/model.weights.h5"))
        if (match := re.fullmatch(r"fold(\d+)", path.parent.name))
    }
    in_folds = data.folds if data.manifest else None  # what the data says of its folds
    if in_folds is None and run.cfg.trained_dir and found:
        return [run.fold(fold) for fold in sorted(found)]
    folds = in_folds or (run.cfg.folds if data.trains_from == "records" else 1)
    stale = [str(path) for number, path in sorted(found.items()) if number >= folds or folds == 1]
    if stale:
        made = f"folds 0 to {folds - 1}" if folds > 1 else "no folds"
        raise UserError(
            f"{', '.join(stale)}: trained on folds the current records do not have (they have "
            f"{made}); move these out of {trained} or delete them, so that only the current "
            "folds' models are averaged"
        )
    return [run.fold(number) for number in sorted(found)] or [run]
