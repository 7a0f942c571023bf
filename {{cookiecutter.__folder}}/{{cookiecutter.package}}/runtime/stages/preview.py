"""Look before training: a training batch as the model receives it, and the learning rate
over the run, both as train makes them (model.py, recipe.py: the notebook's cells)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..config import Config, class_names
from ..data import pipeline
from ..learning import model, recipe
from ..outputs import plots
from . import preflight, training_checks
from .run import Run, started

IMAGES = 16


def augmented_batch(run: Run | Config, through_model: bool = True) -> Path:
    """Training images and their labels as the datasets make them (the host's augmentations);
    `through_model`: then as the training step sees them, through the model's augmentations
    (mixed, with mixed labels; cropped and flipped where the size calls for it)."""
    run = started(run)
    cfg = run.cfg
    files = preflight.ready(run, "preview", training_checks.CHECKS).train.value.files
    augmentations = pipeline.host_augmentations(cfg)
    batches = pipeline.for_training(run.data, files, cfg, IMAGES, augmentations=augmentations)
    images, labels = (np.asarray(part) for part in next(iter(batches)))
    for augmentation in model.model_augmentations(cfg) if through_model else ():
        images = augmentation(images, training=True)
        if hasattr(augmentation, "mixed_labels"):  # mixes the labels as it mixed the images
            rows = labels if labels.ndim == 2 else np.eye(cfg.num_classes)[labels]
            labels = np.asarray(augmentation.mixed_labels(rows.astype(np.float32)))
    path = run.places.output / ("augmented_batch.png" if through_model else "training_batch.png")
    shares = labels.ndim == 2 and not cfg.multi_label  # rows, mixed
    title = "An augmented training batch" if through_model else "A training batch"
    return plots.augmented_batch(images, labels, path, class_names(cfg), shares, title)


def learning_rate(run: Run | Config) -> Path:
    """The schedule train will follow: warm-up, then cosine decay, over every step."""
    run = started(run)
    cfg = run.cfg
    planned = preflight.ready(run, "preview", training_checks.CHECKS).plan.value
    steps_per_epoch = planned.steps_per_epoch
    schedule = recipe.learning_rate_schedule(cfg, run.accelerator.replicas, steps_per_epoch)
    # At most 500 steps of the run, evenly spread: one call per step, and the curve is smooth.
    total = cfg.epochs * steps_per_epoch
    steps = np.unique(np.linspace(0, total - 1, min(total, 500)).astype(int))
    rates = np.array([float(schedule(int(step))) for step in steps])
    path = run.places.output / "learning_rate.png"
    return plots.learning_rate(steps / steps_per_epoch, rates, path)


def command(args, run: Run) -> int:
    print(f"picture: {augmented_batch(run)}")
    print(f"picture: {learning_rate(run)}")
    return 0
