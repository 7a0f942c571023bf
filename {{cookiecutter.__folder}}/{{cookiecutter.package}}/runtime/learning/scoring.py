"""The competition metric, on predictions (`score`'s command, stages/score.py, scores files).

Truth is a class number per image, or a multi-hot row per image (multi-label); predictions
are class probabilities, one column per class. scikit-learn computes every metric.
"""

from __future__ import annotations

import numpy as np

from ..errors import UserError
from .thresholds import applied


def score(truth, probabilities, metric: str, thresholds=None) -> float:
    """The metric of class probabilities: roc_auc scores them as they are (the mean over the
    classes); the others score the most probable class, or with `thresholds` (multi-label)
    every class at or above its threshold."""
    truth, probabilities = np.asarray(truth), np.asarray(probabilities)
    if metric == "roc_auc":
        return mean_roc_auc(as_rows(truth, probabilities.shape[1]), probabilities)
    if thresholds is None:
        predicted = probabilities.argmax(-1)
        if truth.ndim == 2:
            predicted = as_rows(predicted, probabilities.shape[1])
    else:
        predicted = applied(probabilities, thresholds)
    return score_labels(truth, predicted, metric)


def metric_named(metric: str, multi_label: bool) -> str:
    """The metric as the final lines name it. Several labels per image: accuracy is an exact
    match (every label of an image right), far below the per-label accuracy Keras shows each
    epoch, and the line says which it is."""
    if multi_label and metric == "accuracy":
        return "accuracy (exact match: all of an image's labels right; each epoch's is per label)"
    return metric


def score_labels(truth, predicted, metric: str) -> float:
    """The metric of predicted labels: class numbers, or multi-hot rows."""
    from sklearn.metrics import accuracy_score, f1_score  # slow to load: `score --help` needs none

    truth, predicted = np.asarray(truth), np.asarray(predicted)
    if metric == "roc_auc":
        raise UserError("roc_auc scores probabilities, not labels; set --metric to another")
    if metric == "samples_f1":
        width = max(int(truth.max()), int(predicted.max())) + 1 if truth.ndim == 1 else None
        truth, predicted = as_rows(truth, width), as_rows(predicted, width)
        return float(f1_score(truth, predicted, average="samples", zero_division=0))
    if metric == "macro_f1":
        return float(f1_score(truth, predicted, average="macro", zero_division=0))
    return float(accuracy_score(truth, predicted))


def as_rows(labels: np.ndarray, width: int | None) -> np.ndarray:
    """Class numbers as one-hot rows; multi-hot rows as they are."""
    labels = np.asarray(labels)
    return labels if labels.ndim == 2 else np.eye(width, dtype=int)[labels]


def label_rows(labels, num_classes: int) -> np.ndarray:
    """Labels as valid.csv and oof.csv write them (class numbers, space-separated where an
    image has several) as multi-hot rows."""
    return np.array(
        [[str(n) in value.split() for n in range(num_classes)] for value in labels], int
    )


def mean_roc_auc(truth: np.ndarray, probabilities: np.ndarray) -> float:
    """ROC AUC per class, averaged over the classes the truth holds both ways (a class no
    image has, or every image has, has no ROC curve)."""
    from sklearn.metrics import roc_auc_score

    scored = [
        roc_auc_score(truth[:, column], probabilities[:, column])
        for column in range(truth.shape[1])
        if 0 < truth[:, column].sum() < len(truth)
    ]
    return float(np.mean(scored)) if scored else float("nan")
