"""Look before training: an augmented training batch, and the learning rate over the run."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..config import Config, class_names
from ..data import pipeline, source
from ..learning import plan
from ..learning.augment import CropAndFlip
from ..outputs import plots
from ..platform.accelerator import Accelerator
from ..platform.paths import output_path
from . import preflight

IMAGES = 16


def augmented_batch(cfg: Config, found: Accelerator) -> Path:
    """Training images as the model sees them (the pipeline's, cropped and flipped by the
    model's first layer), titled with their class names when the config knows them."""
    cfg, _ = source.resolved(cfg)  # with what the records' manifest or the TFDS set says
    files = preflight.ready(cfg, found, "preview").train.value.files
    images, labels = next(iter(pipeline.for_training(files, cfg, IMAGES)))
    crop_and_flip = CropAndFlip(cfg.crop_area, cfg.flip, cfg.seed)
    seen = np.asarray(crop_and_flip(images.numpy(), training=True))
    seen = np.clip(np.round(seen), 0, 255).astype(np.uint8)  # floats in 0..255, as pixels
    path = output_path(cfg, "augmented_batch.png")
    return plots.augmented_batch(seen, labels.numpy(), path, names=class_names(cfg))


def learning_rate(cfg: Config, found: Accelerator) -> Path:
    """The schedule train will follow: warm-up, then cosine decay, over every step."""
    cfg, _ = source.resolved(cfg)
    run = preflight.ready(cfg, found, "preview").plan.value
    schedule = plan.learning_rate_schedule(cfg, found.replicas, run.steps_per_epoch)
    # At most 500 steps of the run, evenly spread: one call per step, and the curve is smooth.
    total = cfg.epochs * run.steps_per_epoch
    steps = np.unique(np.linspace(0, total - 1, min(total, 500)).astype(int))
    rates = np.array([float(schedule(int(step))) for step in steps])
    epochs = steps / run.steps_per_epoch
    return plots.learning_rate(epochs, rates, output_path(cfg, "learning_rate.png"))


def command(args, cfg: Config, found=None) -> int:
    print(f"picture: {augmented_batch(cfg, found)}")
    print(f"picture: {learning_rate(cfg, found)}")
    return 0
