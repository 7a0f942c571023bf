"""Training, fold by fold: for each fold its datasets (pipeline.py), the model built in the
accelerator's scope and compiled (model.py), `fit` with its callbacks, then the fold's
out-of-fold predictions. The notebook shows this module as its training loop's cell, and
`train` on the command line runs it: what you change here is what trains.

What is not the recipe stays behind one call each (fitting.py): the checks before the first
step and what they found, the run's lock, resuming from the last finished epoch, and keeping
the weights' average (the raw weights with --ema 0), by a rule fixed before the run. A
checkpoint after every epoch means a run killed mid-way and started again continues from the
last finished epoch.
"""

from __future__ import annotations

import keras

from ..config import Config
from ..data import pipeline, source
from ..learning import model as recipe  # model.py: the notebook's model cell
from ..learning.predictions import progress_verbosity
from ..outputs import checkpoints
from ..platform import accelerator, paths
from ..platform.accelerator import Accelerator
from . import fitting, folds, out_of_fold


def train(cfg: Config, found: Accelerator | None = None) -> dict:
    """Fit the model on the training records; returns the history (loss and metrics per epoch).

    With data in folds (or records pooled into folds where a fold is asked), fold `cfg.fold`
    validates and the others train, in <output>/fold<k>/; `fold="all"` trains every fold in
    turn, then scores their out-of-fold predictions together and returns
    {"folds": {k: history}, "out_of_fold": score}.
    Pass the accelerator from `accelerator.detect(cfg)`; without it, train detects it itself.
    """
    cfg = paths.placed(cfg)  # where it reads and writes, found once
    found = found or accelerator.detect(cfg)
    with fitting.one_train_at_a_time(cfg, found):  # another would replace its checkpoints
        cfg, _ = source.resolved(cfg)
        runs = folds.runs(cfg)  # one per fold of records in folds; else the one run
        if runs == [cfg]:  # no folds: the one run, in the output folder itself
            return train_fold(cfg, found)
        folds.check_each_fold_validates(cfg)
        histories = {}
        for run in runs:  # each fold in turn, in its own folder
            histories[int(run.fold)] = train_fold(run, found)
        if cfg.fold != "all":
            return histories[int(run.fold)]  # the one fold asked for
        score = out_of_fold.scored_folds(cfg, list(histories)) if found.writes_files else None
        return {"folds": histories, "out_of_fold": score}


def train_fold(cfg: Config, found: Accelerator) -> dict:
    """One fold's run: its datasets, the model, `fit`, the out-of-fold predictions."""
    keras.utils.set_random_seed(cfg.seed)  # before the pipeline and the model are built
    ready = fitting.ready(cfg, found)  # every check, before the first step; what each found
    cfg, run = ready.cfg, ready.plan

    training = pipeline.for_training(
        ready.train_files, cfg, run.global_batch, found.image_dtype, ready.skipped,
        recipe.host_augmentations(cfg), ready.table, ready.corrections, ready.pseudo,
    )  # fmt: skip
    pipeline.check_static(training, "train_files")  # XLA compiles only static shapes
    valid = fitting.validation_batches(ready, found)  # None: nothing validates

    with found.scope():
        keras.mixed_precision.set_global_policy(run.precision)  # read by each layer made
        model = recipe.build_model(
            cfg, ready.backbone, found.image_dtype, *ready.metadata_width, **ready.values
        )
        print(f"model: {model.name}, {model.count_params():,} parameters")
        recipe.compile_model(
            model, cfg, found.replicas, run.steps_per_epoch, class_shares=ready.class_shares,
            steps_per_execution=run.steps_per_execution, **ready.values,
        )  # fmt: skip
        done, history = checkpoints.resume(model, cfg)  # the epochs a killed run finished
        validation = fitting.validated(cfg, valid)  # each epoch, the metric: weights, average
        callbacks = [
            keras.callbacks.ProgbarLogger(),  # Keras' epoch line, then the validation's
            *validation,
            checkpoints.EveryEpoch(cfg, run, history, found.writes_files),
            *fitting.skipping(ready.skipped),
        ]
        if done < cfg.epochs:
            with fitting.bad_images_named(ready, "training"):
                model.fit(
                    training,
                    initial_epoch=done,
                    epochs=cfg.epochs,
                    steps_per_epoch=run.steps_per_epoch,
                    callbacks=callbacks,
                    shuffle=False,  # the dataset shuffles itself; Keras cannot shuffle tf.data
                    verbose=progress_verbosity(),
                )
        else:
            print(f"all {cfg.epochs} epochs were done already; --no-resume trains again")
        kept = fitting.keep_the_average(model, history, cfg, found)
        if valid is not None:  # valid.csv: the fold's out-of-fold predictions, and its score
            history[f"final_valid_{cfg.metric}"] = fitting.score_validation(
                cfg, model, ready, found
            )
    checkpoints.save_trained(model, cfg, run, found.writes_files, kept)
    fitting.save_history(cfg, history, found)
    return history


def command(args, cfg: Config, found=None) -> int:
    train(cfg, found)
    return 0
