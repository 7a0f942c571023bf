"""Class probabilities of a trained model over inference batches, with their keys."""

from __future__ import annotations

import sys
import time

import keras
import numpy as np

from ..config import TTA_VIEWS


def progress_verbosity() -> int:
    """A live bar where someone watches; in logs one line an epoch, not thousands of lines."""
    return 1 if sys.stdout.isatty() or "ipykernel" in sys.modules else 2


TIMED = (2, 6)  # the batches timed for the speed: after the first (compiling), a few


def predict_probabilities(
    net: keras.Model, batches, tta: str = "none", test_images: int = 0, models: int = 1
) -> tuple[np.ndarray, list[np.ndarray]]:
    """Probabilities of the real rows of (image, key, weight[, id]) batches over the `tta` views,
    and their keys; with `test_images`, the speed early: a run too long for a notebook says so."""
    probabilities, keys, timed = [], [], {}
    count = int(batches.cardinality())
    progress = keras.utils.Progbar(count, verbose=progress_verbosity())
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
    columns = zip(*keys, strict=True)
    return np.concatenate(probabilities), [np.concatenate(column) for column in columns]


def views(images, tta: str):
    """Each view of Config.tta: as it is, mirrored, and with "eight" each turned 0 to 3 times."""
    pixels = images["image"] if isinstance(images, dict) else images
    mirrors = [pixels] if tta == "none" else [pixels, pixels[:, :, ::-1]]
    turns = range(4) if tta == "eight" else range(1)
    for mirror in mirrors:
        for turn in turns:
            view = np.ascontiguousarray(np.rot90(mirror, turn, axes=(1, 2)))
            yield {**images, "image": view} if isinstance(images, dict) else view


def predicted_batch(net: keras.Model, images: np.ndarray) -> np.ndarray:
    """`predict` splits the batch over replicas, but under TensorFlow builds a tf.data pipeline
    each call (45 ms on a CPU): with one replica, `predict_on_batch` runs the step without it."""
    strategy = getattr(net, "distribute_strategy", None)  # TensorFlow's; JAX has none
    if strategy is not None and strategy.num_replicas_in_sync == 1:
        return net.predict_on_batch(images)
    rows = len(images["image"] if isinstance(images, dict) else images)
    return net.predict(images, batch_size=rows, verbose=0)


def say_speed(images_per_second: float, tta: str, images: int, models: int) -> None:
    by = f" by each of {models} models" if models > 1 else ""
    count, minutes = TTA_VIEWS[tta], images * models / images_per_second / 60
    flip = f" (each in {count} views)" if count > 1 else ""
    print(
        f"\nprediction: {images_per_second:.1f} images/s here{flip}; the {images:,} test "
        f"images{by} take about {minutes:.1f} minutes"
    )
