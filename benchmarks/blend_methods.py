"""How to fit a blend's weights, measured: the project's hill climbing against scipy.optimize,
each fitted on out-of-fold rows and judged on rows it never saw (each fold's rows blended with
weights fitted on the other folds), on the runs a `blend` would read:

    python benchmarks/blend_methods.py PROJECT RUN_DIR RUN_DIR ... [--solution CSV]

PROJECT is a rendered project (its package is imported); each RUN_DIR a `--fold all` run
after `predict`. With --solution (held-out test labels, as benchmarks/fashion_mnist.py
writes), each method's weights, fitted on every OOF row, also score the runs' test
probabilities. Methods:
- hill climbing with replacement (the project's, learning/blending.py);
- scipy Nelder-Mead on the metric itself (weights as a softmax, so non-negative, sum 1);
- scipy SLSQP on the log loss (smooth, so a gradient method can fit it; then scored by the
  metric).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import minimize


def softmax(x):
    e = np.exp(x - x.max())
    return e / e.sum()


def nelder_mead(tables, score, rows):
    """Maximise the metric over softmax weights, from equal weights."""
    parts = [table[rows] for table in tables]

    def loss(x):
        return -score(rows, sum(w * p for w, p in zip(softmax(x), parts, strict=True)))

    found = minimize(loss, np.zeros(len(tables)), method="Nelder-Mead", options={"maxiter": 400})
    return softmax(found.x).tolist()


def log_loss_slsqp(tables, truth, rows):
    """Minimise the blend's cross-entropy with weights >= 0 summing to 1."""
    parts = [table[rows] for table in tables]
    onehot = np.eye(parts[0].shape[1])[truth[rows]]

    def loss(w):
        blended = sum(a * p for a, p in zip(w, parts, strict=True))
        return -np.mean(np.log(np.clip((blended * onehot).sum(1), 1e-7, 1)))

    n = len(tables)
    found = minimize(
        loss, np.full(n, 1 / n), method="SLSQP", bounds=[(0, 1)] * n,
        constraints=[{"type": "eq", "fun": lambda w: w.sum() - 1}],
    )  # fmt: skip
    weights = np.clip(found.x, 0, None)
    return (weights / weights.sum()).tolist()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("project", type=Path)
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--solution", type=Path)
    args = parser.parse_args()
    sys.path.insert(0, str(args.project))
    package = next(p.parent.name for p in args.project.glob("*/__main__.py"))
    blend = importlib.import_module(f"{package}.runtime.stages.blend")
    blending = importlib.import_module(f"{package}.runtime.learning.blending")
    config = importlib.import_module(f"{package}.runtime.config")

    start = importlib.import_module(f"{package}.runtime.stages.run").start
    runs = [blend.read_run(folder, "blend") for folder in args.runs]
    blend.check_alike(runs, Path("/nonexistent"), "blend", 2)
    cfg = blend.trained_for(runs[0], start(config.Config(), on_accelerator=False, read=False)).cfg
    order = runs[0].oof["id"]
    tables, truth, folds = blend.out_of_fold_rows(cfg, runs)
    score, every = blend.scorer(cfg, truth), np.ones(len(order), bool)

    def tied(rows, probabilities):  # the metric, then the log loss among equals
        right = np.clip(probabilities[np.arange(len(probabilities)), truth[rows]], 1e-7, 1)
        return (score(rows, probabilities), float(np.mean(np.log(right))))

    methods = {
        "hill climbing": lambda rows: blending.hill_climbed(tables, score, rows),
        "hill climbing, log loss ties": lambda rows: blending.hill_climbed(tables, tied, rows),
        "nelder-mead on the metric": lambda rows: nelder_mead(tables, score, rows),
        "slsqp on the log loss": lambda rows: log_loss_slsqp(tables, truth, rows),
        "equal weights": lambda rows: [1 / len(tables)] * len(tables),
    }
    test = None
    if args.solution:
        solution = pd.read_csv(args.solution, dtype=str).set_index("id")
        ids = runs[0].test[runs[0].test.columns[0]]
        test_truth = solution.loc[ids, "label"].astype(int).to_numpy()
        test = [run.test[run.columns].to_numpy(float) for run in runs]
    for run in runs:
        name = run.folder.name
        table = run.oof.set_index("id").loc[order, run.columns].to_numpy(float)
        line = f"{name:<28} oof {score(every, table):.4f}"
        if test is not None:
            held = run.test[run.columns].to_numpy(float)
            line += f"  test {blend.scoring.score(test_truth, held, cfg.metric):.4f}"
        print(line)
    print(f"{'method':<28} {'nested':>7} {'fitted':>7} {'test':>7}  seconds  weights")
    for name, fit in methods.items():
        started = time.perf_counter()
        nested = np.zeros_like(tables[0])
        for fold in np.unique(folds):
            held = folds == fold
            nested[held] = blending.blended([t[held] for t in tables], fit(~held))
        weights = fit(every)
        seconds = time.perf_counter() - started
        fitted = score(every, blending.blended(tables, weights))
        held_out = (
            blend.scoring.score(test_truth, blending.blended(test, weights), cfg.metric)
            if test is not None
            else float("nan")
        )
        shown = ", ".join(f"{w:.2f}" for w in weights)
        print(
            f"{name:<28} {score(every, nested):7.4f} {fitted:7.4f} {held_out:7.4f} "
            f"{seconds:8.1f}  {shown}"
        )


if __name__ == "__main__":
    main()
