"""The competition metric, on predictions. METRICS names each metric once, with all the code
knows of it; Config and the template's answer read it, so it imports only errors.py."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from .errors import UserError, named

CLIP = 1e-15  # log loss: probabilities held in [1e-15, 1 - 1e-15], as Kaggle's metric holds them


@dataclasses.dataclass(frozen=True)
class Metric:
    """One competition metric. `of` scores (truth, what it reads, options)."""

    of: Callable[..., float]
    reads: str  # "labels", "probabilities" or "values"
    reference: str  # the definition followed, which the tests check against
    lower_is_better: bool = False
    single_label: bool = False  # one class per image: it cannot score several (multi_label)
    graded: bool = False  # its answers are grades, the class numbers in order
    several: bool = False  # its answers are each image's set of labels, space-separated
    ranked: bool = False  # a submission lists each image's Config.map_k most probable classes
    classes: tuple[int, int] = (2, 0)  # the classes it scores (least, most; 0: any)
    # Each image's truth: a class (or several), "values" to regress (Config.num_classes counts
    # the targets), or "shares" over the classes (votes).
    targets: str = "classes"


def macro_f1(truth, predicted, **_) -> float:
    from sklearn.metrics import f1_score  # slow to load: `score --help` needs none

    return float(f1_score(truth, predicted, average="macro", zero_division=0))


def accuracy(truth, predicted, **_) -> float:
    from sklearn.metrics import accuracy_score

    return float(accuracy_score(truth, predicted))


def samples_f1(truth, predicted, **_) -> float:
    from sklearn.metrics import f1_score

    width = max(int(truth.max()), int(predicted.max())) + 1 if truth.ndim == 1 else None
    truth, predicted = as_rows(truth, width), as_rows(predicted, width)
    return float(f1_score(truth, predicted, average="samples", zero_division=0))


def roc_auc(truth, probabilities, **_) -> float:
    return mean_roc_auc(as_rows(truth, probabilities.shape[1]), probabilities)


def pauc(truth, probabilities, min_tpr: float = 0.8, **_) -> float:
    """The area under the ROC curve above a true-positive rate, unnormalised (ISIC 2024): with
    the classes swapped, scikit-learn's standardised partial AUC (McClish), undone here."""
    from sklearn.metrics import roc_auc_score

    positive = np.asarray(truth) == 1
    if positive.all() or not positive.any():
        return float("nan")  # one class only: no ROC curve
    most = 1 - min_tpr
    standardised = roc_auc_score(~positive, -probabilities[:, 1], max_fpr=most)
    least = 0.5 * most**2  # the area of a classifier that guesses
    return float(least + (most - least) * 2 * (standardised - 0.5))


def log_loss(truth, probabilities, **_) -> float:
    """Mean negative log probability of the true class: the KL divergence from one-hot rows."""
    return kl_divergence(as_rows(truth, probabilities.shape[1]), probabilities)


def qwk(truth, predicted, num_classes: int = 0, **_) -> float:
    """Quadratic weighted kappa of grades: the class numbers, in class order."""
    from sklearn.metrics import cohen_kappa_score

    grades = list(range(num_classes)) if num_classes else None
    return float(cohen_kappa_score(truth, predicted, weights="quadratic", labels=grades))


def map_at_k(truth, probabilities, k: int = 3, **_) -> float:
    """Mean average precision at k with one true class per image: 1 / its rank in the top k."""
    ranked = np.argsort(-probabilities, axis=1, kind="stable")[:, :k]
    hits = ranked == np.asarray(truth)[:, None]
    return float(np.mean((hits / np.arange(1, ranked.shape[1] + 1)).sum(axis=1)))


def rmse(truth, values, **_) -> float:
    return float(np.sqrt(np.mean(np.square(np.asarray(values) - truth))))


def mae(truth, values, **_) -> float:
    return float(np.mean(np.abs(np.asarray(values) - truth)))


def r2(truth, values, **_) -> float:
    """Each target's coefficient of determination, averaged over the targets."""
    from sklearn.metrics import r2_score

    return float(r2_score(truth, values))


def weighted_r2(truth, values, weights: str = "", **_) -> float:
    """CSIRO Image2Biomass' R² of every (image, target) pair at once, each weighed by its
    target's weight (Config.target_weights; equal where none)."""
    truth = np.asarray(truth, float).reshape(len(truth), -1)
    weight = np.broadcast_to(
        np.array(weights.split(","), float) if weights else np.ones(truth.shape[1]), truth.shape
    )
    mean = np.sum(weight * truth) / np.sum(weight)
    residual = np.sum(weight * np.square(truth - np.reshape(values, truth.shape)))
    return float(1 - residual / np.sum(weight * np.square(truth - mean)))


def kl_divergence(truth, probabilities, **_) -> float:
    """HMS' KL divergence from the true shares, summed over classes, each row scaled to 1."""
    truth = np.asarray(truth, float) / np.sum(truth, axis=1, keepdims=True)
    scaled = np.clip(probabilities / np.sum(probabilities, axis=1, keepdims=True), CLIP, 1 - CLIP)
    held = np.where(truth > 0, truth, 1.0)  # log(1) = 0 where the share is 0
    return float(np.mean(np.sum(truth * np.log(held / scaled), axis=1)))


