"""Train the classifier: data checks, the model in the accelerator's scope, fit, checkpoints."""

from __future__ import annotations

from pathlib import Path

import keras

from . import accelerator, dataset, model, records, scoring
from .config import Config, UserError
from .files import write_json, written_whole
from .predict import predict_classes, weights_path


class EpochCheckpoint(keras.callbacks.Callback):
    """After each epoch, the weights and the epoch reached, each replaced whole."""

    def __init__(self, folder: Path):
        super().__init__()
        self.folder = folder

    def on_epoch_end(self, epoch, logs=None):
        with written_whole(self.folder / "checkpoint.weights.h5") as temporary:
            self.model.save_weights(temporary)
        write_json(self.folder / "checkpoint.json", {"epoch": epoch + 1, "logs": logs or {}})


def train(cfg: Config) -> dict:
    """Fit the model on the training records; returns the history (loss and metrics per epoch)."""
    keras.utils.set_random_seed(cfg.seed)
    found = accelerator.detect()
    print(accelerator.describe(found))
    train_files = records.find_checked(cfg, cfg.train_files, "--train-files", labeled=True)
    valid_files = (
        records.find_checked(cfg, cfg.valid_files, "--valid-files", labeled=True)
        if cfg.valid_files
        else []
    )
    global_batch = cfg.batch_size * found.replicas
    available = records.count(train_files)
    steps = cfg.steps_per_epoch or available // global_batch
    if steps == 0:
        raise UserError(
            f"{available} training records make no full global batch of {global_batch} "
            f"(--batch-size {cfg.batch_size} x {found.replicas} replicas); lower --batch-size"
        )
    print(f"global batch: {global_batch}, steps per epoch: {steps}, training records: {available}")

    with found.strategy.scope():
        net = model.build(cfg)
        model.compile_for_training(net, cfg, found.replicas, steps)
    output = Path(cfg.output_dir)
    valid = (
        dataset.for_inference(valid_files, cfg, global_batch, labeled=True) if valid_files else None
    )
    history = net.fit(
        dataset.for_training(train_files, cfg, global_batch),
        epochs=cfg.epochs,
        steps_per_epoch=steps,
        validation_data=valid,
        callbacks=[EpochCheckpoint(output / "checkpoints")],
        shuffle=False,  # the dataset shuffles itself; Keras cannot shuffle a tf.data pipeline
        verbose=2,
    ).history

    with written_whole(weights_path(cfg)) as temporary:
        net.save_weights(temporary)
    if valid is not None:
        classes, labels = predict_classes(net, valid)
        history[f"final_valid_{cfg.metric}"] = scoring.score(labels, classes, cfg.metric)
        print(f"valid {cfg.metric}: {history[f'final_valid_{cfg.metric}']:.4f}")
    write_json(output / "history.json", history)
    print(f"weights: {weights_path(cfg)}")
    return history
