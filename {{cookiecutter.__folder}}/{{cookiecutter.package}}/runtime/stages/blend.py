"""`blend`: several trained runs as one submission, weighted by their out-of-fold predictions.

A run to blend is a `--fold all` run's folder after `predict`: oof.csv holds each training
image's probabilities from the fold model that did not train on it, test_probabilities.csv the
test set's. Runs validated otherwise (other images, other folds), for other classes or another
metric, or predicted for other test ids are refused in one line. The weights are fitted on the
out-of-fold rows (learning/blending.py), never on a leaderboard, and the blend's CV is estimated
on rows its weights never saw.

Writes blend.json (the runs, weights and CVs: what `kernel --inference --blend` reads),
submission.csv and test_probabilities.csv; `predict_blend` repeats it in the inference notebook."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from .. import scoring
from ..config import Config, class_names, filled, names_in
from ..errors import UserError, first_line
from ..learning import blending, cuts
from ..outputs.run_record import read_record, run_records
from ..platform.files import BLEND, FETCHED_FROM, output_folder, place, refuse_foreign, write_json
from . import out_of_fold
from .audit import AUDIT, LIKELY_WRONG, PICTURE
from .pseudo import PSEUDO
from .run import Run, start, started

CONFIG_FIELDS = ("competition", "data_dir", "sample_submission", "id_column", "label_column",
                 "submission", "output_dir")  # fmt: skip
# What a run was trained for, as its model.json says: blended runs must agree on these.
CLASSES = ("num_classes", "class_names", "multi_label")
OPTIONS = ("pauc_min_tpr", "map_k", "target_weights")  # the metric's, as the runs trained
# A code competition's rerun may take this long on a CPU or GPU (most image competitions).
RERUN_HOURS = 9
VIEWS_WRITTEN = {True: "flip", False: "none"}  # Config.tta as runs before its views wrote it


@dataclasses.dataclass
class FinishedRun:
    """One run's files, read: what it was trained for, its out-of-fold and test tables."""

    folder: Path
    record: dict  # its model.json
    oof: pd.DataFrame
    test: pd.DataFrame  # test_probabilities.csv: the id column, then a column per class

    @property
    def columns(self) -> list[str]:
        return self.test.columns[1:].tolist()

    @property
    def classes(self) -> list[str]:
        """Its classes in order: as its model.json names them, else its columns (p0, p1, ...)."""
        named = self.record.get("class_names")
        return names_in(named) if named else self.columns


def read_run(folder: Path, command: str) -> FinishedRun:
    """A run's files, each found or the one line that says what makes it."""
    if not folder.is_dir():
        raise UserError(
            f"{command}: {folder} is not a folder; give the output folders of trained runs"
        )
    records = run_records(folder)
    oof, test = folder / "oof.csv", folder / "test_probabilities.csv"
    if not records or not oof.is_file():
        raise UserError(
            f"{command}: {folder} has no oof.csv: a {command} is fitted on the out-of-fold predictions "
            f'of a `--fold all` run; train it with --fold all (in a notebook: fold="all")'
        )
    if not test.is_file():
        raise UserError(
            f"{command}: {folder} has no test_probabilities.csv; run `predict --output-dir "
            f"{folder}` (it writes them beside submission.csv)"
        )
    try:
        tables = out_of_fold.read_predictions(oof), out_of_fold.test_probabilities(test)
    except ValueError as error:
        raise UserError(
            f"{command}: {folder}: {first_line(error)}; train and predict it again"
        ) from None
    return FinishedRun(folder, read_record(records[0]), *tables)


def note(path: Path, key: str, default):
    """One value of a small JSON file the project wrote beside a run (`default` without it)."""
    if not path.is_file():
        return default
    try:
        return json.loads(path.read_text()).get(key, default)
    except (ValueError, AttributeError) as error:
        raise UserError(
            f"blend: {path} is not the JSON the project wrote ({first_line(error)}); "
            "delete it and write it again (predict, or `kaggle output`)"
        ) from None


