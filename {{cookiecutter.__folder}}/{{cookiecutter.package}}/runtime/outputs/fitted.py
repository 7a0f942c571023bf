"""What a run fits beside its weights (FITTED): class thresholds (multi-label), cuts between
grades (qwk), each target's mean and spread (values). Read back checked: a hand-edited file out
of range would change every answer without a word."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from ..errors import UserError, first_line
from ..platform.files import FITTED, write_json

THRESHOLDS, GRADE_CUTS = FITTED["thresholds"], FITTED["grades"]
STANDARDIZED = FITTED["standardized"]
DEFAULT_THRESHOLD = 0.5  # every class's, where no run chose any


def save(folder: Path, name: str, values) -> None:
    """A fitted file (FITTED's name), written whole into the run's folder."""
    key = {THRESHOLDS: "thresholds", GRADE_CUTS: "grade_cuts"}.get(name)
    write_json(folder / name, {key: values} if key else values)


def forget(folder: Path, *names: str) -> None:
    """An earlier run's fitted files, which this run's weights would not go with."""
    for name in names:
        (folder / name).unlink(missing_ok=True)


def averaged_thresholds(folders: list[Path], num_classes: int, names=None) -> list[float]:
    """The runs' thresholds, averaged over the folds; 0.5 for every class when no run chose any."""
    kept = read_each(folders, THRESHOLDS, read_thresholds, num_classes, names)
    if not kept:
        print(f"no thresholds.json beside the trained weights: every class at {DEFAULT_THRESHOLD}")
        return [DEFAULT_THRESHOLD] * num_classes
    return np.mean(kept, axis=0).tolist()


def averaged_grade_cuts(folders: list[Path], classes: int) -> list[float] | None:
    """The runs' cuts between grades, averaged; None (the most probable) unless each kept cuts."""
    kept = read_each(folders, GRADE_CUTS, read_grade_cuts, classes)
    if len(kept) < len(folders):
        print(f"grades: the most probable ({len(kept)} of {len(folders)} trained runs kept cuts)")
        return None
    return np.mean(kept, axis=0).tolist()


def read_each(folders: list[Path], name: str, read, *args) -> list[list[float]]:
    """Each run's fitted file `name`, where it has one, checked by `read`."""
    paths = [folder / name for folder in folders if (folder / name).is_file()]
    return [read(path.read_bytes(), str(path), *args) for path in paths]


def read_listed(data: bytes, where: str, key: str, fix: str):
    """What a fitted file's JSON object holds under `key`; None where it is no object."""
    try:
        held = json.loads(data)
    except (ValueError, RecursionError) as error:  # undecodable bytes are ValueErrors too
        raise UserError(f"{where} is not JSON ({first_line(error)}); {fix}") from None
    return held.get(key) if isinstance(held, dict) else None


def read_thresholds(data: bytes, where: str, num_classes: int, names=None) -> list[float]:
    """A thresholds.json, checked: one threshold in 0..1 per class (above 1: never, 0: always)."""
    fix = "fix the file, or train again: `train` chooses them on the validation records"
    cuts = read_listed(data, where, "thresholds", fix)
    if not isinstance(cuts, list):
        raise UserError(f'{where} holds no list "thresholds" (one number in 0..1 per class); {fix}')
    if len(cuts) != num_classes:
        raise UserError(
            f"{where} holds {len(cuts)} thresholds, the model has {num_classes} classes; one "
            f"per class, in class order; {fix}"
        )
    for number, cut in enumerate(cuts):
        if not is_number(cut) or not 0 <= cut <= 1:
            name = f" ({names[number]})" if names and number < len(names) else ""
            raise UserError(
                f"{where}: the threshold of class {number}{name} is {cut!r}, not a number in "
                f"0..1; {fix}"
            )
    return [float(cut) for cut in cuts]


def read_grade_cuts(data: bytes, where: str, classes: int) -> list[float]:
    """A grade_cuts.json, checked: K-1 increasing numbers within 0..K-1."""
    fix = "fix the file, or train again: `train` fits them on the validation records"
    cuts = read_listed(data, where, "grade_cuts", fix)
    if not (isinstance(cuts, list) and all(map(is_number, cuts))) or len(cuts) != classes - 1:
        raise UserError(
            f'{where} holds no list "grade_cuts" of {classes - 1} numbers (one between each '
            f"two of the {classes} grades); {fix}"
        )
    if any(not 0 <= cut <= classes - 1 for cut in cuts) or cuts != sorted(cuts):
        raise UserError(
            f"{where}: the cuts {cuts} are not increasing within 0..{classes - 1}; {fix}"
        )
    return [float(cut) for cut in cuts]


def is_number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def standardized(weights: Path) -> dict:
    """build_model's `standardized`: each target's mean and spread, beside the run's `weights`."""
    path = weights.with_name(STANDARDIZED)
    try:
        kept = json.loads(path.read_text())
        return {"standardized": {key: kept[key] for key in ("mean", "spread")}}
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise UserError(
            f"{path} ({first_line(error)}): a run of values keeps each target's mean and spread "
            "there, beside its weights; train again, or put back the file train wrote"
        ) from None
