"""Predict the test set with the trained weights and write submission.csv: the average of
every trained fold model's probabilities (or the one model's), optionally with flipped
or turned images too (`--tta`), in the columns the sample submission asks for."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from {{ cookiecutter.package }}.runtime.config import Config, class_names
from {{ cookiecutter.package }}.runtime.data import metadata, pipeline
from {{ cookiecutter.package }}.runtime.data.tables import by_answer, gathering
from {{ cookiecutter.package }}.runtime.errors import UserError, named
from {{ cookiecutter.package }}.runtime.learning.predictions import predict_probabilities
from {{ cookiecutter.package }}.runtime.outputs import submission, trained_run
from {{ cookiecutter.package }}.runtime.platform.files import write_json
from {{ cookiecutter.package }}.runtime.stages import preflight
from {{ cookiecutter.package }}.runtime.stages.run import Run, started

# A test image that does not decode, by where the test images are: what stopped, what to do.
UNDECODABLE = {
    "records": ("a test record whose image does not decode",
                "write those test records again from their images"),
    "files": ("a test image that does not decode", "copy it again from the competition's data"),
}  # fmt: skip


def predict(run: Run | Config) -> Path:
    """Write submission.csv; returns its path. Given a config, predict starts its run, with
    a trained run elsewhere (Config.trained_dir) saying its model and classes."""
    run = started(run, trained=True)  # places, accelerator, the trained run, the data: once
    cfg, accelerator, data = run.cfg, run.accelerator, run.data
    if accelerator.processes > 1:
        raise UserError(f"predict runs in one process: leave out {named('num_processes')}")
    checked = preflight.ready(run, "predict")  # every id and weight found before a model
    test, runs = checked.test.value, checked.trained.value.runs
    sample, shape, answers = checked.sample.value
    timed = test.records  # the speed is said once, with the first model's
    undecodable, fix = UNDECODABLE["files" if data.tests_from == "images" else "records"]
    stopped = (
        f"prediction stopped at {undecodable}; no submission was written (the one before, if "
        "any, is kept)"
    )
    fix += "; a submission needs every id"
    gathered = f": {gathering(answers, cfg.aggregate)}" if answers else ""
    print(f"predicting {test.said} with {len(runs)} trained models{gathered}")
    names = class_names(cfg)
    if shape.numbering(names):  # which number is which, said
        print(shape.numbering(names))
    # Each trained fold's model sees the same images: averaging their probabilities is worth
    # more than any one of them. A run with metadata joins the test table's rows as its
    # training folds encoded them, checked for every id before the first model loads.
    tables = [None] * len(runs)
    if data.uses_metadata:
        specs = [trained_run.metadata_spec(fold.places, data) for fold in runs]
        tables = metadata.for_test(cfg, run.places, data, specs, test.ids)
    answer_of = dict(zip(test.ids, answers, strict=True)) if answers else None

    def per_answer(probabilities, ids) -> tuple[list[str], np.ndarray]:
        """The ids and their rows: each image's, or gathered to each answer the sample asks."""
        keys = [key.decode() for key in ids]
        if answer_of is None:
            return keys, probabilities
        rows, keys = by_answer(probabilities, [answer_of[k] for k in keys], cfg.aggregate)
        asked = np.isin(keys, sample[shape.id_column]) if sample is not None else slice(None)
        return np.array(keys)[asked].tolist(), rows[asked]

    averaged, ids = 0, None
    for fold, table in zip(runs, tables, strict=True):  # each trained fold's model
        batches = pipeline.for_inference(
            data, test.files, cfg, accelerator.global_batch(cfg.batch_size), False,
            accelerator.image_dtype, metadata=table,
        )  # fmt: skip
        with accelerator.scope():
            net = trained_run.load_trained(fold.cfg, fold.places, data, accelerator)
            with preflight.bad_images_named(checked, stopped, fix):
                probabilities, (keys,) = predict_probabilities(
                    net, batches, cfg.tta, timed, len(runs)
                )
        timed = 0
        if ids is not None and not np.array_equal(ids, keys):  # one fixed order: never
            raise RuntimeError("the test records came in another order for another model")
        averaged, ids = averaged + probabilities / len(runs), keys
        if len(runs) > 1:  # each fold model's own: pseudo-labels for a fold come from its model
            own = submission.probabilities_table(
                cfg, *per_answer(probabilities, keys), sample, shape
            )
            submission.write(fold.places.output / "test_probabilities.csv", own)
    if len(runs) > 1:
        flips = {"none": "", "flip": ", with flips", "eight": ", with flips and turns"}[cfg.tta]
        models = ", ".join(str(trained_run.trained_weights(fold.places)) for fold in runs)
        print(f"averaged {len(runs)} fold models{flips}: {models}")
    keys, averaged = per_answer(averaged, ids)
    answered, cuts = submission.written_from(cfg, shape, averaged, checked.trained.value.thresholds)
    rows = submission.arrange(keys, shape.values(answered, names, cuts), sample, shape)
    path = run.places.output / "submission.csv"
    submission.write(path, rows)
    print(f"wrote {len(rows)} rows to {path} ({shape.describe(cfg.multi_label)})")
    kept = run.places.output / "test_probabilities.csv"
    submission.write(kept, submission.probabilities_table(cfg, keys, averaged, sample, shape))
    write_json(kept.with_suffix(".json"), {"tta": cfg.tta, "models": len(runs)})  # for blend
    print(f"and each class's probability, averaged as submitted, to {kept}")
    return path


def command(args, run: Run) -> int:
    predict(run)
    return 0