def check_alike(runs: list[FinishedRun], output: Path, command: str, fewest: int) -> None:
    """Runs that cannot be blended (or stacked), refused in one line naming the difference."""
    if len(runs) < fewest:
        raise UserError(f"{command} needs two runs or more: give each run's output folder")
    first = runs[0]
    for run in runs:
        if run.folder.resolve() == output.resolve():
            raise UserError(
                f"{command} --output-dir {output} is the folder of the run {run.folder}: the "
                f"{command}'s submission.csv would replace the run's; give another folder"
            )
    for run in runs[1:]:
        pair = f"{first.folder} and {run.folder}"
        if run.folder.resolve() == first.folder.resolve():
            raise UserError(f"{command}: {run.folder} is given twice; give each run once")
        metrics = first.record.get("metric"), run.record.get("metric")
        if metrics[0] != metrics[1]:
            raise UserError(
                f"{command}: {pair} were trained for different metrics ({metrics[0]}, "
                f"{metrics[1]}: their model.json); {command} runs of the same competition's metric"
            )
        classes = [first.classes, run.classes]
        alike = all(first.record.get(name) == run.record.get(name) for name in CLASSES)
        if classes[0] != classes[1] or not alike:
            reordered = sorted(classes[0]) == sorted(classes[1])
            raise UserError(
                f"{command}: {pair} have "
                + ("the same classes in another order" if reordered else "different classes")
                + f" ({shown(classes[0])} and {shown(classes[1])}); {command} runs trained "
                "with the same class_names, in the same order"
            )
        ours, theirs = set(first.oof["id"]), set(run.oof["id"])
        if ours != theirs:
            raise UserError(
                f"{command}: {pair} were validated on different images ({len(ours - theirs)} ids "
                f"of {first.folder}'s oof.csv are not in {run.folder}'s, e.g. "
                f"{sorted(ours ^ theirs)[:2]}); {command} runs trained on the same data"
            )
        folds = first.oof.set_index("id")["fold"].astype(str)
        other = run.oof.set_index("id")["fold"].astype(str).reindex(folds.index)
        moved = folds.index[folds != other]
        if len(moved):
            key = moved[0]
            seeds = [one.record.get("fold_seed") for one in (first, run)]
            why = "their folds differ"
            if seeds[0] != seeds[1]:
                why = f"their --fold-seed differs ({seeds[0]}, {seeds[1]}: their model.json)"
            fitted = "weights" if command == "blend" else "trees"
            raise UserError(
                f"{command}: {pair} hold {len(moved)} images in different folds (e.g. {key!r}: "
                f"fold {folds[key]}, fold {other[key]}): {why}, so {fitted} fitted on one's "
                "out-of-fold rows would see images the other trained on; train them with the same "
                "--folds and --fold-seed (--seed leaves the folds alone) or from the same records"
            )
        ids = [table[table.columns[0]].tolist() for table in (first.test, run.test)]
        if ids[0] != ids[1]:
            pairs = zip(*ids, strict=False)
            rows = next((i for i, (a, b) in enumerate(pairs) if a != b), min(map(len, ids)))
            raise UserError(
                f"{command}: {pair} predicted different test ids, or in another order (first "
                f"difference at row {rows} of test_probabilities.csv); predict each with the "
                "same test set and sample submission"
            )


def shown(columns: list[str]) -> str:
    return ", ".join(columns[:4]) + (", ..." if len(columns) > 4 else "")


def trained_for(finished: FinishedRun, run: Run) -> Run:
    """The command's run (its data fields: the sample) with the runs' metric and classes, and
    their id column where none is given (the sample's, wherever it stands)."""
    record = finished.record
    chosen = {name: record[name] for name in (*CLASSES, "metric", *OPTIONS) if name in record}
    ids = {"id_column": record["id_column"]} if "id_column" in record else {}
    cfg, sources = filled(run.cfg, run.sources, ids, f"the run {finished.folder}")
    return dataclasses.replace(run, cfg=dataclasses.replace(cfg, **chosen), sources=sources)


