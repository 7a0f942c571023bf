"""Numbers to regress (a metric of values): each target's mean and spread on a run's training
images, by which the model's head scales its standardized outputs back and the loss divides
each error (model.py), kept beside the weights for every command that loads them; and what
`evaluate` shows of a run: each target's scores, its predicted values against the true ones
and the residuals."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..config import Config, class_names, places_of
from ..errors import UserError, first_line
from ..outputs.run_files import FITTED
from ..platform.files import write_json
from .scoring import METRICS


def fitted(cfg: Config, labels: list, writes: bool) -> dict:
    """Each target's mean and spread (its standard deviation; 1 where every image holds one
    value) over the training images' `labels`, said, and saved beside the run's weights."""
    values = np.asarray(labels, float).reshape(-1, cfg.num_classes)
    spread = values.std(0)
    standardized = {"mean": values.mean(0).tolist(), "spread": np.where(spread, spread, 1).tolist()}
    names = class_names(cfg) or [str(number) for number in range(cfg.num_classes)]
    pairs = zip(names, standardized["mean"], standardized["spread"], strict=True)
    print("standardized (mean, spread): " + "; ".join(f"{n} {m:.4g}, {s:.4g}" for n, m, s in pairs))
    if writes:
        write_json(places_of(cfg).output / FITTED["standardized"], standardized)
    return standardized


def saved(weights: Path) -> dict:
    """What build_model takes of the trained run of values whose `weights` these are: the
    mean and spread it standardized each target by."""
    path = weights.with_name(FITTED["standardized"])
    try:
        kept = json.loads(path.read_text())
        return {"standardized": {key: kept[key] for key in ("mean", "spread")}}
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise UserError(
            f"{path} ({first_line(error)}): a run of values keeps each target's mean and spread "
            "there, beside its weights; train again, or put back the file train wrote"
        ) from None


def report(cfg: Config, truth: np.ndarray, predicted: np.ndarray, path: Path) -> Path:
    """Each target's score by every metric of values, printed; and drawn into `path`, each
    target's predicted values against the true ones (on the diagonal where right) and its
    residuals (true less predicted) against the predictions."""
    from matplotlib.figure import Figure

    from ..outputs import plots

    names = class_names(cfg) or [str(number) for number in range(cfg.num_classes)]
    figure = Figure(figsize=(9, 3.6 * len(names)), layout="constrained")
    for number, name in enumerate(names):
        true, guess = truth[:, number], predicted[:, number]
        scores = {
            metric: entry.of(true[:, None], guess[:, None])
            for metric, entry in METRICS.items()
            if entry.targets == "values"
        }
        print(f"{name}: " + ", ".join(f"{metric} {value:.4f}" for metric, value in scores.items()))
        against, residuals = (figure.add_subplot(len(names), 2, 2 * number + n) for n in (1, 2))
        against.scatter(true, guess, s=8, alpha=0.6)
        ends = [min(true.min(), guess.min()), max(true.max(), guess.max())]
        against.plot(ends, ends, color="black", linewidth=1)
        title = f"{name}: {cfg.metric} {scores[cfg.metric]:.4f}"
        against.set(xlabel=f"true {name}", ylabel=f"predicted {name}", title=title)
        residuals.scatter(guess, true - guess, s=8, alpha=0.6)
        residuals.axhline(0, color="black", linewidth=1)
        residuals.set(xlabel=f"predicted {name}", ylabel="true - predicted", title="residuals")
    figure.suptitle(f"Validation, {len(truth)} images: predicted against true values")
    return plots.save(figure, path)
