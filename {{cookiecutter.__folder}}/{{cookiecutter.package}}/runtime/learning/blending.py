"""Weights for a blend of runs, fitted on their out-of-fold probabilities.

Greedy hill climbing with replacement (Caruana et al., "Ensemble selection from libraries of
models", 2004; the method Kaggle's ensembling guides teach): start from the best run, then
add, again and again, the run whose addition scores best, until no addition scores better.
A run added k times weighs k shares, so weights are non-negative and sum to 1. It maximises
the competition's metric itself, which for accuracy and F1 is a step function that
scipy.optimize's gradient-free searches stall on (benchmarks/blend_methods.py measures both).

Every score here is of out-of-fold rows: each image predicted by the fold model that did not
train on it. `nested` says what a blend's weights are worth on rows they were not fitted on.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

ROUNDS = 100  # additions at most: weights in steps of 1/ROUNDS or coarser

Scorer = Callable[[np.ndarray, np.ndarray], float]  # (rows, probabilities) -> the metric


def blended(probabilities: list[np.ndarray], weights) -> np.ndarray:
    """The runs' probabilities, weighed."""
    return sum(weight * table for weight, table in zip(weights, probabilities, strict=True))


def weighted(tables: list, weights: list[float], columns):
    """The first table (a DataFrame), its `columns` the tables' (rows in its order) weighed as
    `blended` weighs them, scaled back to probabilities."""
    averaged = tables[0].copy()
    rows = [table[columns].to_numpy(float) for table in tables]
    averaged[columns] = blended(rows, weights) / sum(weights)
    return averaged


def hill_climbed(probabilities: list[np.ndarray], score: Scorer, rows=None) -> list[float]:
    """Each run's weight, fitted to maximise `score` on `rows` (a boolean mask; all rows
    without one). Ties keep the runs already in: a run is added only where it scores better."""
    rows = np.ones(len(probabilities[0]), bool) if rows is None else rows
    tables = [table[rows] for table in probabilities]
    singles = [score(rows, table) for table in tables]
    first = best_of(singles)
    counts = np.zeros(len(tables), int)
    counts[first] = 1
    total, best = tables[first].copy(), singles[first]
    for _ in range(ROUNDS - 1):
        tried = [score(rows, (total + table) / (counts.sum() + 1)) for table in tables]
        pick = best_of(tried)
        if tried[pick] <= best:
            break
        counts[pick] += 1
        total += tables[pick]
        best = tried[pick]
    return (counts / counts.sum()).tolist()


def best_of(scores: list) -> int:
    """The first of the best scores' index (a score may be a tuple: compared in order)."""
    return max(range(len(scores)), key=scores.__getitem__)


def nested(probabilities: list[np.ndarray], folds: np.ndarray, score: Scorer) -> np.ndarray:
    """The blend as each fold's rows would see it with weights fitted on the other folds'
    rows only: scoring it estimates the blend on images its weights never saw."""
    result = np.zeros_like(probabilities[0])
    for fold in np.unique(folds):
        held = folds == fold
        weights = hill_climbed(probabilities, score, ~held)
        result[held] = blended([table[held] for table in probabilities], weights)
    return result
