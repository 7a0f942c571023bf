"""Multi-label competitions: each class's own threshold on its probability, chosen on the validation
records where it gives the class its best F1, and kept beside the trained weights for `predict`."""

from __future__ import annotations

import json
import math

import numpy as np

from ..config import Config, class_names, places_of
from ..errors import UserError, first_line
from ..outputs.run_files import FITTED
from ..platform.files import write_json

THRESHOLDS = FITTED["thresholds"]
CANDIDATES = np.round(np.arange(0.05, 0.96, 0.05), 2)
DEFAULT = 0.5  # a class the validation records never show keeps this


def chosen(truth: np.ndarray, probabilities: np.ndarray) -> list[float]:
    """Per class, the candidate threshold with the best F1 on the validation records (the
    lowest of equals)."""
    from sklearn.metrics import f1_score  # slow to load: `score --help` needs none

    cuts = []
    for column in range(truth.shape[1]):
        if not truth[:, column].any():
            cuts.append(DEFAULT)
            continue
        scores = [
            f1_score(truth[:, column], probabilities[:, column] >= cut, zero_division=0)
            for cut in CANDIDATES
        ]
        cuts.append(float(CANDIDATES[int(np.argmax(scores))]))
    return cuts


def applied(probabilities: np.ndarray, cuts) -> np.ndarray:
    """Multi-hot rows: 1 for each class at or above its threshold."""
    return (np.asarray(probabilities) >= np.asarray(cuts)).astype(int)


def save(cfg: Config, cuts: list[float]) -> None:
    write_json(places_of(cfg).output / THRESHOLDS, {"thresholds": cuts})


def averaged(runs: list[Config]) -> list[float]:
    """The thresholds of the trained runs (beside their weights, in the trained run's folder),
    each file checked, averaged over the folds; 0.5 for every class when no run chose any."""
    classes, names = runs[0].num_classes, class_names(runs[0])
    kept = [
        read(path.read_bytes(), str(path), classes, names)
        for path in (places_of(run).trained / THRESHOLDS for run in runs)
        if path.is_file()
    ]
    if not kept:
        print(f"no thresholds.json beside the trained weights: every class at {DEFAULT}")
        return [DEFAULT] * classes
    return np.mean(kept, axis=0).tolist()


def read(data: bytes, where: str, num_classes: int, names=None) -> list[float]:
    """A thresholds.json, checked: one threshold in 0..1 per class. A hand-edited one out of
    range would predict a class never (above 1) or always (0 or below), without a word."""
    fix = "fix the file, or train again: `train` chooses them on the validation records"
    try:
        held = json.loads(data)
    except (ValueError, RecursionError) as error:  # undecodable bytes are ValueErrors too
        raise UserError(f"{where} is not JSON ({first_line(error)}); {fix}") from None
    cuts = held.get("thresholds") if isinstance(held, dict) else None
    if not isinstance(cuts, list):
        raise UserError(f'{where} holds no list "thresholds" (one number in 0..1 per class); {fix}')
    if len(cuts) != num_classes:
        raise UserError(
            f"{where} holds {len(cuts)} thresholds, the model has {num_classes} classes; one "
            f"per class, in class order; {fix}"
        )
    for number, cut in enumerate(cuts):
        in_range = isinstance(cut, int | float) and not isinstance(cut, bool)
        if not in_range or not math.isfinite(cut) or not 0 <= cut <= 1:
            name = f" ({names[number]})" if names and number < len(names) else ""
            raise UserError(
                f"{where}: the threshold of class {number}{name} is {cut!r}, not a number in "
                f"0..1; {fix}"
            )
    return [float(cut) for cut in cuts]