def checked_runs(
    run: Run, folders: list[str], command: str, ours: tuple[str, ...], fewest: int = 2
) -> tuple[Run, list[FinishedRun], Path]:
    """The runs of `folders` read and checked alike, the command's run `trained_for` them, and its
    output folder, refused where it holds more than `ours` (each perhaps still under .tmp-)."""
    output = output_folder(run.places.output, f"{command} --output-dir", buckets=True)
    runs = [read_run(place(folder), command) for folder in folders]
    check_alike(runs, output, command, fewest)
    held = sorted(path.name for path in output.iterdir()) if output.is_dir() else []
    foreign = [name for name in held if name.removeprefix(".tmp-") not in ours]
    refuse_foreign(f"{command} --output-dir", output, command, foreign)
    return trained_for(runs[0], run), runs, output


def out_of_fold_rows(cfg: Config, runs: list[FinishedRun]):
    """Each run's out-of-fold probabilities in the first run's row order (check_alike found
    the same ids in each), the rows' true labels and their folds."""
    first = runs[0].oof
    tables = [one.oof.set_index("id").loc[first["id"], one.columns].to_numpy(float) for one in runs]
    return tables, out_of_fold.truth(cfg, first), first["fold"].astype(str).to_numpy()


def scorer(cfg: Config, truth: np.ndarray):
    """The metric of probabilities on some of the rows. Multi-label: each class at the
    threshold that suits it best on those rows, for every run and blend alike."""

    def score(rows: np.ndarray, probabilities: np.ndarray) -> float:
        fitted = cuts.cuts_to_score(cfg, truth[rows], probabilities)
        return cuts.scored(cfg, truth[rows], probabilities, fitted)

    return score


# How the weights are chosen: fitted by hill climbing on the out-of-fold rows; equal, the
# plain average; or auto, whichever scores better on rows its weights never saw (the fitted
# weights' nested CV against the equal weights', which fit nothing). Fitted weights chase
# the noise of a few thousand rows as readily as a real difference between runs: on three
# seeds of one model, the plain average did better (docs/commands.md has the figures).
WEIGHTS = ("auto", "fitted", "equal")


def fitted(cfg: Config, runs: list[FinishedRun], weights_by: str = "auto") -> dict:
    """What blend.json holds: each run's CV, the equal weights', the blend's weights and CV (of
    fitted weights, nested: each fold's fitted on the other folds; equal weights fit nothing)."""
    tables, truth, folds = out_of_fold_rows(cfg, runs)
    score, every = scorer(cfg, truth), np.ones(len(folds), bool)

    def climbed(rows: np.ndarray, table: np.ndarray) -> float:
        """What the weights climb: the score, turned where lower is better (log loss)."""
        return scoring.gain(score(rows, table), 0.0, cfg.metric)

    cvs = [score(every, table) for table in tables]
    equal = [1 / len(runs)] * len(runs)
    equal_cv = score(every, blending.blended(tables, equal))
    weights, blend_cv, nested_cv, chosen = equal, equal_cv, None, "equal"
    if weights_by != "equal":
        nested_cv = score(every, blending.nested(tables, folds, climbed))
        if weights_by == "fitted" or scoring.gain(nested_cv, equal_cv, cfg.metric) > 0:
            weights, blend_cv = blending.hill_climbed(tables, climbed), nested_cv
            chosen = "fitted"
    probabilities = blending.blended(tables, weights)
    return {
        **described(cfg, runs, cvs, weight=weights),
        "equal_weights_cv": equal_cv, "fitted_weights_cv": nested_cv,  # None: none fitted
        "blend_cv": blend_cv, "blend_cv_in_sample": score(every, probabilities),
        # the folds' spread: the best run's score from fold to fold
        **spread(cfg, score, folds, tables[scoring.best(cvs, cfg.metric)], truth, probabilities),
        "weights_asked": weights_by, "weights_by": chosen,
    }  # fmt: skip


