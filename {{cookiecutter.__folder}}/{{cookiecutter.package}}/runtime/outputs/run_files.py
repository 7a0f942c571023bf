"""What a run's output folder may hold: the files the commands write, the runs below it (a
fold's, an ablation's variant) and a notebook's fetched output. A folder holding anything else
is the user's or another command's (records, demo-data), and a run will not write among it."""

from __future__ import annotations

from pathlib import Path

from ..errors import named
from ..platform.files import FETCHED_FROM, FITTED, refuse_foreign
from ..platform.kaggle_inputs import WORKING

# The files a run writes at the top of its folder (a fold's run, in fold<k>/ likewise).
RUN_FILES = {
    "model.json", "model.weights.h5", "history.json", "curves.png", "valid.csv", "folds.csv",
    *FITTED.values(), "oof.csv", "submission.csv", "test_probabilities.csv",
    "test_probabilities.json", "confusion.png", "predictions.png", "values.png",
    "augmented_batch.png", "training_batch.png", "learning_rate.png", "ablate.json", "ablate.png",
    "label_audit.csv", "label_audit.png", "likely_wrong.csv", "pseudo_labels.csv", ".run.lock",
}  # fmt: skip
CHECKPOINTS = "checkpoints"  # the folder of a run's checkpoints (checkpoints.py)
# Folders a run fills itself: its checkpoints, the backbone's architecture beside its weights,
# JAX's compiled programs, bench-input's records.
RUN_FOLDERS = {CHECKPOINTS, "backbone", "jax-cache", "bench-input"}
# What a file browser or Jupyter leaves in a folder one looks into: nobody's output.
LEFT_BY_BROWSING = {".DS_Store", "Thumbs.db", "desktop.ini", ".ipynb_checkpoints"}


def not_written_by_a_run(folder: Path) -> list[str]:
    """What `folder` holds that no run writes, as paths below it (fold0/ and such read alike)."""
    # The notebook's own (the package it writes, the user's cells'), or its output fetched.
    if folder == WORKING or not folder.is_dir() or (folder / FETCHED_FROM).is_file():
        return []
    found = []
    for path in sorted(folder.iterdir()):
        name = path.name.removeprefix(".tmp-")  # a file being written whole
        if name in LEFT_BY_BROWSING:
            continue
        if path.is_dir() and name not in RUN_FOLDERS:
            found += [f"{path.name}/{inner}" for inner in not_written_by_a_run(path)]
        elif not (path.is_dir() or name in RUN_FILES):
            found.append(path.name)
    return found


def refuse_others(folder: Path, command: str) -> None:
    """Stop before `command` writes a run among what `folder` holds that no run wrote."""
    refuse_foreign(named("output_dir"), folder, command, not_written_by_a_run(folder))
