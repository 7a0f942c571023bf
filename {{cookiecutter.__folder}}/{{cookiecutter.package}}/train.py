"""Train the classifier: check everything it needs, build the model in the accelerator's
scope, fit.

A checkpoint after every epoch (checkpoints.py) means a run killed mid-way and started
again with the same command continues from the last finished epoch.
"""

from __future__ import annotations

import keras

from . import accelerator, checkpoints, dataset, model, plots, preflight, scoring
from .accelerator import Accelerator
from .config import Config, output_path
from .files import write_json


def train(cfg: Config, found: Accelerator | None = None) -> dict:
    """Fit the model on the training records; returns the history (loss and metrics per epoch).

    Pass the accelerator from `accelerator.detect(cfg)`; without it, train detects it itself.
    """
    found = found or accelerator.detect(cfg)
    keras.utils.set_random_seed(cfg.seed)  # before the pipeline is built: its crops read it
    checked = preflight.ready(cfg, found, "train")  # what doctor checks: fails in seconds
    cfg = checked.cfg  # with what the records' manifest says
    run, training, valid_files = checked.run, checked.training, checked.files.get("valid")
    print(f"global batch: {run.global_batch}, training records: {checked.records['train']}")
    print(run.describe())
    print(checked.said["resume"])  # where it starts, and what changed since the checkpoint

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
                callbacks=[checkpoints.EveryEpoch(cfg, run, history, found.writes_files)],
                shuffle=False,  # the dataset shuffles itself; Keras cannot shuffle tf.data
                verbose=model.progress_verbosity(),
            )
        else:
            print(f"all {cfg.epochs} epochs were done already; --no-resume trains again")
        if valid is not None:
            classes, labels = model.predict_classes(net, valid)
            history[f"final_valid_{cfg.metric}"] = scoring.score(labels, classes, cfg.metric)
            print(f"valid {cfg.metric}: {history[f'final_valid_{cfg.metric}']:.4f}")
    checkpoints.save_trained(net, cfg, run, found.writes_files)
    if found.writes_files:
        write_json(output_path(cfg, "history.json"), history)
        plots.training_curves(history, cfg.metric, output_path(cfg, "curves.png"))
        print(f"weights: {checkpoints.trained_weights(cfg)}")
    return history
