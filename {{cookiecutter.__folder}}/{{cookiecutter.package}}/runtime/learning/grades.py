"""Ordinal competitions scored by quadratic weighted kappa (APTOS 2019, PANDA): the classes
are grades, 0 to K-1 in class order. Each image's expected grade (its class probabilities
weighed by the grades) may be cut into a grade at points fitted on the validation records,
where they score the best kappa, as those competitions' winners cut a regression's output.
The cuts are kept (beside the trained weights: outputs/fitted.py) only where
they beat the most probable grade on validation records they were not fitted on: on classes
that are not in order (the digits), the expected grade mixes them, and the cuts lose."""

from __future__ import annotations

import numpy as np

STEPS = 40  # candidates tried between a cut's neighbours, each pass
PASSES = 3


def expected(probabilities: np.ndarray) -> np.ndarray:
    return np.asarray(probabilities) @ np.arange(np.shape(probabilities)[1])


def applied(probabilities: np.ndarray, cuts) -> np.ndarray:
    """Each image's grade: how many cuts its expected grade reaches."""
    return np.searchsorted(np.asarray(cuts), expected(probabilities), side="right")


def kappa(truth: np.ndarray, predicted: np.ndarray, classes: int) -> float:
    """Quadratic weighted kappa (scikit-learn's cohen_kappa_score, weights="quadratic"), in
    NumPy: the cuts' search computes it a few thousand times."""
    observed = np.bincount(truth * classes + predicted, minlength=classes * classes)
    observed = observed.reshape(classes, classes).astype(float)
    total = observed.sum()
    chance = np.outer(observed.sum(1), observed.sum(0)) / total
    weights = np.subtract.outer(np.arange(classes), np.arange(classes)) ** 2
    disagreement = (weights * chance).sum()
    return 1.0 - (weights * observed).sum() / disagreement if disagreement else 1.0


def fitted(truth, probabilities: np.ndarray) -> list[float]:
    """The cuts with the best kappa on these records: from the midpoints (the nearest grade),
    each cut in turn moved to the best of STEPS points between its neighbours, PASSES times
    (the first of equals: a cut moves only where it scores better)."""
    truth, classes = np.asarray(truth), np.shape(probabilities)[1]
    grades = expected(probabilities)
    cuts = np.arange(classes - 1) + 0.5

    def score(tried: np.ndarray) -> float:
        return kappa(truth, np.searchsorted(tried, grades, side="right"), classes)

    best = score(cuts)
    for _ in range(PASSES):
        for i in range(classes - 1):
            low = cuts[i - 1] if i else 0.0
            high = cuts[i + 1] if i < classes - 2 else classes - 1.0
            for point in np.linspace(low, high, STEPS + 2)[1:-1]:
                tried = cuts.copy()
                tried[i] = point
                scored = score(tried)
                if scored > best:
                    best, cuts = scored, tried
    return [round(float(cut), 4) for cut in cuts]


def chosen(truth, probabilities: np.ndarray) -> list[float] | None:
    """Cuts fitted on every record, where cuts beat the most probable grade in a two-fold
    check (each half of the records scored with cuts fitted on the other half); else None."""
    truth, probabilities = np.asarray(truth), np.asarray(probabilities)
    classes = probabilities.shape[1]
    half = np.random.default_rng(0).permutation(len(truth)) % 2 == 0
    cut, most_probable = [], []
    for held in (half, ~half):
        if not held.any() or held.all():
            return None  # too few records to tell
        cuts = fitted(truth[~held], probabilities[~held])
        cut.append(kappa(truth[held], applied(probabilities[held], cuts), classes))
        most_probable.append(kappa(truth[held], probabilities[held].argmax(1), classes))
    return fitted(truth, probabilities) if np.mean(cut) > np.mean(most_probable) else None
