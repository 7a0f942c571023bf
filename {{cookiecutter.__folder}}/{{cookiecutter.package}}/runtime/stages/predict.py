"""Predict the test set with the trained weights and write submission.csv: the average of
every trained fold model's probabilities (or the one model's), optionally with flipped
images too (`--tta`), in the columns the sample submission asks for."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..config import Config, class_names, places_of, uses_metadata
from ..data import pipeline, source
from ..errors import UserError, named
from ..learning.predictions import predict_probabilities
from ..outputs import submission, trained_run
from ..outputs.run_record import with_trained
from ..platform import accelerator, paths
from ..platform.files import write_json
from . import preflight

# A test image that does not decode, by where the test images are: what stopped, what to do.
UNDECODABLE = {
    "records": (
        "a test record whose image does not decode",
        "write those test records again from their images",
    ),
    "files": ("a test image that does not decode", "copy it again from the competition's data"),
}


def predict(cfg: Config, found: accelerator.Accelerator | None = None) -> Path:
    """Write submission.csv; returns its path. Pass the accelerator from
    `accelerator.detect(cfg)`; without it, predict detects it itself."""
    cfg = paths.placed(cfg)  # where it reads and writes, found once
    found = found or accelerator.detect(cfg)
    if found.processes > 1:
        raise UserError(f"predict runs in one process: leave out {named('num_processes')}")
    cfg = with_trained(cfg)  # a trained run elsewhere says its model and classes
    cfg, _ = source.resolved(cfg)  # with what the records' manifest or the TFDS set says
    checked = preflight.ready(cfg, found, "predict")  # every id and weight found before a model
    test, runs = checked.test.value, checked.trained.value.runs
    sample, shape = checked.sample.value.table, checked.sample.value.shape
    timed = test.records  # the speed is said once, with the first model's
    as_files = source.of(cfg, "test_files").kind == "images"
    undecodable, fix = UNDECODABLE["files" if as_files else "records"]
    stopped = (
        f"prediction stopped at {undecodable}; no submission was written (the one before, if "
        "any, is kept)"
    )
    fix += "; a submission needs every id"
    print(f"predicting {test.said} with {len(runs)} trained models")
    names = class_names(cfg)
    if shape.numbering(names):  # which number is which, said
        print(shape.numbering(names))
    # Each trained fold's model sees the same images: averaging their probabilities is worth
    # more than any one of them. A run with metadata joins the test table's rows as its
    # training folds encoded them, checked for every id before the first model loads.
    tables = [None] * len(runs)
    if uses_metadata(cfg):
        from ..data import metadata_inputs

        specs = [trained_run.metadata_spec(run) for run in runs]
        tables = metadata_inputs.for_test(cfg, specs, test.ids)
    averaged, ids = 0, None
    for run, table in zip(runs, tables, strict=True):
        batches = pipeline.for_inference(
            test.files, cfg, found.global_batch(cfg.batch_size), False, found.image_dtype,
            metadata=table,
        )  # fmt: skip
        with found.scope():
            net = trained_run.load_trained(run, found)
            with preflight.bad_images_named(checked, stopped, fix):
                probabilities, (keys,) = predict_probabilities(
                    net, batches, cfg.tta, timed, len(runs)
                )
        timed = 0
        if ids is not None and not np.array_equal(ids, keys):  # one fixed order: never
            raise RuntimeError("the test records came in another order for another model")
        averaged, ids = averaged + probabilities / len(runs), keys
        if len(runs) > 1:  # each fold model's own: pseudo-labels for a fold come from its model
            one = submission.probabilities_table(cfg, decoded(keys), probabilities, sample, shape)
            submission.write(places_of(run).output / "test_probabilities.csv", one)
    if len(runs) > 1:
        flips = ", with flips" if cfg.tta else ""
        models = ", ".join(str(trained_run.trained_weights(run)) for run in runs)
        print(f"averaged {len(runs)} fold models{flips}: {models}")
    answered, cuts = submission.written_from(cfg, shape, averaged, checked.trained.value.thresholds)
    predicted = shape.values(answered, names, cuts)
    keys = decoded(ids)
    rows = submission.arrange(keys, predicted, sample, shape)
    path = places_of(cfg).output / "submission.csv"
    submission.write(path, rows)
    print(f"wrote {len(rows)} rows to {path} ({shape.describe(cfg.multi_label)})")
    kept = places_of(cfg).output / "test_probabilities.csv"
    submission.write(kept, submission.probabilities_table(cfg, keys, averaged, sample, shape))
    write_json(kept.with_suffix(".json"), {"tta": cfg.tta, "models": len(runs)})  # for blend
    print(f"and each class's probability, averaged as submitted, to {kept}")
    return path


def decoded(ids) -> list[str]:
    return [key.decode() for key in ids]


def command(args, cfg: Config, found=None) -> int:
    predict(cfg, found)
    return 0
