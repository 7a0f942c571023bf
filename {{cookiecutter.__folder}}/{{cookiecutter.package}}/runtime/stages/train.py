"""Train the classifier: check everything it needs, build the model in the accelerator's
scope, fit; with records in folds, one fold or every fold in turn (folds.py).

A checkpoint after every epoch (checkpoints.py) means a run killed mid-way and started
again with the same command continues from the last finished epoch.
"""

from __future__ import annotations

import contextlib

import keras
import numpy as np
import tensorflow as tf

from ..config import Config, class_names, given_values, places_of, recipe_line
from ..data import images, metadata_inputs, pipeline, source
from ..errors import named
from ..learning import averaging, grades, recipe, scoring, thresholds
from ..learning.predictions import predict_probabilities, progress_verbosity
from ..outputs import checkpoints, plots
from ..platform import accelerator, paths
from ..platform.accelerator import Accelerator
from ..platform.files import write_json
from ..platform.run_lock import one_run_at_a_time
from . import folds, preflight


def train(
    cfg: Config,
    found: Accelerator | None = None,
    build_model=None,
    compile_model=None,
    host_augmentations=None,
) -> dict:
    """Fit the model on the training records; returns the history (loss and metrics per epoch).

    `build_model`, `compile_model` and `host_augmentations` are the recipe (model.py's,
    unless a notebook passes its model cell's).

    With records in folds, fold `cfg.fold` validates and the others train, in
    <output>/fold<k>/; `fold="all"` trains every fold in turn, then scores their out-of-fold
    predictions together and returns {"folds": {k: history}, "out_of_fold": score}.
    Pass the accelerator from `accelerator.detect(cfg)`; without it, train detects it itself.
    """
    cfg = paths.placed(cfg)  # where it reads and writes, found once
    found = found or accelerator.detect(cfg)
    make = (
        build_model or recipe("build_model"),
        compile_model or recipe("compile_model"),
        host_augmentations or recipe("host_augmentations"),
    )
    # A second run into this folder would replace this one's checkpoints: it is refused.
    held = one_run_at_a_time(places_of(cfg).output, named("output_dir"))
    with held if found.writes_files else contextlib.nullcontext():
        cfg, _ = source.resolved(cfg)  # once: the one run and the fold count read it
        runs = folds.runs(cfg)
        if runs == [cfg]:  # no folds: the one run, in the output folder itself
            return train_run(cfg, found, *make)
        folds.check_each_fold_validates(cfg)
        histories = {int(run.fold): train_run(run, found, *make) for run in runs}
        if cfg.fold != "all":
            return histories[int(cfg.fold)]
        score = folds.score_out_of_fold(cfg, list(histories)) if found.writes_files else None
        return {"folds": histories, "out_of_fold": score}


def train_run(
    cfg: Config, found: Accelerator, build_model, compile_model, host_augmentations
) -> dict:
    """One run: preflight, build, resume, fit, score the validation records."""
    keras.utils.set_random_seed(cfg.seed)  # before the pipeline and the model are built
    cfg, said = source.resolved(cfg)  # with what the records' manifest or the TFDS set says
    print(given_values(cfg))
    recipe_said = recipe_line(cfg)
    if recipe_said:
        print(recipe_said)
    checked = preflight.ready(cfg, found, "train")  # what doctor checks: fails in seconds
    if isinstance(checked.data, source.CompetitionImages) and found.writes_files:
        images.save_folds(cfg)  # a resumed run, OOF and predict read the same folds
    run, train = checked.plan.value, checked.train.value
    valid_files = checked.valid.value.files if checked.valid.value else None
    print(f"global batch: {run.global_batch}, training records: {train.records}")
    for line in (checked.corrections.line, checked.pseudo.line):  # what trains beside
        if line:
            print(line)
    table = metadata_inputs.for_training(cfg, said, found.writes_files)  # None: images alone
    if table and checked.pseudo.value:  # the test images trained on join their own rows
        table = metadata_inputs.with_test_rows(cfg, table, checked.pseudo.value.ids)
    training = pipeline.for_training(
        train.files,
        cfg,
        run.global_batch,
        found.image_dtype,
        checked.skip.value,
        host_augmentations(cfg),
        table,
        checked.corrections.value,
        checked.pseudo.value,
    )
    pipeline.check_static(training, "train_files")  # XLA compiles only static shapes
    print(run.describe())
    print(checked.resume.line)  # where it starts, and what changed since the checkpoint
    if checked.skip.line:
        print(checked.skip.line)

    with found.scope():
        keras.mixed_precision.set_global_policy(run.precision)  # read by each layer made
        if table:  # a model cell of before the metadata takes three arguments
            net = build_model(cfg, checked.weights.value, found.image_dtype, table.width)
        else:
            net = build_model(cfg, checked.weights.value, found.image_dtype)
        print(f"model: {net.name}, {net.count_params():,} parameters")
        shares = balanced(cfg, said)  # a model cell of before it takes no class shares
        compile_model(
            net,
            cfg,
            found.replicas,
            run.steps_per_epoch,
            **({"class_shares": shares} if shares else {}),
            steps_per_execution=run.steps_per_execution,
        )
        done, history = checkpoints.resume(net, cfg)
        valid = None
        if valid_files and found.processes > 1:
            print("validation: skipped with several processes; score a `predict` run instead")
        elif valid_files:
            valid = pipeline.for_inference(
                valid_files, cfg, run.global_batch, True, found.image_dtype, metadata=table
            )
        validation = validated(cfg, valid)
        if done < cfg.epochs:
            try:
                net.fit(
                    training,
                    initial_epoch=done,
                    epochs=cfg.epochs,
                    steps_per_epoch=run.steps_per_epoch,
                    callbacks=[
                        # Keras' epoch line first, then the validation's, which scores the
                        # raw weights and their average (Config.ema) with the metric.
                        keras.callbacks.ProgbarLogger(),
                        *validation,
                        checkpoints.EveryEpoch(cfg, run, history, found.writes_files),
                        *skipping(checked.skip.value),
                    ],
                    shuffle=False,  # the dataset shuffles itself; Keras cannot shuffle tf.data
                    verbose=progress_verbosity(),
                )
            except tf.errors.InvalidArgumentError as error:  # an image that does not decode
                raise preflight.bad_image(
                    checked,
                    error,
                    "training stopped at a bad record; the checkpoint of the last finished "
                    "epoch is kept",
                    "write those records again, leave their shards out, or skip them with "
                    "--bad-records skip",
                ) from error
        else:
            print(f"all {cfg.epochs} epochs were done already; --no-resume trains again")
        choice = averaging.chosen(history, cfg.metric)
        averaging.keep(net, choice, validation[0].raw if validation else None)
        print(averaging.said(choice, averaging.averages_weights(net)))
        if found.writes_files:  # an earlier run's: this run writes its own, or none
            for name in (grades.CUTS, thresholds.THRESHOLDS):
                (places_of(cfg).output / name).unlink(missing_ok=True)
        if valid is not None:
            history[f"final_valid_{cfg.metric}"] = score_validation(
                cfg, net, run, valid_files, found, table
            )
    checkpoints.save_trained(net, cfg, run, found.writes_files, choice)
    if found.writes_files:
        write_json(places_of(cfg).output / "history.json", history)
        plots.training_curves(history, cfg.metric, places_of(cfg).output / "curves.png")
        print(f"weights: {checkpoints.trained_weights(cfg)}")
    return history


