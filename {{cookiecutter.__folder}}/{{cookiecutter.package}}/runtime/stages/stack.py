"""`stack`: a second-stage model on the runs' out-of-fold probabilities and the metadata beside
each image, as ISIC 2024's winners stacked gradient-boosted trees on their image models.

The runs are `--fold all` runs, predicted, checked alike as `blend` checks them (the same images in
the same folds, the same classes and metric, the same test ids). Its features are each run's class
probabilities for an image, from the fold model that never trained on it, and the image's metadata
columns (Config.metadata_columns: the training CSV's, or the records' metadata.csv, encoded as train
encodes them). scikit-learn's HistGradientBoostingClassifier is fitted on every training image and
predicts the test images from the runs' test probabilities and the test table's rows.

Its CV is nested, as `blend`'s is: each fold's images are scored by trees fitted on the other folds'
alone; the score of trees fitted on every image, which flatters them, is printed beside it. Writes
stack.json (the runs, the columns, both CVs: what `kernel --inference --blend` reads),
submission.csv in the sample's shape and test_probabilities.csv into --output-dir. In the inference
notebook, `predict_stack` predicts with each run afresh and fits the trees again.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from .. import scoring
from ..config import Config, targets
from ..errors import UserError
from ..learning import cuts
from ..platform import paths
from ..platform.files import STACK, output_folder, place, refuse_foreign, write_json
from . import blend, out_of_fold
from .run import Run, started

CONFIG_FIELDS = (*blend.CONFIG_FIELDS, "train_csv", "test_csv", "metadata_columns", "group_column")
STACK_FILES = (STACK, "submission.csv", "test_probabilities.csv")
# Stumps of three leaves that learn slowly, each leaf a thirtieth of the images at least: on
# an ISIC-shaped set (3,000 images, 5% positive), their nested CV beat deeper trees' (15
# leaves of 20 images: pAUC 0.153 against 0.160 stacking an image-only run; docs/commands.md).
TREES = {
    "learning_rate": 0.02, "max_iter": 300, "max_leaf_nodes": 3, "l2_regularization": 1.0,
    "random_state": 0,
}  # fmt: skip
LEAF_SHARE = 30


def predicted(cfg: Config, features: np.ndarray, truth: np.ndarray, rows, test: np.ndarray):
    """Trees fitted on the training images `rows` (a mask), predicting the `test` features:
    each class's probability, or (a metric of values) each target's value by its own trees."""
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

    leaf = max(5, len(features) // LEAF_SHARE)
    if targets(cfg) == "values":
        trees = HistGradientBoostingRegressor(**TREES, min_samples_leaf=leaf)
        return np.stack([trees.fit(features[rows], row[rows]).predict(test) for row in truth.T], 1)
    fitted = HistGradientBoostingClassifier(**TREES, min_samples_leaf=leaf)
    fitted.fit(features[rows], truth[rows])
    probabilities = np.zeros((len(test), cfg.num_classes))
    probabilities[:, fitted.classes_] = fitted.predict_proba(test)
    return probabilities


def metadata_of(run: Run, train_ids: list[str], test_ids: list[str]):
    """The metadata columns' encoding (fitted on every training image: the trees see each
    fold's rows as train's features saw them) and its rows for the training and test ids;
    None where the data holds no metadata."""
    from ..data import metadata, metadata_inputs

    cfg, places, data = run.cfg, run.places, run.data
    read = metadata_inputs.found(cfg, places, data)
    if read is None:
        return None
    spec = metadata.fitted(read.table, read.columns)
    fix = f"the stack joins {', '.join(read.columns)} to each image: give every image's row"
    train = metadata.of_ids_rows(read.table, train_ids, read.where, fix)
    (test,) = metadata_inputs.for_test(cfg, places, data, [spec], test_ids)
    return spec, metadata.encoded(spec, train), test.values


def stacked(run: Run, runs: list[blend.FinishedRun]) -> dict:
    """The stack's features, nested CV and test probabilities."""
    cfg = run.cfg
    order = runs[0].oof["id"]
    test_ids = runs[0].test[runs[0].test.columns[0]].tolist()
    train_parts = [
        finished.oof.set_index("id").loc[order, finished.columns].to_numpy(float)
        for finished in runs
    ]
    test_parts = [finished.test.iloc[:, 1:].to_numpy(float) for finished in runs]
    names = [f"{name} {column}" for name in blend.names_of(runs) for column in runs[0].columns]
    joined = metadata_of(run, order.tolist(), test_ids)
    columns = []
    if joined:
        spec, train_rows, test_rows = joined
        from ..data import metadata

        train_parts.append(train_rows)
        test_parts.append(test_rows)
        names += metadata.feature_names(spec)
        columns = metadata.columns_of(spec)
    features, test_features = np.hstack(train_parts), np.hstack(test_parts)
    truth = out_of_fold.truth(cfg, runs[0].oof)
    folds = runs[0].oof["fold"].astype(str).to_numpy()
    if len(np.unique(truth)) < 2:
        raise UserError("stack: the training images hold one class; nothing to stack")
    nested = np.zeros((len(order), cfg.num_classes))
    for fold in np.unique(folds):
        held = folds == fold
        nested[held] = predicted(cfg, features, truth, ~held, features[held])
    all_rows = np.ones(len(order), bool)
    in_sample = predicted(cfg, features, truth, all_rows, features)
    test = predicted(cfg, features, truth, all_rows, test_features)
    score = blend.scorer(cfg, truth)
    cvs = [score(all_rows, part) for part in train_parts[: len(runs)]]
    best = scoring.best(cvs, cfg.metric)
    per_fold = [score(folds == fold, nested[folds == fold]) for fold in np.unique(folds)]
    return {
        "metric": cfg.metric,
        "classes": {name: getattr(cfg, name) for name in blend.CLASSES},
        "options": {name: getattr(cfg, name) for name in blend.OPTIONS},
        "runs": [
            blend.described(name, run, cv)
            for name, run, cv in zip(blend.names_of(runs), runs, cvs, strict=True)
        ],
        "metadata_columns": columns,
        "features": names,
        "trees": {**TREES, "min_samples_leaf": max(5, len(order) // LEAF_SHARE)},
        "stack_cv": score(all_rows, nested),
        "stack_cv_in_sample": score(all_rows, in_sample),
        "best_run": best,
        "fold_spread": float(np.std(per_fold)),
        "folds": len(per_fold),
        "images": len(order),
        "thresholds": cuts.cuts_to_score(cfg, truth, nested),
        "test_ids": test_ids,
        "test": test,
    }


def report(stack: dict) -> None:
    metric, runs = stack["metric"], stack["runs"]
    print(f"{metric} out of fold ({stack['images']} images, {stack['folds']} folds):")
    for run in runs:
        print(f"  {run['name']:<24} {run['cv']:.4f}")
    columns = ", ".join(stack["metadata_columns"])
    with_columns = f" and {columns}" if columns else ""
    print(
        f"  {'stack':<24} {stack['stack_cv']:.4f}  (trees on the runs' probabilities{with_columns}: "
        f"each fold scored by trees fitted on the other folds; {stack['stack_cv_in_sample']:.4f} "
        "fitted on every image, which flatters it)"
    )
    best = runs[stack["best_run"]]
    gain = scoring.gain(stack["stack_cv"], best["cv"], metric)
    spread = stack["fold_spread"]
    verdict = (
        f"more than the folds' spread ({spread:.4f})"
        if abs(gain) > spread
        else f"within the folds' spread ({spread:.4f}): it may be noise"
    )
    print(
        f"the stack against its best run ({best['name']}, {best['cv']:.4f}): {gain:+.4f}, {verdict}"
    )


def stack_runs(run: Run | Config, folders: list[str]) -> dict:
    run = started(run, on_accelerator=False)  # its data: the training table's metadata
    output = output_folder(run.places.output, "stack --output-dir", buckets=True)
    runs = [blend.read_run(place(folder), "stack") for folder in folders]
    blend.check_alike(runs, output, "stack", fewest=1)
    foreign = blend.not_written_by(output, STACK_FILES)
    refuse_foreign("stack --output-dir", output, "stack", foreign)
    run = blend.trained_for(runs[0], run)
    if run.cfg.multi_label or targets(run.cfg) == "shares":
        raise UserError(
            "stack: runs of several labels per image, or of shares, are blended, not stacked; "
            "use blend"
        )
    stack = stacked(run, runs)
    report(stack)
    ids, test = stack.pop("test_ids"), stack.pop("test")
    write_json(output / STACK, stack)
    blend.write_probabilities(run, stack, ids, test, "stacked")
    print(f"and {output / STACK}: the runs, the columns and both CVs")
    return stack


def predict_stack(run: Run, stack: dict) -> Path:
    """The stack's submission.csv in the inference notebook: each run predicts the test images
    (as in a blend's), then the trees are fitted again as `stack` fitted them, not saved: a
    pickled model is tied to the scikit-learn that wrote it. The fit is deterministic, so its
    CV must be stack.json's; where it is not, it says so."""
    tables = blend.predicted_runs(run, stack["runs"])
    runs = []
    for stacked_run, table in zip(stack["runs"], tables, strict=True):
        cfg = dataclasses.replace(run.cfg, trained_dir=stacked_run["trained_dir"])
        folder = paths.find(cfg, run.sources).trained
        runs.append(dataclasses.replace(blend.read_run(folder, "stack"), test=table))
    columns = ",".join(stack["metadata_columns"])
    run = blend.trained_for(runs[0], run)
    cfg = dataclasses.replace(run.cfg, metadata_columns=columns)
    run = dataclasses.replace(run, cfg=cfg)
    made = stacked(run, runs)
    with_columns = f" and {columns}" if columns else ""
    print(
        f"trees fitted on {made['images']} images' out-of-fold probabilities{with_columns}: "
        f"{cfg.metric} {made['stack_cv']:.4f} out of fold (stack.json: {stack['stack_cv']:.4f})"
    )
    if not np.isclose(made["stack_cv"], stack["stack_cv"], rtol=0, atol=1e-6):
        from sklearn import __version__

        print(
            f"warning: not the stack's CV: the runs' oof.csv or the training table differ from "
            f"what `stack` read, or scikit-learn {__version__} fits otherwise than the "
            "one that fitted it"
        )
    return blend.write_probabilities(run, made, made["test_ids"], made["test"], "stacked")


def arguments(parser) -> None:
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR", help="the output folder of a run")


def command(args, run: Run) -> int:
    stack_runs(run, args.runs)
    return 0
