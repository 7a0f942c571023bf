"""Look before training: a training batch as the model receives it, and the learning rate
over the run, both from the recipe train uses (model.py: the notebook's model cell)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..config import Config, class_names, places_of
from ..data import pipeline, source
from ..learning import model
from ..outputs import plots
from ..platform.accelerator import Accelerator
from . import preflight, training_checks

IMAGES = 16


def augmented_batch(cfg: Config, found: Accelerator) -> Path:
    """Training images as the training step sees them: the pipeline's, through the host's
    augmentations, then the model's (mixed, with their mixed labels, where the run mixes;
    cropped and flipped where the image size calls for it), titled with their class names
    when the config knows them."""
    cfg, _ = source.resolved(cfg)  # with what the records' manifest or the TFDS set says
    files = preflight.ready(cfg, found, "preview", training_checks.CHECKS).train.value.files
    batches = pipeline.for_training(files, cfg, IMAGES, augmentations=model.host_augmentations(cfg))
    images, labels = (np.asarray(part) for part in next(iter(batches)))
    for augmentation in model.model_augmentations(cfg):
        images = augmentation(images, training=True)
        if hasattr(augmentation, "mixed_labels"):  # mixes the labels as it mixed the images
            rows = labels if labels.ndim == 2 else np.eye(cfg.num_classes)[labels]
            labels = np.asarray(augmentation.mixed_labels(rows.astype(np.float32)))
    path = places_of(cfg).output / "augmented_batch.png"
    shares = labels.ndim == 2 and not cfg.multi_label  # rows, mixed
    return plots.augmented_batch(images, labels, path, names=class_names(cfg), shares=shares)


def learning_rate(cfg: Config, found: Accelerator) -> Path:
    """The schedule train will follow: warm-up, then cosine decay, over every step."""
    cfg, _ = source.resolved(cfg)
    run = preflight.ready(cfg, found, "preview", training_checks.CHECKS).plan.value
    schedule = model.learning_rate_schedule(cfg, found.replicas, run.steps_per_epoch)
    # At most 500 steps of the run, evenly spread: one call per step, and the curve is smooth.
    total = cfg.epochs * run.steps_per_epoch
    steps = np.unique(np.linspace(0, total - 1, min(total, 500)).astype(int))
    rates = np.array([float(schedule(int(step))) for step in steps])
    epochs = steps / run.steps_per_epoch
    return plots.learning_rate(epochs, rates, places_of(cfg).output / "learning_rate.png")


def command(args, cfg: Config, found=None) -> int:
    print(f"picture: {augmented_batch(cfg, found)}")
    print(f"picture: {learning_rate(cfg, found)}")
    return 0
