"""Check the accelerator, the data and the weights before spending hours of quota."""

from __future__ import annotations

import tensorflow as tf

from . import accelerator, dataset, model, records
from .config import Config, UserError, data_path, resolve_data_dir


def describe_spec(spec) -> str:
    return ", ".join(
        f"{name} {part.dtype.name} {tuple(part.shape)}"
        for name, part in zip(("image", "label"), spec, strict=True)
    )


def doctor(cfg: Config) -> list[str]:
    """Print what a run would use; return the problems that would stop it (none: ready)."""
    found = accelerator.detect()
    print(accelerator.describe(found))
    global_batch = cfg.batch_size * found.replicas
    print(f"global batch: {global_batch} ({cfg.batch_size} per replica x {found.replicas})")
    folder, source = resolve_data_dir(cfg)
    print(f"data dir: {folder} (from {source})")
    problems = []
    splits = [
        ("train", cfg.train_files, "--train-files", True),
        ("valid", cfg.valid_files, "--valid-files", True),
        ("test", cfg.test_files, "--test-files", False),
    ]
    train_files = []
    for split, pattern, flag, labeled in splits:
        if not pattern:
            print(f"{split}: none ({flag} is empty)")
            continue
        try:
            files = records.find_checked(cfg, pattern, flag, labeled)
            where = data_path(cfg, pattern)
            print(f"{split}: {len(files)} files, {records.count(files)} records ({where})")
            train_files = files if split == "train" else train_files
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
        spec = dataset.for_training(train_files, cfg, global_batch).element_spec
        print(f"train batch: {describe_spec(spec)}")
        if not all(part.shape.is_fully_defined() for part in spec):
            problems.append(
                f"the train batch has an unknown dimension ({describe_spec(spec)}); XLA needs static shapes"
            )
    try:
        model.backbone_weights(cfg)
        print(f"weights: {cfg.weights} for {cfg.backbone}")
    except UserError as error:
        problems.append(str(error))
        print(f"weights: PROBLEM: {error}")
    print(f"problems: {len(problems)} (above)" if problems else "problems: none, ready to train")
    return problems
