"""Numbers to regress (a metric of values): each target's mean and spread on a run's training
images, by which the model's head scales its standardized outputs back and the loss divides
each error (model.py), kept beside the weights (outputs/fitted.py) for every command that
loads them."""

from __future__ import annotations

import numpy as np

from ..config import Config, class_names


def fitted(cfg: Config, labels: list) -> dict:
    """Each target's mean and spread (its standard deviation; 1 where every image holds one
    value) over the training images' `labels`, said."""
    values = np.asarray(labels, float).reshape(-1, cfg.num_classes)
    spread = values.std(0)
    standardized = {"mean": values.mean(0).tolist(), "spread": np.where(spread, spread, 1).tolist()}
    names = class_names(cfg) or [str(number) for number in range(cfg.num_classes)]
    pairs = zip(names, standardized["mean"], standardized["spread"], strict=True)
    print("standardized (mean, spread): " + "; ".join(f"{n} {m:.4g}, {s:.4g}" for n, m, s in pairs))
    return standardized
