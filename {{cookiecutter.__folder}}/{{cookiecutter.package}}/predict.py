"""Predict the test set with the trained weights and write submission.csv."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import tensorflow as tf

from . import accelerator, checkpoints, dataset, model, records, submission
from .config import Config, UserError, data_path, named, output_path


def read_sample(cfg: Config) -> pd.DataFrame | None:
    """The sample submission, or None (rows sorted by id) when the config names none."""
    if not cfg.sample_submission:
        return None
    path = data_path(cfg, cfg.sample_submission)
    if not tf.io.gfile.exists(path):
        print(f"no sample submission at {path}: rows are sorted by id, unchecked")
        return None
    with tf.io.gfile.GFile(path, "rb") as file:  # gs:// too
        return submission.read_sample(file.read(), path, cfg.id_column, cfg.label_column)


def predict(cfg: Config, found: accelerator.Accelerator | None = None) -> Path:
    """Write submission.csv; returns its path. Pass the accelerator from
    `accelerator.detect(cfg)`; without it, predict detects it itself."""
    found = found or accelerator.detect(cfg)
    if found.processes > 1:
        raise UserError(f"predict runs in one process: leave out {named('num_processes')}")
    files = records.find_checked(cfg, "test_files", labeled=False)
    sample = read_sample(cfg)  # before the model: a wrong sample fails in seconds
    global_batch = cfg.batch_size * found.replicas
    batches = dataset.for_inference(files, cfg, global_batch, False, found.image_dtype)
    with found.scope():
        net = checkpoints.load_trained(cfg, found)
        classes, ids = model.predict_classes(net, batches)
    ids = [key.decode() for key in ids]
    rows = submission.arrange(ids, classes.tolist(), sample, cfg.id_column, cfg.label_column)
    path = output_path(cfg, "submission.csv")
    submission.write(path, rows)
    print(f"wrote {len(rows)} rows to {path}")
    return path
