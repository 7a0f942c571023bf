"""Multi-label competitions: each class's own threshold on its probability, chosen on the
validation records where it gives the class its best F1 (kept beside the trained weights:
outputs/fitted.py)."""

from __future__ import annotations

import numpy as np

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
