"""Train the classifier: data checks, the model in the accelerator's scope, fit, checkpoints.

A checkpoint after every epoch (weights and optimizer state, Keras' .weights.h5) means a run
killed mid-way and started again with the same command continues from the last whole epoch.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import keras

from . import accelerator, dataset, model, records, scoring
from .accelerator import Accelerator
from .config import Config, UserError
from .files import write_json, written_whole
from .predict import predict_classes, weights_path


def checkpoint_folder(cfg: Config) -> Path:
    return Path(cfg.output_dir) / "checkpoints"


class EpochCheckpoint(keras.callbacks.Callback):
    """After each epoch, the weights with the optimizer's state, then the epoch reached and the
    history so far; each file is replaced whole, so a kill at any moment leaves a usable pair."""

    def __init__(self, folder: Path, history: dict, writes_files: bool):
        super().__init__()
        self.folder = folder
        self.history = history
        self.writes_files = writes_files

    def on_epoch_end(self, epoch, logs=None):
        for name, value in (logs or {}).items():
            self.history.setdefault(name, []).append(float(value))
        save_weights(self.model, self.folder / "checkpoint.weights.h5", self.writes_files)
        if self.writes_files:
            state = {"epoch": epoch + 1, "history": self.history}
            write_json(self.folder / "checkpoint.json", state)


def save_weights(net: keras.Model, path: Path, writes_files: bool) -> None:
    """Write the weights whole. With several JAX processes every process must call this:
    Keras makes variables while saving, and making one is a step all processes take together.
    The others write into a scratch folder."""
    if writes_files:
        with written_whole(path) as temporary:
            net.save_weights(temporary)
        return
    with tempfile.TemporaryDirectory() as scratch:
        net.save_weights(Path(scratch) / path.name)


def resume(net: keras.Model, cfg: Config) -> tuple[int, dict]:
    """The epochs already done and their history, after loading the last checkpoint if any."""
    folder = checkpoint_folder(cfg)
    state = folder / "checkpoint.json"
    saved = {"epoch": 0, "history": {}}
    if cfg.resume and state.is_file():
        saved = json.loads(state.read_text())
    if cfg.num_processes > 1:
        check_same_start(saved["epoch"], folder)
    if not saved["epoch"]:
        return 0, {}
    net.optimizer.build(net.trainable_variables)  # so its saved state has somewhere to go
    try:
        net.load_weights(folder / "checkpoint.weights.h5")
    except (ValueError, OSError) as error:
        raise UserError(
            f"the checkpoint in {folder} does not fit this model ({error}); "
            "start over with --no-resume, or pick another --output-dir"
        ) from error
    print(f"resuming after epoch {saved['epoch']} from {folder} (--no-resume starts over)")
    return saved["epoch"], saved["history"]


def check_same_start(epoch: int, folder: Path) -> None:
    """Processes that resume from different epochs would wait on each other for ever."""
    import numpy as np
    from jax.experimental import multihost_utils

    epochs = multihost_utils.process_allgather(np.int32(epoch)).tolist()
    if len(set(epochs)) > 1:
        raise UserError(
            f"the processes found checkpoints of different epochs in {folder} ({epochs}, by "
            "process); give every process the same shared --output-dir, or start over with "
            "--no-resume"
        )


def steps_per_epoch(cfg: Config, available: int, replicas: int) -> int:
    steps = cfg.steps_per_epoch or available // (cfg.batch_size * replicas)
    if steps == 0:
        raise UserError(
            f"{available} training records make no full global batch of "
            f"{cfg.batch_size * replicas} (--batch-size {cfg.batch_size} x {replicas} replicas); "
            "lower --batch-size"
        )
    return steps


def train(cfg: Config, found: Accelerator | None = None) -> dict:
    """Fit the model on the training records; returns the history (loss and metrics per epoch).

    Pass the accelerator from `accelerator.detect(cfg)` when Keras must not be imported first.
    """
    found = found or accelerator.detect(cfg)
    print(accelerator.describe(found))
    keras.utils.set_random_seed(cfg.seed)
    train_files = records.find_checked(cfg, cfg.train_files, "--train-files", labeled=True)
    valid_files = (
        records.find_checked(cfg, cfg.valid_files, "--valid-files", labeled=True)
        if cfg.valid_files
        else []
    )
    global_batch = cfg.batch_size * found.replicas
    available = records.count(train_files)
    steps = steps_per_epoch(cfg, available, found.replicas)
    training = dataset.for_training(train_files, cfg, global_batch, found.image_dtype)
    dataset.check_static(training, "--train-files")  # XLA preflight, before any compiling
    precision, multi_step, report = accelerator.run_settings(found, cfg, steps)
    print(f"global batch: {global_batch}, steps per epoch: {steps}, training records: {available}")
    print(report)

    with found.scope():
        net = model.build(cfg, found.image_dtype, precision)
        model.compile_for_training(net, cfg, found.replicas, steps, multi_step)
        done, history = resume(net, cfg)
        valid = None
        if valid_files and found.processes > 1:
            print("validation: skipped with several processes; score a `predict` run instead")
        elif valid_files:
            valid = dataset.for_inference(valid_files, cfg, global_batch, True, found.image_dtype)
        if done < cfg.epochs:
            net.fit(
                training,
                initial_epoch=done,
                epochs=cfg.epochs,
                steps_per_epoch=steps,
                validation_data=valid,
                callbacks=[EpochCheckpoint(checkpoint_folder(cfg), history, found.writes_files)],
                shuffle=False,  # the dataset shuffles itself; Keras cannot shuffle tf.data
                verbose=2,
            )
        else:
            print(f"all {cfg.epochs} epochs were done already; --no-resume trains again")
        if valid is not None:
            classes, labels = predict_classes(net, valid)
            history[f"final_valid_{cfg.metric}"] = scoring.score(labels, classes, cfg.metric)
            print(f"valid {cfg.metric}: {history[f'final_valid_{cfg.metric}']:.4f}")
    save_weights(net, weights_path(cfg), found.writes_files)
    if found.writes_files:
        write_json(Path(cfg.output_dir) / "history.json", history)
        print(f"weights: {weights_path(cfg)}")
    return history
