"""Predict the test set with the trained weights and write submission.csv."""

from __future__ import annotations

from pathlib import Path

from . import accelerator, checkpoints, dataset, model, preflight, submission
from .config import Config, UserError, named, output_path


def predict(cfg: Config, found: accelerator.Accelerator | None = None) -> Path:
    """Write submission.csv; returns its path. Pass the accelerator from
    `accelerator.detect(cfg)`; without it, predict detects it itself."""
    found = found or accelerator.detect(cfg)
    if found.processes > 1:
        raise UserError(f"predict runs in one process: leave out {named('num_processes')}")
    checked = preflight.ready(cfg, found, "predict")  # test records, sample, weights, output
    cfg, files, sample = checked.cfg, checked.files["test"], checked.sample
    global_batch = cfg.batch_size * found.replicas
    batches = dataset.for_inference(files, cfg, global_batch, False, found.image_dtype)
    with found.scope():
        net = checkpoints.load_trained(cfg, found)
        classes, ids = model.predict_classes(net, batches)
    ids = [key.decode() for key in ids]
    labels = classes.tolist()
    names = (checked.manifest or {}).get("classes")
    if names:  # the records were made from class names: the submission carries them back
        labels = [names[number] for number in labels]
    rows = submission.arrange(ids, labels, sample, cfg.id_column, cfg.label_column)
    path = output_path(cfg, "submission.csv")
    submission.write(path, rows)
    print(f"wrote {len(rows)} rows to {path}")
    return path
