"""Class probabilities of a trained model over inference batches, with their keys."""

from __future__ import annotations

import sys
import time

import keras
import numpy as np

from ..config import TTA_VIEWS


def progress_verbosity() -> int:
    """Keras' verbose: a live progress bar where someone watches (a terminal, a notebook),
    one line per epoch in logs, where a live bar would write thousands of lines."""
    return 1 if sys.stdout.isatty() or "ipykernel" in sys.modules else 2


TIMED = (2, 6)  # the batches timed for the speed: after the first (compiling), a few


def predict_probabilities(
    net: keras.Model, batches, tta: str = "none", test_images: int = 0, models: int = 1
) -> tuple[np.ndarray, list[np.ndarray]]:
    """Class probabilities of the real rows of (image, key, weight[, id]) batches, and their
    keys (labels or ids, then ids), in one pass with a progress bar. Only images go to the
    device; keys stay on the host. `tta` (Config.tta): the views averaged (`views`). With
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
        predicted = sum(predicted_batch(net, view) for view in views(images, tta)) / TTA_VIEWS[tta]
        probabilities.append(predicted[real])
        keys.append([batch_keys[real], *(column[real] for column in ids)])
        progress.add(1)
    return np.concatenate(probabilities), [
        np.concatenate(column) for column in zip(*keys, strict=True)
    ]


def views(images, tta: str):
    """The batch as each view of Config.tta sees it: as it is; mirrored left to right (a photo
    of the same thing often looks so); with "eight", each of those turned by 0 to 3 quarter
    turns. Metadata, if any, as it is."""
    pixels = images["image"] if isinstance(images, dict) else images
    mirrors = [pixels] if tta == "none" else [pixels, pixels[:, :, ::-1]]
    turns = range(4) if tta == "eight" else range(1)
    for mirror in mirrors:
        for turn in turns:
            view = np.ascontiguousarray(np.rot90(mirror, turn, axes=(1, 2)))
            yield {**images, "image": view} if isinstance(images, dict) else view


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


def say_speed(images_per_second: float, tta: str, images: int, models: int) -> None:
    """The speed of prediction here, and what it makes of the whole run's images."""
    by = f" by each of {models} models" if models > 1 else ""
    count, minutes = TTA_VIEWS[tta], images * models / images_per_second / 60
    flip = f" (each in {count} views)" if count > 1 else ""
    print(
        f"\nprediction: {images_per_second:.1f} images/s here{flip}; the {images:,} test "
        f"images{by} take about {minutes:.1f} minutes"
    )
