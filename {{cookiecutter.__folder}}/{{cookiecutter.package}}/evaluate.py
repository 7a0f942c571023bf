"""Score the trained model on the validation records: per-class scores and a confusion matrix."""

from __future__ import annotations

from pathlib import Path

from sklearn.metrics import classification_report

from . import accelerator, checkpoints, dataset, folds, model, plots, preflight, scoring
from .accelerator import Accelerator
from .config import Config, output_path


def evaluate(cfg: Config, found: Accelerator | None = None) -> Path:
    """Print scikit-learn's per-class report and the competition metric; returns the path of
    the confusion matrix picture."""
    found = found or accelerator.detect(cfg)
    if folds.count(cfg) > 1:  # the model of the fold that validates (fold 0 for all)
        cfg = folds.run_config(cfg, 0 if cfg.fold == "all" else int(cfg.fold))
    checked = preflight.ready(cfg, found, "evaluate")
    cfg = checked.cfg  # with what the records' manifest says
    batches = dataset.for_inference(
        checked.files["valid"], cfg, cfg.batch_size * found.replicas, True, found.image_dtype
    )
    with found.scope():
        net = checkpoints.load_trained(cfg, found)
        classes, labels = model.predict_classes(net, batches)
    print(classification_report(labels, classes, digits=4, zero_division=0))
    print(f"valid {cfg.metric}: {scoring.score(labels, classes, cfg.metric):.4f}")
    return plots.confusion(labels, classes, cfg.num_classes, output_path(cfg, "confusion.png"))
