"""The classifier: a pretrained backbone (backbones.py) and a small head.

The model takes images in 0..255 (uint8, or bfloat16 on TPUs under TensorFlow); while
training, its first layer crops and flips them at random (augment.py); the next scales them
as the backbone's preset says, so the input pipeline stays the same for every backbone. Only
Keras 3 APIs: the same code builds under TensorFlow and JAX.
"""

from __future__ import annotations

import sys

import keras
import numpy as np
from keras import layers

from . import backbones
from .augment import CropAndFlip
from .config import Config


def build(
    cfg: Config,
    image_dtype: str = "uint8",
    precision: str = "float32",
    backbone: backbones.Backbone | None = None,
) -> keras.Model:
    """The classifier, computing in `precision` (a Keras dtype policy such as mixed_bfloat16);
    `backbone` is one preflight loaded already (else it is loaded here). Call inside the
    accelerator's scope."""
    keras.mixed_precision.set_global_policy(precision)  # read by each layer as it is made
    backbone = backbone or backbones.load(cfg, precision)
    inputs = keras.Input((cfg.image_size, cfg.image_size, 3), dtype=image_dtype, name="image")
    # While training only: random crops and flips, on the accelerator (augment.py).
    x = CropAndFlip(cfg.crop_area, cfg.flip, cfg.seed, name="crop_and_flip")(inputs)
    # The preset's own scaling (its image converter's scale and offset: mean and std folded in).
    x = layers.Rescaling(backbone.scale, backbone.offset, name="to_backbone_range")(x)
    # Some keras-hub backbones name their input ({"images": ...}): give it by name.
    names = backbone.model.input if isinstance(backbone.model.input, dict) else None
    x = backbone.model({next(iter(names)): x} if names else x)
    # A feature map (convolutional backbones) or a sequence of patch tokens (transformers).
    pooling = layers.GlobalAveragePooling2D if len(x.shape) == 4 else layers.GlobalAveragePooling1D
    x = pooling(name="pool")(x)
    x = layers.Dropout(cfg.dropout)(x)
    # float32 probabilities even under mixed precision: softmax in bfloat16 loses the tail.
    # Several labels per image: each class its own sigmoid, not one softmax over them all.
    activation = "sigmoid" if cfg.multi_label else "softmax"
    outputs = layers.Dense(cfg.num_classes, activation=activation, dtype="float32", name="classes")(
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
    accuracy = (  # of each class's yes or no (multi-label), or of the one class
        keras.metrics.BinaryAccuracy(name="accuracy")
        if cfg.multi_label
        else keras.metrics.SparseCategoricalAccuracy(name="accuracy")
    )
    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate_schedule(cfg, replicas, steps_per_epoch)),
        loss="binary_crossentropy" if cfg.multi_label else "sparse_categorical_crossentropy",
        # Weighted, so the blank rows that fill the last validation batch count for nothing.
        weighted_metrics=[accuracy],
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