def balanced(cfg: Config, said: dict | None) -> list[float] | None:
    """With Config.class_balance: each class's share of the training images, and the loss's
    weights they make, said; None when off."""
    if not cfg.class_balance:
        return None
    shares = folds.class_shares(cfg, said)
    if shares is None:
        print(f"{named('class_balance')}: the data does not count its classes; off")
        return None
    weights = recipe("class_weights")(cfg, shares)
    names = class_names(cfg) or [str(number) for number in range(cfg.num_classes)]
    listed = ", ".join(f"{name} {weight:.2f}" for name, weight in zip(names, weights, strict=True))
    print(f"class balance {cfg.class_balance}: each class's loss weighs {listed}")
    return shares


def score_validation(
    cfg: Config, net, run, valid_files: list[str], found: Accelerator, table=None
) -> float:
    """The metric on the validation records; their predictions go to valid.csv, with the ids
    when the records carry them (out-of-fold predictions, for k-fold). `table`: the
    metadata joined to each image (metadata.Features), if any."""
    ids = source.of(cfg, "valid_files").carries_ids(cfg, valid_files)
    batches = pipeline.for_inference(
        valid_files, cfg, run.global_batch, True, found.image_dtype, with_ids=ids, metadata=table
    )
    probabilities, (labels, *id_column) = predict_probabilities(net, batches)
    cuts = scoring.cuts_for(cfg, labels, probabilities)
    result = scoring.of_run(cfg, labels, probabilities, cuts)
    print(f"valid {scoring.metric_named(cfg.metric, cfg.multi_label)}: {result:.4f}")
    if found.writes_files:
        keys = [key.decode() for key in id_column[0]] if ids else [""] * len(labels)
        folds.write_predictions(cfg, probabilities, labels, keys, cuts)
        if cuts is not None and cfg.multi_label:
            thresholds.save(cfg, cuts)
            print(f"thresholds per class (best validation F1 each): {cuts}")
        elif cuts is not None:
            grades.save(cfg, cuts)
            print(f"cuts between grades (best validation kappa): {cuts}")
        elif cfg.metric == "qwk":
            print("grades: the most probable; cuts of the expected grade scored no better")
    return result


def validated(cfg: Config, valid) -> list[keras.callbacks.Callback]:
    """With validation records: each epoch scored with the competition's metric, the raw
    weights and their average alike (averaging.py). Each pass is one `predict` over the
    records' images, Keras' own compiled loop; their labels are read once, in the same fixed
    order (pipeline.for_inference), and the blank rows that fill the last batch dropped."""
    if valid is None:
        return []
    images = valid.map(lambda image, label, weight: image)
    truth = {}

    def score(net) -> dict[str, float]:
        if not truth:  # one pass over the labels, at the first epoch's end
            rows = [(label, weight) for _, label, weight in valid.as_numpy_iterator()]
            real = np.concatenate([weight for _, weight in rows]) > 0
            truth.update(labels=np.concatenate([label for label, _ in rows])[real], real=real)
        probabilities = net.predict(images, verbose=0)[truth["real"]]
        labels = truth["labels"]
        cuts = scoring.cuts_for(cfg, labels, probabilities)
        if cfg.multi_label:
            right = (probabilities >= 0.5) == (labels > 0)
        else:
            right = probabilities.argmax(-1) == labels
        return {
            "metric": scoring.of_run(cfg, labels, probabilities, cuts),
            "loss": float(keras.ops.mean(net.loss(labels, probabilities))),
            "accuracy": float(np.mean(right)),
        }

    return [averaging.ValidatedEachEpoch(score, cfg.metric)]


def skipping(skipped: frozenset[str]) -> list[keras.callbacks.Callback]:
    """With --bad-records skip: say at each epoch how many bad records every pass leaves out."""
    if not skipped:
        return []
    line = f"bad records skipped: {len(skipped)} in every pass (--bad-records skip)"
    return [keras.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: print(line))]


def command(args, cfg: Config, found=None) -> int:
    train(cfg, found)
    return 0