METRICS: dict[str, Metric] = {
    "macro_f1": Metric(macro_f1, "labels", "sklearn.metrics.f1_score(average='macro')"),
    "accuracy": Metric(accuracy, "labels", "sklearn.metrics.accuracy_score"),
    "roc_auc": Metric(roc_auc, "probabilities", "sklearn.metrics.roc_auc_score, per class"),
    "samples_f1": Metric(samples_f1, "labels", "sklearn.metrics.f1_score(average='samples')",
                         several=True),
    "pauc": Metric(pauc, "probabilities", "ISIC 2024's pAUC: the ROC curve's area above min_tpr",
                   single_label=True, classes=(2, 2)),
    "log_loss": Metric(log_loss, "probabilities", "sklearn.metrics.log_loss, clipped as Kaggle's",
                       lower_is_better=True, single_label=True),
    "qwk": Metric(qwk, "labels", "sklearn.metrics.cohen_kappa_score(weights='quadratic')",
                  single_label=True, graded=True),
    "map_at_k": Metric(map_at_k, "probabilities", "MAP@k (ml_metrics' apk), one true class each",
                       single_label=True, classes=(3, 0), ranked=True),
    "rmse": Metric(rmse, "values", "sklearn.metrics.root_mean_squared_error over every value",
                   lower_is_better=True, single_label=True, classes=(1, 0), targets="values"),
    "mae": Metric(mae, "values", "sklearn.metrics.mean_absolute_error over every value",
                  lower_is_better=True, single_label=True, classes=(1, 0), targets="values"),
    "r2": Metric(r2, "values", "sklearn.metrics.r2_score, each target's averaged",
                 single_label=True, classes=(1, 0), targets="values"),
    "weighted_r2": Metric(weighted_r2, "values", "CSIRO Image2Biomass' globally weighted R²",
                          single_label=True, classes=(1, 0), targets="values"),
    "kl_divergence": Metric(kl_divergence, "probabilities", "HMS' kaggle-kl-div, rows scaled",
                            lower_is_better=True, single_label=True, targets="shares"),
}  # fmt: skip


def score(truth, probabilities, metric: str, **options) -> float:
    """The metric of class probabilities (or values), or for a metric of labels, of the most
    probable class. `options`: min_tpr (pauc), k (map_at_k), num_classes (qwk), weights."""
    truth, probabilities = np.asarray(truth), np.asarray(probabilities)
    if METRICS[metric].reads != "labels":
        return METRICS[metric].of(truth, probabilities, **options)
    predicted = probabilities.argmax(-1)
    if truth.ndim == 2:
        predicted = as_rows(predicted, probabilities.shape[1])
    return score_labels(truth, predicted, metric, **options)


def of_run(cfg, truth, probabilities, predicted=None) -> float:
    """The run's metric: of the answers as written (`predicted`) where it scores labels."""
    options = {"min_tpr": cfg.pauc_min_tpr, "k": cfg.map_k, "num_classes": cfg.num_classes}
    options["weights"] = cfg.target_weights
    if predicted is not None and METRICS[cfg.metric].reads == "labels":
        return score_labels(truth, predicted, cfg.metric, **options)
    return score(truth, probabilities, cfg.metric, **options)


def scores_classes(metric: str, classes: int) -> bool:
    least, most = METRICS[metric].classes
    return least <= classes and (not most or classes <= most)


def classes_scored(metric: str) -> str:
    """The classes `metric` scores, as a message says it (of Config.num_classes)."""
    least, most = METRICS[metric].classes
    if (least, most) == (2, 2):
        return f"a binary target ({named('num_classes')} 2, the second class the positive one)"
    return f"{least} classes or more" if not most else f"{least} to {most} classes"


def gain(new: float, old: float, metric: str) -> float:
    """How much better `new` is than `old`: positive where better, whichever way is better."""
    return old - new if METRICS[metric].lower_is_better else new - old


def best(values, metric: str) -> int:
    return int(np.argmin(values) if METRICS[metric].lower_is_better else np.argmax(values))


def metric_named(metric: str, multi_label: bool) -> str:
    """The metric as the final lines name it (multi-label accuracy: far below Keras' per label)."""
    if multi_label and metric == "accuracy":
        return "accuracy (exact match: all of an image's labels right; each epoch's is per label)"
    return f"{metric} (lower is better)" if METRICS[metric].lower_is_better else metric


def score_labels(truth, predicted, metric: str, **options) -> float:
    """The metric of predicted labels: class numbers, or multi-hot rows."""
    truth, predicted = np.asarray(truth), np.asarray(predicted)
    if METRICS[metric].reads != "labels":
        raise UserError(f"{metric} scores probabilities, not labels; set --metric to another")
    return METRICS[metric].of(truth, predicted, **options)


def as_rows(labels: np.ndarray, width: int | None) -> np.ndarray:
    """Class numbers as one-hot rows; multi-hot rows as they are."""
    labels = np.asarray(labels)
    return labels if labels.ndim == 2 else np.eye(width, dtype=int)[labels]


def label_rows(labels, num_classes: int) -> np.ndarray:
    """Labels as valid.csv and oof.csv write them (space-separated class numbers) as rows."""
    return np.array([[str(n) in text.split() for n in range(num_classes)] for text in labels], int)


def mean_roc_auc(truth: np.ndarray, probabilities: np.ndarray) -> float:
    """ROC AUC per class, averaged over the classes the truth holds both ways."""
    from sklearn.metrics import roc_auc_score

    positives = truth.sum(axis=0)
    both = np.flatnonzero((positives > 0) & (positives < len(truth)))
    scored = [roc_auc_score(truth[:, column], probabilities[:, column]) for column in both]
    return float(np.mean(scored)) if scored else float("nan")
