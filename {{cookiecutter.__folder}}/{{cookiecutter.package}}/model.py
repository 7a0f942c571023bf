"""The classifier: a keras.applications backbone and a small head.

The model takes images in 0..255 (uint8, or bfloat16 on TPUs under TensorFlow); while
training, its first layer crops and flips them at random (augment.py); the next scales them
as the backbone expects, so the input pipeline stays the same for every backbone. Only Keras 3 APIs: the same code builds under TensorFlow and JAX.
"""

from __future__ import annotations

import os
import sys

import keras
import numpy as np
from keras import layers

from .augment import CropAndFlip
from .config import Config, UserError, named

SYNC_BATCH_STATISTICS = keras.backend.backend() == "tensorflow"


def small_cnn(include_top, weights, input_shape):
    """A few conv blocks: no pretrained weights, trains in seconds on a CPU (demos, tests).

    Called like a keras.applications constructor; `weights` may be a file it saved.
    """
    inputs = keras.Input(input_shape)
    x = inputs
    for filters in (32, 64, 128):
        x = layers.Conv2D(filters, 3, padding="same", use_bias=False)(x)
        # momentum 0.9: few steps per epoch. Synchronized statistics make N replicas train
        # exactly as one (JAX's DataParallel already computes them over the global batch).
        x = layers.BatchNormalization(momentum=0.9, synchronized=SYNC_BATCH_STATISTICS)(x)
        x = layers.Activation("relu")(x)
        x = layers.MaxPooling2D()(x)
    backbone = keras.Model(inputs, x, name="small_cnn")
    if weights:
        backbone.load_weights(weights)
    return backbone


# Backbone, and the (scale, offset) that maps 0..255 to its input range; EfficientNetV2
# and ConvNeXt normalise inside the model, so they take 0..255 as it is.
BACKBONES = {
    "efficientnetv2-b0": (keras.applications.EfficientNetV2B0, (1.0, 0.0)),
    "efficientnetv2-s": (keras.applications.EfficientNetV2S, (1.0, 0.0)),
    "resnet50v2": (keras.applications.ResNet50V2, (1 / 127.5, -1.0)),
    "convnext-tiny": (keras.applications.ConvNeXtTiny, (1.0, 0.0)),
    "small-cnn": (small_cnn, (1 / 255, 0.0)),
}


def backbone_weights(cfg: Config):
    """The `weights` argument for keras.applications, after checking it can work."""
    if cfg.weights == "none":
        return None
    if cfg.weights == "imagenet":
        if cfg.backbone == "small-cnn":
            raise UserError(
                f"{named('backbone')} small-cnn has no ImageNet weights; "
                f"set {named('weights')} none"
            )
        return "imagenet"
    if os.path.isdir(cfg.weights):
        raise UserError(f"{named('weights')} {cfg.weights!r} is a folder; give the .h5 file in it")
    if not os.path.isfile(cfg.weights):
        raise UserError(
            f"{named('weights')} {cfg.weights!r} is neither imagenet, none, nor an existing "
            "file; attach the .h5 file (for example as a Kaggle dataset) and give its path"
        )
    return cfg.weights


def load_backbone(cfg: Config, size: int):
    """The backbone without its top, for size x size images, with its weights loaded."""
    make_backbone, _ = BACKBONES[cfg.backbone]
    weights = backbone_weights(cfg)
    try:
        return make_backbone(include_top=False, weights=weights, input_shape=(size, size, 3))
    except Exception as error:  # a failed download (offline) or a file for another model
        raise UserError(
            f"could not load {named('weights')} {cfg.weights} for {named('backbone')} "
            f"{cfg.backbone}: {first_line(error)}. Offline (most code competitions)? Attach "
            "the weights file as a Kaggle dataset and set weights to "
            "/kaggle/input/<dataset>/<file>.h5, or train from scratch with weights none"
        ) from error


def check_weights(cfg: Config) -> str:
    """Load the backbone's weights as `build` will, into a small copy, so an offline machine
    or a file for another backbone is found before training. Downloads land in Keras' cache,
    where `build` then finds them."""
    if backbone_weights(cfg) is None:
        return f"none for {cfg.backbone} (trained from scratch)"
    load_backbone(cfg, 32)  # weights do not depend on the image size: 32 builds fastest
    return f"{cfg.weights} for {cfg.backbone}, loaded"


def first_line(error: Exception) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


