"""Predict the test set with the trained weights and write submission.csv."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import tensorflow as tf

from . import accelerator, dataset, model, records, submission
from .config import Config, UserError, data_path


def predict_classes(net, batches) -> tuple[np.ndarray, np.ndarray]:
    """Predicted classes and the second element of each (image, key) pair, in one pass."""
    classes, keys = [], []
    for images, batch_keys in batches:
        classes.append(np.argmax(net.predict_on_batch(images), axis=-1))
        keys.append(batch_keys.numpy())
    return np.concatenate(classes), np.concatenate(keys)


def weights_path(cfg: Config) -> Path:
    return Path(cfg.output_dir) / "model.weights.h5"


def load_trained(cfg: Config, strategy):
    path = weights_path(cfg)
    if not path.is_file():
        raise UserError(f"no trained weights at {path}; run `train` first or set --output-dir")
    with strategy.scope():
        net = model.build(dataclasses.replace(cfg, weights="none"))  # trained weights follow
        net.load_weights(path)
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


def predict(cfg: Config) -> Path:
    found = accelerator.detect()
    print(accelerator.describe(found))
    files = records.find_checked(cfg, cfg.test_files, "--test-files", labeled=False)
    columns, expected = read_sample(cfg)  # before the model: a wrong sample fails in seconds
    net = load_trained(cfg, found.strategy)
    batches = dataset.for_inference(files, cfg, cfg.batch_size * found.replicas, labeled=False)
    classes, ids = predict_classes(net, batches)
    rows = submission.arrange([key.decode() for key in ids], classes.tolist(), expected)
    path = Path(cfg.output_dir) / "submission.csv"
    submission.write(path, columns, cfg.id_column, rows)
    print(f"wrote {len(rows)} rows to {path}")
    return path
