"""Class probabilities of a trained model over inference batches, with their keys."""

from __future__ import annotations

import sys
import time

import keras
import numpy as np


def progress_verbosity() -> int:
    """Keras' verbose: a live progress bar where someone watches (a terminal, a notebook),
    one line per epoch in logs, where a live bar would write thousands of lines."""
    return 1 if sys.stdout.isatty() or "ipykernel" in sys.modules else 2


TIMED = (2, 6)  # the batches timed for the speed: after the first (compiling), a few


def predict_probabilities(
    net: keras.Model, batches, tta: bool = False, test_images: int = 0, models: int = 1
) -> tuple[np.ndarray, list[np.ndarray]]:
    """Class probabilities of the real rows of (image, key, weight[, id]) batches, and their
    keys (labels or ids, then ids), in one pass with a progress bar. Only images go to the
    device; keys stay on the host. With `tta`, the average with the flipped images. With
    `test_images` (how many the run predicts, each with every one of its `models`), the speed
    and the time the whole run will take are printed after a few batches: a run that would
    outlast a notebook's limit says so early (flips are in the speed)."""
    probabilities, keys = [], []
    count = int(batches.cardinality())
    progress = keras.utils.Progbar(count, verbose=progress_verbosity())
    timed = {}
    for number, (images, batch_keys, weights, *ids) in enumerate(batches.as_numpy_iterator()):
        if test_images and number in (TIMED[0], min(TIMED[1], count - 1)):
            timed[number] = time.perf_counter()
            if len(timed) == 2 and number > TIMED[0]:
                rate = len(weights) * (number - TIMED[0]) / (timed[number] - timed[TIMED[0]])
                say_speed(rate, tta, test_images, models)
        real = weights > 0  # not the blank rows that fill the last batch
        predicted = predicted_batch(net, images)
        if tta:  # a horizontal flip: what a photo of the same thing often looks like
            predicted = (predicted + predicted_batch(net, flipped(images))) / 2
        probabilities.append(predicted[real])
        keys.append([batch_keys[real], *(column[real] for column in ids)])
        progress.add(1)
    return np.concatenate(probabilities), [
        np.concatenate(column) for column in zip(*keys, strict=True)
    ]


def flipped(images):
    """The batch's images mirrored left to right; their metadata, if any, as it is."""
    if isinstance(images, dict):
        return {**images, "image": images["image"][:, :, ::-1]}
    return images[:, :, ::-1]


def predicted_batch(net: keras.Model, images: np.ndarray) -> np.ndarray:
    """The model's probabilities for one batch of images. `predict` splits the batch over the
    replicas, where `predict_on_batch` would give each replica the whole batch under
    tf.distribute; but under TensorFlow `predict` builds a tf.data pipeline at each call
    (about 45 ms on a CPU, more than a small model's step): with one replica,
    `predict_on_batch` runs the same compiled step without it."""
    strategy = getattr(net, "distribute_strategy", None)  # TensorFlow's; JAX has none
    if strategy is not None and strategy.num_replicas_in_sync == 1:
        return net.predict_on_batch(images)
    rows = len(images["image"] if isinstance(images, dict) else images)
    return net.predict(images, batch_size=rows, verbose=0)


def say_speed(images_per_second: float, tta: bool, images: int, models: int) -> None:
    """The speed of prediction here, and what it makes of the whole run's images."""
    by = f" by each of {models} models" if models > 1 else ""
    flip, minutes = " (each with its flip)" if tta else "", images * models / images_per_second / 60
    print(
        f"\nprediction: {images_per_second:.1f} images/s here{flip}; the {images:,} test "
        f"images{by} take about {minutes:.1f} minutes"
    )