def described(cfg: Config, runs: list[FinishedRun], cvs: list[float], **more: list) -> dict:
    """What blend.json and stack.json begin with: the metric, classes, options, and each run (its
    folder's name, numbered where two share one; `more`: a blend's `weight`, a value a run)."""
    names, listed = [], []
    tta = [note(run.folder / "test_probabilities.json", "tta", "none") for run in runs]
    for number, run in enumerate(runs):
        name = run.folder.resolve().name
        names.append(name if name not in names else f"{name}-{len(names)}")
        listed.append({
            "name": names[-1], "folder": str(run.folder.resolve()),
            "notebook": note(run.folder / FETCHED_FROM, "id", ""),  # OWNER/SLUG, or ""
            "backbone": run.record.get("backbone"), "image_size": run.record.get("image_size"),
            "tta": VIEWS_WRITTEN.get(tta[number], tta[number]),  # the views it averaged
            "cv": cvs[number], **{key: more[key][number] for key in more},
        })  # fmt: skip
    return {
        "metric": cfg.metric, "classes": {name: getattr(cfg, name) for name in CLASSES},
        "options": {name: getattr(cfg, name) for name in OPTIONS}, "runs": listed,
    }  # fmt: skip


def spread(cfg: Config, score, folds: np.ndarray, rows: np.ndarray, truth, probabilities) -> dict:
    """The spread of `rows`' score from fold to fold, the rows counted, and the thresholds (or
    cuts) that suit `probabilities` best, as blend.json and stack.json hold them."""
    per_fold = [score(folds == fold, rows[folds == fold]) for fold in np.unique(folds)]
    return {"fold_spread": float(np.std(per_fold)), "folds": len(per_fold), "images": len(folds),
            "thresholds": cuts.cuts_to_score(cfg, truth, probabilities)}  # fmt: skip


def report(blend: dict) -> None:
    """Each run's CV and weight, the blend's, and whether it beats its best by the folds' spread."""
    metric, runs = blend["metric"], blend["runs"]
    width = max(len("equal weights"), *(len(run["name"]) for run in runs)) + 2
    print(f"{metric} out of fold ({blend['images']} images, {blend['folds']} folds):")
    print(f"  {'run':<{width}} {'cv':>7}  weight")
    for run in runs:
        print(f"  {run['name']:<{width}} {run['cv']:7.4f}  {run['weight']:.2f}")
    print(f"  {'equal weights':<{width}} {blend['equal_weights_cv']:7.4f}")
    if blend["weights_asked"] == "equal":
        how = "equal weights, as asked: nothing fitted"
    elif blend["weights_by"] == "equal":
        how = (
            f"equal weights: the fitted ones score {blend['fitted_weights_cv']:.4f} on rows they "
            "were not fitted on, no better; --weights fitted keeps them"
        )
    else:
        how = (
            "each fold's rows blended with weights fitted on the other folds'; "
            f"{blend['blend_cv_in_sample']:.4f} with the weights above, fitted on every row, "
            "which flatters it"
        )
    print(f"  {'blend':<{width}} {blend['blend_cv']:7.4f}  ({how})")
    best = runs[scoring.best([run["cv"] for run in runs], metric)]
    gain, spread = scoring.gain(blend["blend_cv"], best["cv"], metric), blend["fold_spread"]
    if gain <= spread:
        print(
            f"the blend beats its best run ({best['name']}, {best['cv']:.4f}) by {gain:+.4f}, "
            f"no more than the folds' spread ({spread:.4f}, the best run's {metric} from fold to "
            "fold): it may be noise; blend runs that differ more, or submit the best run alone"
        )
    else:
        print(
            f"the blend beats its best run by {gain:+.4f}, more than the folds' spread ({spread:.4f})"
        )


def write_submission(run: Run, blend: dict, tables: list[pd.DataFrame]) -> Path:
    """submission.csv (and test_probabilities.csv) of the runs' test probabilities, blended."""
    ids = tables[0][tables[0].columns[0]].tolist()
    arrays = [table.iloc[:, 1:].to_numpy(float) for table in tables]
    probabilities = blending.blended(arrays, [run["weight"] for run in blend["runs"]])
    return write_probabilities(run, blend, ids, probabilities, "blended")


