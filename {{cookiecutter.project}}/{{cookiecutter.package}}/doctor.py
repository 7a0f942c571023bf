"""Check the accelerator, the data and the weights before spending hours of quota."""

from __future__ import annotations

import tensorflow as tf

from . import accelerator, dataset, model, records
from .accelerator import Accelerator
from .config import Config, UserError, data_path, resolve_data_dir
from .train import steps_per_epoch


def doctor(cfg: Config, found: Accelerator | None = None, require: str = "") -> list[str]:
    """Print what a run would use; return the problems that would stop it (none: ready).

    `require` ("tpu" or "gpu") makes a missing accelerator a problem: a notebook pushed to a
    TPU machine then stops at once instead of training for hours on the host's CPU.
    """
    found = found or accelerator.detect(cfg)
    print(accelerator.describe(found))
    problems = []
    if require and found.kind != require:
        problems.append(
            f"--require {require}, but this run would use the {found.kind} ({found.how}); "
            f"in a notebook, pick a {require.upper()} accelerator in the settings"
        )
        print(f"accelerator: PROBLEM: {problems[-1]}")
    global_batch = cfg.batch_size * found.replicas
    print(f"global batch: {global_batch} ({cfg.batch_size} per replica x {found.replicas})")
    folder, source = resolve_data_dir(cfg)
    print(f"data dir: {folder} (from {source})")
    splits = [
        ("train", cfg.train_files, "--train-files", True),
        ("valid", cfg.valid_files, "--valid-files", True),
        ("test", cfg.test_files, "--test-files", False),
    ]
    train_files, train_records = [], 0
    for split, pattern, flag, labeled in splits:
        if not pattern:
            print(f"{split}: none ({flag} is empty)")
            continue
        try:
            files = records.find_checked(cfg, pattern, flag, labeled)
            counted = records.count(files)  # reads every record when names lack counts
            print(f"{split}: {len(files)} files, {counted} records ({data_path(cfg, pattern)})")
            if split == "train":
                train_files, train_records = files, counted
        except UserError as error:
            problems.append(str(error))
            print(f"{split}: PROBLEM: {error}")
    if cfg.sample_submission:
        path = data_path(cfg, cfg.sample_submission)
        print(
            f"sample submission: {path}"
            + ("" if tf.io.gfile.exists(path) else " (missing: rows will be sorted by id)")
        )
    if train_files:
        try:
            steps = steps_per_epoch(cfg, train_records, found.replicas)
            print(f"steps per epoch: {steps}")
            print(accelerator.run_settings(found, cfg, steps)[2])
        except UserError as error:
            problems.append(str(error))
            print(f"steps per epoch: PROBLEM: {error}")
        batches = dataset.for_training(train_files, cfg, global_batch, found.image_dtype)
        print(f"train batch: {dataset.describe_spec(batches.element_spec)}")
        try:
            dataset.check_static(batches, "--train-files")
        except UserError as error:
            problems.append(str(error))
            print(f"train batch: PROBLEM: {error}")
    try:
        model.backbone_weights(cfg)
        print(f"weights: {cfg.weights} for {cfg.backbone}")
    except UserError as error:
        problems.append(str(error))
        print(f"weights: PROBLEM: {error}")
    print(f"problems: {len(problems)} (above)" if problems else "problems: none, ready to train")
    return problems
