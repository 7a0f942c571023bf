"""small-cnn, the demos' backbone: a few conv blocks, no preset, trains in seconds on a CPU."""

from __future__ import annotations

import dataclasses
import os

import keras
from keras import layers

from ..backbone_choices import weights
from ..config import Config
from ..errors import UserError, named

SCALE = 1 / 255  # its input: 0..1


def load(cfg: Config, with_weights: bool) -> tuple[keras.Model, str]:
    """The CNN, with Config.weights a file it saved, or none, and where its weights came from;
    without `with_weights` (trained weights replace them) that file is not read."""
    if not with_weights:
        return load(dataclasses.replace(cfg, weights="none"), True)
    if weights(cfg) == "imagenet":
        raise UserError(
            f"{named('backbone')} small-cnn has no ImageNet weights; set {named('weights')} none"
        )
    if weights(cfg) != "none" and not os.path.isfile(cfg.weights):
        raise UserError(
            f"{named('weights')} {cfg.weights!r} is neither imagenet, none, nor an existing "
            "file; attach the .weights.h5 file (for example as a Kaggle dataset) and give its path"
        )
    inputs = keras.Input((cfg.image_size, cfg.image_size, 3))
    x = inputs
    for filters in (32, 64, 128):
        x = layers.Conv2D(filters, 3, padding="same", use_bias=False)(x)
        # momentum 0.9: few steps per epoch.
        x = layers.BatchNormalization(momentum=0.9)(x)
        x = layers.Activation("relu")(x)
        x = layers.MaxPooling2D()(x)
    model = keras.Model(inputs, x, name="small_cnn")
    if weights(cfg) != "none":
        model.load_weights(cfg.weights)
        return model, f"weights from {cfg.weights}"
    return model, "trained from scratch"
