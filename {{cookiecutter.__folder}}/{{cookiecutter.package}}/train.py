"""Train the classifier: check the data, build the model in the accelerator's scope, fit.

A checkpoint after every epoch (checkpoints.py) means a run killed mid-way and started
again with the same command continues from the last finished epoch.
"""

from __future__ import annotations

import keras

from . import accelerator, checkpoints, dataset, model, plan, plots, records, scoring
from .accelerator import Accelerator
from .config import Config, output_path
from .files import write_json


def train(cfg: Config, found: Accelerator | None = None) -> dict:
    """Fit the model on the training records; returns the history (loss and metrics per epoch).

    Pass the accelerator from `accelerator.detect(cfg)`; without it, train detects it itself.
    """
    found = found or accelerator.detect(cfg)
    keras.utils.set_random_seed(cfg.seed)
    train_files = records.find_checked(cfg, "train_files", labeled=True)
    valid_files = records.find_checked(cfg, "valid_files", labeled=True) if cfg.valid_files else []
    available = records.count(train_files)
    run = plan.make(cfg, found, available)
    training = dataset.for_training(train_files, cfg, run.global_batch, found.image_dtype)
    dataset.check_static(training, "train_files")  # XLA preflight, before any compiling
    print(f"global batch: {run.global_batch}, training records: {available}")
    print(run.describe())

    with found.scope():
        net = model.build(cfg, found.image_dtype, run.precision)
        model.compile_for_training(
            net, cfg, found.replicas, run.steps_per_epoch, run.steps_per_execution
        )
        done, history = checkpoints.resume(net, cfg)
        valid = None
        if valid_files and found.processes > 1:
            print("validation: skipped with several processes; score a `predict` run instead")
        elif valid_files:
            valid = dataset.for_inference(
                valid_files, cfg, run.global_batch, True, found.image_dtype
            )
        if done < cfg.epochs:
            net.fit(
                training,
                initial_epoch=done,
                epochs=cfg.epochs,
                steps_per_epoch=run.steps_per_epoch,
                validation_data=valid,
                callbacks=[checkpoints.EveryEpoch(cfg, history, found.writes_files)],
                shuffle=False,  # the dataset shuffles itself; Keras cannot shuffle tf.data
                verbose=model.progress_verbosity(),
            )
        else:
            print(f"all {cfg.epochs} epochs were done already; --no-resume trains again")
        if valid is not None:
            classes, labels = model.predict_classes(net, valid)
            history[f"final_valid_{cfg.metric}"] = scoring.score(labels, classes, cfg.metric)
            print(f"valid {cfg.metric}: {history[f'final_valid_{cfg.metric}']:.4f}")
    checkpoints.save_weights(net, checkpoints.trained_weights(cfg), found.writes_files)
    if found.writes_files:
        write_json(output_path(cfg, "history.json"), history)
        plots.training_curves(history, cfg.metric, output_path(cfg, "curves.png"))
        print(f"weights: {checkpoints.trained_weights(cfg)}")
    return history
