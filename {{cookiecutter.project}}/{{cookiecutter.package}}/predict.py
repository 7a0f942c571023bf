"""Predict the test set with the trained weights and write submission.csv."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import tensorflow as tf

from . import accelerator, dataset, model, records, submission
from .config import Config, UserError, data_path


def predict_classes(net, batches) -> tuple[np.ndarray, np.ndarray]:
    """Predicted classes and keys (labels or ids) of the real rows of (image, key, weight)
    batches, in one pass. Only images go to the device; ids stay on the host.

    `predict` splits each batch over the replicas; `predict_on_batch` would give every
    replica the whole batch under tf.distribute.
    """
    classes, keys = [], []
    for images, batch_keys, weights in batches.as_numpy_iterator():
        probabilities = net.predict(images, batch_size=len(images), verbose=0)
        real = weights > 0  # not the blank rows that fill the last batch
        classes.append(np.argmax(probabilities, axis=-1)[real])
        keys.append(batch_keys[real])
    return np.concatenate(classes), np.concatenate(keys)


def weights_path(cfg: Config) -> Path:
    return Path(cfg.output_dir) / "model.weights.h5"


def load_trained(cfg: Config, found: accelerator.Accelerator):
    """The trained model; call inside found.scope()."""
    path = weights_path(cfg)
    if not path.is_file():
        raise UserError(f"no trained weights at {path}; run `train` first or set --output-dir")
    untrained = dataclasses.replace(cfg, weights="none")
    net = model.build(untrained, found.image_dtype, accelerator.precision(found, cfg.precision))
    net.load_weights(path)  # trained weights replace the backbone's
    return net


def read_sample(cfg: Config):
    """The sample submission's columns and ids; ours and None when there is none."""
    columns = [cfg.id_column, cfg.label_column]
    if not cfg.sample_submission:
        return columns, None
    path = data_path(cfg, cfg.sample_submission)
    if not tf.io.gfile.exists(path):
        print(f"no sample submission at {path}: rows are sorted by id, unchecked")
        return columns, None
    with tf.io.gfile.GFile(path) as file:
        return submission.read_sample(file.read(), path, cfg.id_column, cfg.label_column)


def predict(cfg: Config, found: accelerator.Accelerator | None = None) -> Path:
    """Pass the accelerator from `accelerator.detect(cfg)` when Keras must not be imported first."""
    found = found or accelerator.detect(cfg)
    print(accelerator.describe(found))
    if found.processes > 1:
        raise UserError("predict runs in one process: leave out --num-processes")
    files = records.find_checked(cfg, cfg.test_files, "--test-files", labeled=False)
    columns, expected = read_sample(cfg)  # before the model: a wrong sample fails in seconds
    global_batch = cfg.batch_size * found.replicas
    batches = dataset.for_inference(files, cfg, global_batch, False, found.image_dtype)
    with found.scope():
        net = load_trained(cfg, found)
        classes, ids = predict_classes(net, batches)
    rows = submission.arrange([key.decode() for key in ids], classes.tolist(), expected)
    path = Path(cfg.output_dir) / "submission.csv"
    submission.write(path, columns, cfg.id_column, rows)
    print(f"wrote {len(rows)} rows to {path}")
    return path
