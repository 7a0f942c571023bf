"""`stack`: a second-stage model on the runs' out-of-fold probabilities and the metadata beside
each image, as ISIC 2024's winners stacked gradient-boosted trees on their image models.

The runs are `--fold all` runs, predicted, checked alike as `blend` checks them. Its features are
each run's out-of-fold class probabilities for an image and the image's metadata columns
(Config.metadata_columns, encoded as train encodes them). scikit-learn's gradient-boosted trees are
fitted on every training image and predict the test images from the runs' test probabilities and
the test table's rows.

Its CV is nested, as `blend`'s is: each fold's images are scored by trees fitted on the other folds'
alone; the score of trees fitted on every image, which flatters them, is printed beside it. Writes
stack.json (what `kernel --inference --blend` reads), submission.csv and test_probabilities.csv; in
the inference notebook, `predict_stack` predicts with each run afresh and fits the trees again."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from .. import scoring
from ..config import Config, targets
from ..errors import UserError
from ..platform import paths
from ..platform.files import STACK, write_json
from . import blend
from .run import Run, started

CONFIG_FIELDS = (*blend.CONFIG_FIELDS, "train_csv", "test_csv", "metadata_columns", "group_column")
STACK_FILES = (STACK, "submission.csv", "test_probabilities.csv")
# Stumps of three leaves that learn slowly, each leaf a thirtieth of the images at least: on
# an ISIC-shaped set (3,000 images, 5% positive), their nested CV beat deeper trees' (15
# leaves of 20 images: pAUC 0.153 against 0.160 stacking an image-only run; docs/commands.md).
TREES = {"learning_rate": 0.02, "max_iter": 300, "max_leaf_nodes": 3, "l2_regularization": 1.0,
         "random_state": 0}  # fmt: skip
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
    """The metadata's rows for the training and test ids, encoded as fitted on every training
    image (as train's features saw each fold's), to join to the runs'; its names and columns."""
    from ..data import metadata  # TensorFlow: `stack --help` loads none

    cfg, places, data = run.cfg, run.places, run.data
    read = metadata.found(cfg, places, data)
    if read is None:
        return [], [], [], []
    spec = metadata.fitted(read.table, read.columns)
    fix = f"the stack joins {', '.join(read.columns)} to each image: give every image's row"
    train = metadata.encoded(spec, metadata.of_ids_rows(read.table, train_ids, read.where, fix))
    (test,) = metadata.for_test(cfg, places, data, [spec], test_ids)
    return [train], [test.values], metadata.feature_names(spec), metadata.columns_of(spec)


def stacked(run: Run, runs: list[blend.FinishedRun]) -> dict:
    """The stack's features, nested CV and test probabilities."""
    cfg = run.cfg
    tables, truth, folds = blend.out_of_fold_rows(cfg, runs)
    score, every = blend.scorer(cfg, truth), np.ones(len(folds), bool)
    made = blend.described(cfg, runs, [score(every, table) for table in tables])
    test_ids = runs[0].test[runs[0].test.columns[0]].tolist()
    train_rows, test_rows, joined, columns = metadata_of(run, runs[0].oof["id"].tolist(), test_ids)
    features = np.hstack([*tables, *train_rows])
    test_features = np.hstack([*(one.test.iloc[:, 1:].to_numpy(float) for one in runs), *test_rows])
    names = [f"{one['name']} {column}" for one in made["runs"] for column in runs[0].columns]
    if len(np.unique(truth)) < 2:
        raise UserError("stack: the training images hold one class; nothing to stack")
    nested = np.zeros((len(folds), cfg.num_classes))
    for fold in np.unique(folds):
        held = folds == fold
        nested[held] = predicted(cfg, features, truth, ~held, features[held])
    return {
        **made, "metadata_columns": columns, "features": names + joined,
        "trees": {**TREES, "min_samples_leaf": max(5, len(folds) // LEAF_SHARE)},
        "stack_cv": score(every, nested),
        "stack_cv_in_sample": score(every, predicted(cfg, features, truth, every, features)),
        "best_run": scoring.best([run["cv"] for run in made["runs"]], cfg.metric),
        **blend.spread(cfg, score, folds, nested, truth, nested),
        "test_ids": test_ids, "test": predicted(cfg, features, truth, every, test_features),
    }  # fmt: skip


def report(stack: dict) -> None:
    metric, runs = stack["metric"], stack["runs"]
    print(f"{metric} out of fold ({stack['images']} images, {stack['folds']} folds):")
    for run in runs:
        print(f"  {run['name']:<24} {run['cv']:.4f}")
    columns = ", ".join(stack["metadata_columns"])
    with_columns = f" and {columns}" if columns else ""
    print(
        f"  {'stack':<24} {stack['stack_cv']:.4f}  (trees on the runs' probabilities{with_columns}"
        f": each fold scored by trees fitted on the other folds; {stack['stack_cv_in_sample']:.4f} "
        "fitted on every image, which flatters it)"
    )
    best = runs[stack["best_run"]]
    gain, spread = scoring.gain(stack["stack_cv"], best["cv"], metric), stack["fold_spread"]
    verdict = f"within the folds' spread ({spread:.4f}): it may be noise"
    if abs(gain) > spread:
        verdict = f"more than the folds' spread ({spread:.4f})"
    print(
        f"the stack against its best run ({best['name']}, {best['cv']:.4f}): {gain:+.4f}, {verdict}"
    )


def stack_runs(run: Run | Config, folders: list[str]) -> dict:
    run = started(run, on_accelerator=False)  # its data: the training table's metadata
    run, runs, output = blend.checked_runs(run, folders, "stack", STACK_FILES, fewest=1)
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
    """The stack's submission.csv in the inference notebook: each run predicts the test images,
    then the trees are fitted again, not loaded (a pickle is tied to the scikit-learn that wrote
    it). The fit is deterministic: a CV other than stack.json's is said."""
    tables = blend.predicted_runs(run, stack["runs"])
    runs = []
    for stacked_run, table in zip(stack["runs"], tables, strict=True):
        cfg = dataclasses.replace(run.cfg, trained_dir=stacked_run["trained_dir"])
        folder = paths.find(cfg, run.sources).trained
        runs.append(dataclasses.replace(blend.read_run(folder, "stack"), test=table))
    columns = ",".join(stack["metadata_columns"])
    run = blend.trained_for(runs[0], run)
    run = dataclasses.replace(run, cfg=dataclasses.replace(run.cfg, metadata_columns=columns))
    made = stacked(run, runs)
    with_columns = f" and {columns}" if columns else ""
    print(
        f"trees fitted on {made['images']} images' out-of-fold probabilities{with_columns}: "
        f"{run.cfg.metric} {made['stack_cv']:.4f} out of fold (stack.json: {stack['stack_cv']:.4f})"
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
