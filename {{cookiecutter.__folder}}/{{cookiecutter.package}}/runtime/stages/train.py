"""Training, fold by fold: for each fold its datasets (pipeline.py), the model built in the
accelerator's scope (model.py) and compiled (recipe.py), `fit` with its callbacks, then the fold's
out-of-fold predictions. The notebook shows this module as its training loop's cell, and
`train` on the command line runs it: what you change here is what trains.

What is not the recipe stays behind one call each (fitting.py). A checkpoint after every epoch
means a run killed mid-way and started again continues from the last finished epoch.
"""

from __future__ import annotations

import keras

from {{ cookiecutter.package }}.runtime.config import Config
from {{ cookiecutter.package }}.runtime.data import pipeline
from {{ cookiecutter.package }}.runtime.learning.model import build_model  # the model cell's
from {{ cookiecutter.package }}.runtime.learning.predictions import progress_verbosity
from {{ cookiecutter.package }}.runtime.learning.recipe import compile_model  # the recipe cell's
from {{ cookiecutter.package }}.runtime.outputs import checkpoints
from {{ cookiecutter.package }}.runtime.stages import fitting, folds, out_of_fold
from {{ cookiecutter.package }}.runtime.stages.run import Run, started


def train(run: Run | Config) -> dict:
    """Fit the model on the training records; returns the history (loss and metrics per epoch).

    With data in folds (or records pooled into folds where a fold is asked), fold `cfg.fold`
    validates and the others train, in <output>/fold<k>/; `fold="all"` trains every fold in
    turn, then scores their out-of-fold predictions together and returns
    {"folds": {k: history}, "out_of_fold": score}. Given a config, train starts its run.
    """
    run = started(run)  # where it reads and writes, the accelerator and the data: found once
    with fitting.one_train_at_a_time(run):  # another would replace its checkpoints
        runs = folds.runs(run)  # one per fold of data in folds; else the run itself
        if runs[0] is run:  # no folds: the one run, in the output folder itself
            return train_fold(run)
        folds.check_each_fold_validates(run)
        histories = {int(fold.cfg.fold): train_fold(fold) for fold in runs}  # each in its folder
        if run.cfg.fold != "all":
            return histories[int(runs[0].cfg.fold)]  # the one fold asked for
        writes = run.accelerator.writes_files
        score = out_of_fold.scored_folds(run, list(histories)) if writes else None
        return {"folds": histories, "out_of_fold": score}


def train_fold(run: Run) -> dict:
    """One fold's run: its datasets, the model, `fit`, the out-of-fold predictions."""
    cfg, accelerator = run.cfg, run.accelerator
    keras.utils.set_random_seed(cfg.seed)  # before the pipeline and the model are built
    ready = fitting.ready(run)  # every check, before the first step; what each found
    plan = ready.plan

    training = pipeline.for_training(
        run.data, ready.train_files, cfg, plan.global_batch, accelerator.image_dtype,
        ready.skipped, pipeline.host_augmentations(cfg), ready.table, ready.corrections,
        ready.pseudo,
    )  # fmt: skip
    pipeline.check_static(training, "train_files")  # XLA compiles only static shapes
    valid = fitting.validation_batches(run, ready)  # None: nothing validates

    with accelerator.scope():
        keras.mixed_precision.set_global_policy(plan.precision)  # read by each layer made
        model = build_model(
            cfg, ready.backbone, accelerator.image_dtype, *ready.metadata_width, **ready.values
        )
        print(f"model: {model.name}, {model.count_params():,} parameters")
        compile_model(
            model, cfg, accelerator.replicas, plan.steps_per_epoch,
            class_shares=ready.class_shares, steps_per_execution=plan.steps_per_execution,
            **ready.values,
        )  # fmt: skip
        done, history = checkpoints.resume(model, cfg, run.places)  # the epochs a killed run did
        validation = fitting.validated(cfg, valid)  # each epoch, the metric: weights, average
        callbacks = [
            keras.callbacks.ProgbarLogger(),  # Keras' epoch line, then the validation's
            *validation,
            checkpoints.EveryEpoch(cfg, run.places, plan, history, accelerator.writes_files),
            *fitting.skipping(ready.skipped),
        ]
        if done < cfg.epochs:
            with fitting.bad_images_named(ready, "training"):
                model.fit(
                    training,
                    initial_epoch=done,
                    epochs=cfg.epochs,
                    steps_per_epoch=plan.steps_per_epoch,
                    callbacks=callbacks,
                    shuffle=False,  # the dataset shuffles itself; Keras cannot shuffle tf.data
                    verbose=progress_verbosity(),
                )
        else:
            print(f"all {cfg.epochs} epochs were done already; --no-resume trains again")
        kept = fitting.keep_the_average(run, model, history)
        if valid is not None:  # valid.csv: the fold's out-of-fold predictions, and its score
            history[f"final_valid_{cfg.metric}"] = fitting.score_validation(run, model, ready)
    checkpoints.save_trained(model, cfg, run.places, plan, accelerator.writes_files, kept)
    fitting.save_history(run, history)
    return history


def command(args, run: Run) -> int:
    train(run)
    return 0
