"""Where the answers are more than each image's most probable class, the cuts that make them, fitted
on validation records: each class's threshold (multi-label, thresholds.py) or the cuts between
grades on the expected grade (qwk, grades.py), each imported where the run's config asks for it."""

from __future__ import annotations

import numpy as np

from .. import scoring
from ..scoring import METRICS
from . import grades, thresholds


def fitter(cfg):
    """The module that fits this run's cuts (`chosen`) and answers with them (`applied`), or
    None where the most probable class answers."""
    if cfg.multi_label:
        return thresholds
    if METRICS[cfg.metric].graded:
        return grades
    return None


def cuts_for(cfg, truth, probabilities) -> list[float] | None:
    """What turns probabilities into answers, fitted on these records: each class's threshold
    (multi-label), or the cuts between grades where they beat the most probable grade (qwk);
    None: the most probable class."""
    fitting = fitter(cfg)
    return fitting.chosen(truth, probabilities) if fitting else None


def cuts_to_score(cfg, truth, probabilities) -> list[float] | None:
    """cuts_for's cuts where the run's metric scores the answers they make; None where it
    scores probabilities, which the cuts would not change."""
    return cuts_for(cfg, truth, probabilities) if METRICS[cfg.metric].reads == "labels" else None


def answered(cfg, probabilities, cuts) -> np.ndarray:
    """The answers `cuts` (cuts_for's) give: every class at or above its threshold (multi-label), or
    the grade the cuts between grades give (qwk); no cuts: the most probable class."""
    return probabilities.argmax(-1) if cuts is None else fitter(cfg).applied(probabilities, cuts)


def scored(cfg, truth, probabilities, cuts=None) -> float:
    """The run's metric (scoring.of_run) of the answers `cuts` give, or of the probabilities."""
    if cuts is None:
        return scoring.of_run(cfg, truth, probabilities)
    return scoring.of_run(cfg, truth, probabilities, answered(cfg, np.asarray(probabilities), cuts))