def write_probabilities(run: Run, made: dict, ids: list[str], probabilities, how: str) -> Path:
    """submission.csv of the test ids' probabilities in the sample's shape, for the metric, classes
    and thresholds in `made` (blend.json's, or stack.json's); test_probabilities.csv beside it."""
    from ..outputs import submission  # TensorFlow: `blend --help` needs none

    cfg = dataclasses.replace(
        run.cfg, metric=made["metric"], **made["classes"], **made.get("options", {})
    )
    sample = submission.load_sample(cfg, run.sources, run.places)
    names = class_names(cfg)
    shape = submission.layout(cfg, run.sources, sample, cfg.num_classes, names, ids)
    answered, cuts = submission.written_from(cfg, shape, probabilities, made["thresholds"])
    rows = submission.arrange(ids, shape.values(answered, names, cuts), sample, shape)
    path = run.places.output / "submission.csv"
    submission.write(path, rows)
    kept = submission.probabilities_table(cfg, ids, probabilities, sample, shape)
    submission.write(run.places.output / "test_probabilities.csv", kept)
    print(f"wrote {len(rows)} rows to {path} ({shape.describe(cfg.multi_label)}), {how}")
    return path


# What blend writes in --output-dir (under .tmp-<name> until whole), then audit's and pseudo's.
BLEND_FILES = (BLEND, "submission.csv", "test_probabilities.csv",
               AUDIT, LIKELY_WRONG, PICTURE, PSEUDO)  # fmt: skip


def blend_runs(run: Run | Config, folders: list[str], weights_by: str = "auto") -> dict:
    """Read, check and fit the runs; write blend.json and the blended submission."""
    run = started(run, on_accelerator=False, read=False)
    run, runs, output = checked_runs(run, folders, "blend", BLEND_FILES)
    blend = fitted(run.cfg, runs, weights_by)
    report(blend)
    write_json(output / BLEND, blend)
    write_submission(run, blend, [finished.test for finished in runs])
    print(
        f"and {output / BLEND}: the runs and their weights (`kernel --inference --blend` reads it)"
    )
    return blend


def predict_blend(run: Run, blend: dict) -> Path:
    """The blend's submission.csv: each run predicted afresh, blended with its weights."""
    return write_submission(run, blend, predicted_runs(run, blend["runs"]))


def predicted_runs(run: Run, runs: list[dict]) -> list[pd.DataFrame]:
    """Each run's test probabilities, predicted afresh as it was trained (into its own folder of
    the output), in the sample's order. After each run, the minutes it took and what all will
    take at that pace: a blend that would outrun a rerun's limit says so early."""
    from .predict import predict  # TensorFlow: `blend` itself needs none

    tables, spent = [], 0.0
    for number, blended in enumerate(runs, 1):
        folder = str(run.places.output / "runs" / blended["name"])
        cfg = dataclasses.replace(
            run.cfg, trained_dir=blended["trained_dir"], tta=blended["tta"], output_dir=folder
        )
        sources = {**run.sources, "trained_dir": "blend", "tta": "blend"}
        print(f"--- run {number} of {len(runs)}: {blended['name']} ({blended['trained_dir']})")
        began = time.monotonic()
        written = predict(start(cfg, sources, run.accelerator, trained=True))  # submission.csv
        spent += time.monotonic() - began
        tables.append(out_of_fold.test_probabilities(written.with_name("test_probabilities.csv")))
        expected = spent / number * len(runs) / 60
        print(
            f"run {number} took {(time.monotonic() - began) / 60:.1f} minutes; at this pace "
            f"the {len(runs)} runs take about {expected:.1f} minutes"
        )
        if expected > RERUN_HOURS * 60:
            print(
                f"warning: that is over the {RERUN_HOURS} hours a code competition's rerun may "
                "take: fewer runs (`blend` or `stack` without one), or predict without --tta"
            )
    return tables


def arguments(parser) -> None:
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR", help="the output folder of a run")
    weights = (
        "fitted: by hill climbing on the runs' out-of-fold predictions; equal: the plain "
        "average; auto (the default): whichever scores better on rows its weights never saw"
    )
    parser.add_argument("--weights", choices=WEIGHTS, default="auto", help=weights)


def command(args, run: Run) -> int:
    blend_runs(run, args.runs, args.weights)
    return 0
