"""Class probabilities of a trained model over inference batches, with their keys."""

from __future__ import annotations

import sys

import keras
import numpy as np


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
