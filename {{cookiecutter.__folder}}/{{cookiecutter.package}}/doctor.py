"""Check the accelerator, the data and the weights before spending hours of quota."""

from __future__ import annotations

import tensorflow as tf

from . import accelerator, dataset, model, plan, records
from .accelerator import Accelerator
from .config import Config, UserError, data_path, named, resolve_data_dir

SPLITS = (
    ("train", "train_files", True),
    ("valid", "valid_files", True),
    ("test", "test_files", False),
)


def doctor(cfg: Config, found: Accelerator | None = None, require: str = "") -> list[str]:
    """Print what a run would use; return the problems that would stop it (none: ready).

    `require` ("tpu" or "gpu") makes a missing accelerator a problem: a notebook pushed to a
    TPU machine then stops at once instead of training for hours on the host's CPU.
    """
    found = found or accelerator.detect(cfg)
    problems = []

    def check(topic, step):
        """Run one check; a UserError becomes a problem, printed under its topic."""
        try:
            return step()
        except UserError as error:
            problems.append(str(error))
            print(f"{topic}: PROBLEM: {error}")

    check("accelerator", lambda: accelerator.require(found, require))
    global_batch = cfg.batch_size * found.replicas
    print(f"global batch: {global_batch} ({cfg.batch_size} per replica x {found.replicas})")
    folder, source = resolve_data_dir(cfg)
    print(f"data dir: {folder} (from {source})")
    train_files, train_records = [], 0
    for split, field, labeled in SPLITS:
        if not getattr(cfg, field):
            print(f"{split}: none ({named(field)} is empty)")
            continue
        files = check(
            split, lambda field=field, labeled=labeled: records.find_checked(cfg, field, labeled)
        )
        if files:
            counted = records.count(files)  # reads every record when names lack counts
            print(
                f"{split}: {len(files)} files, {counted} records ({data_path(cfg, getattr(cfg, field))})"
            )
            if split == "train":
                train_files, train_records = files, counted
    if cfg.sample_submission:
        path = data_path(cfg, cfg.sample_submission)
        print(
            f"sample submission: {path}"
            + ("" if tf.io.gfile.exists(path) else " (missing: rows will be sorted by id)")
        )
    if train_files:
        run = check("steps per epoch", lambda: plan.make(cfg, found, train_records))
        if run:
            print(run.describe())
        batches = dataset.for_training(train_files, cfg, global_batch, found.image_dtype)
        print(f"train batch: {dataset.describe_spec(batches.element_spec)}")
        check("train batch", lambda: dataset.check_static(batches, "train_files"))
    if check("weights", lambda: model.backbone_weights(cfg) or cfg.weights):
        print(f"weights: {cfg.weights} for {cfg.backbone}")
    print(f"problems: {len(problems)} (above)" if problems else "problems: none, ready to train")
    return problems