def build(cfg: Config, image_dtype: str = "uint8", precision: str = "float32") -> keras.Model:
    """The classifier, computing in `precision` (a Keras dtype policy such as mixed_bfloat16);
    call inside the accelerator's scope."""
    keras.mixed_precision.set_global_policy(precision)  # read by each layer as it is made
    _, (scale, offset) = BACKBONES[cfg.backbone]
    shape = (cfg.image_size, cfg.image_size, 3)
    backbone = load_backbone(cfg, cfg.image_size)
    inputs = keras.Input(shape, dtype=image_dtype, name="image")
    # While training only: random crops and flips, on the accelerator (augment.py).
    x = CropAndFlip(cfg.crop_area, cfg.flip, cfg.seed, name="crop_and_flip")(inputs)
    x = layers.Rescaling(scale, offset, name="to_backbone_range")(x)
    x = backbone(x)
    x = layers.GlobalAveragePooling2D()(x)
    x = layers.Dropout(cfg.dropout)(x)
    # float32 probabilities even under mixed precision: softmax in bfloat16 loses the tail.
    outputs = layers.Dense(cfg.num_classes, activation="softmax", dtype="float32", name="classes")(
        x
    )
    return keras.Model(inputs, outputs, name=f"{cfg.backbone.replace('-', '_')}_classifier")


def learning_rate_schedule(cfg: Config, replicas: int, steps_per_epoch: int):
    """Linear warm-up to the peak (scaled by replicas, as the global batch is), then cosine decay."""
    peak = cfg.learning_rate * replicas
    total = cfg.epochs * steps_per_epoch
    warmup = min(int(cfg.warmup_epochs * steps_per_epoch), total)  # a short run may be all warm-up
    return keras.optimizers.schedules.CosineDecay(
        initial_learning_rate=peak / 10 if warmup else peak,
        decay_steps=max(1, total - warmup),
        alpha=0.01,
        warmup_target=peak if warmup else None,
        warmup_steps=warmup,
    )


def compile_for_training(
    model: keras.Model,
    cfg: Config,
    replicas: int,
    steps_per_epoch: int,
    steps_per_execution: int = 1,
    jit_compile="auto",
):
    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate_schedule(cfg, replicas, steps_per_epoch)),
        loss="sparse_categorical_crossentropy",
        # Weighted, so the blank rows that fill the last validation batch count for nothing.
        weighted_metrics=[keras.metrics.SparseCategoricalAccuracy(name="accuracy")],
        steps_per_execution=steps_per_execution,
        jit_compile=jit_compile,
    )


def progress_verbosity() -> int:
    """Keras' verbose: a live progress bar where someone watches (a terminal, a notebook),
    one line per epoch in logs, where a live bar would write thousands of lines."""
    return 1 if sys.stdout.isatty() or "ipykernel" in sys.modules else 2


def predict_probabilities(
    net: keras.Model, batches, tta: bool = False
) -> tuple[np.ndarray, list[np.ndarray]]:
    """Class probabilities of the real rows of (image, key, weight[, id]) batches, and their
    keys (labels or ids, then ids), in one pass with a progress bar. Only images go to the
    device; keys stay on the host. With `tta`, the average with the flipped images.

    `predict` splits each batch over the replicas; `predict_on_batch` would give every
    replica the whole batch under tf.distribute.
    """
    probabilities, keys = [], []
    progress = keras.utils.Progbar(int(batches.cardinality()), verbose=progress_verbosity())
    for images, batch_keys, weights, *ids in batches.as_numpy_iterator():
        real = weights > 0  # not the blank rows that fill the last batch
        predicted = net.predict(images, batch_size=len(images), verbose=0)
        if tta:  # a horizontal flip: what a photo of the same thing often looks like
            flipped = net.predict(images[:, :, ::-1], batch_size=len(images), verbose=0)
            predicted = (predicted + flipped) / 2
        probabilities.append(predicted[real])
        keys.append([batch_keys[real], *(column[real] for column in ids)])
        progress.add(1)
    return np.concatenate(probabilities), [
        np.concatenate(column) for column in zip(*keys, strict=True)
    ]


def predict_classes(net: keras.Model, batches) -> tuple[np.ndarray, np.ndarray]:
    """Predicted classes and keys (labels or ids) of the real rows of (image, key, weight)
    batches."""
    probabilities, (keys, *_) = predict_probabilities(net, batches)
    return np.argmax(probabilities, axis=-1), keys
