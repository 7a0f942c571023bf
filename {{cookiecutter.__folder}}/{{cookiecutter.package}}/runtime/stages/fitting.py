"""What train.py's loop calls around `fit`, one call each: the run's lock, the checks before
the first step and what they found (said as train prints it), the validation batches and each
epoch's validation, a bad image named where fit stops at it, keeping the weights or their
average, the fold's out-of-fold predictions, and the history and curves it leaves."""

from __future__ import annotations

import contextlib
import dataclasses

import keras
import numpy as np

from .. import config, scoring
from ..config import Config, class_names, given_values, targets, validating_fold
from ..data import images, metadata, pipeline
from ..errors import named
from ..learning import averaging, cuts, recipe, regression
from ..learning.plan import Plan
from ..learning.predictions import predict_probabilities
from ..outputs import fitted, plots
from ..platform.files import FITTED, write_json
from ..platform.run_lock import one_run_at_a_time
from . import out_of_fold, preflight, training_checks
from .run import Run


def one_train_at_a_time(run: Run):
    """The run's lock on its output folder (run_lock.py); only process 0 writes, and holds it."""
    if not run.accelerator.writes_files:
        return contextlib.nullcontext()
    return one_run_at_a_time(run.places.output, named("output_dir"))


@dataclasses.dataclass
class Ready:
    """A fold's run, checked before its first step: what the checks found, for the loop."""

    checked: preflight.Preflight
    plan: Plan
    train_files: list[str]
    skipped: frozenset[str]  # bad training records left out (--bad-records skip)
    corrections: object  # --drop-ids and --relabel (corrections.Corrections), or None
    pseudo: object  # test images trained on with soft labels (pseudo_labels.PseudoLabels)
    backbone: object  # its weights loaded once by the checks (backbones.Backbone)
    table: object  # the metadata beside each image (metadata.Features), or None
    metadata_width: tuple  # what build_model takes beside the image: the table's width
    class_shares: list[float] | None  # each class's share, for Config.class_balance
    # For a metric of values, {"standardized": each target's mean and spread}; else empty.
    values: dict


def ready(run: Run) -> Ready:
    """Every check `train` needs (preflight.py: fails in seconds, not after an epoch), and what
    they found said: the values given, the plan, where it resumes."""
    cfg, data, writes = run.cfg, run.data, run.accelerator.writes_files
    print(given_values(cfg, run.sources))
    if recipe_line(cfg):
        print(recipe_line(cfg))
    checked = preflight.ready(run, "train", training_checks.CHECKS)
    if data.pooled:  # records pooled into folds: how
        print(data.train.describe())
    if data.trains_from == "images" and writes:
        images.save_folds(cfg, run.places)  # a resumed run, OOF and predict read the same folds
    plan, train = checked.plan.value, checked.train.value
    print(f"global batch: {plan.global_batch}, training records: {train.records}")
    for line in (checked.corrections.line, checked.pseudo.line):  # what trains beside
        if line:
            print(line)
    table = metadata_table(run, checked)
    print(plan.describe())
    print(checked.resume.line)  # where it starts, and what changed since the checkpoint
    if checked.skip.line:
        print(checked.skip.line)
    return Ready(
        checked, plan, train.files, skipped=checked.skip.value,
        corrections=checked.corrections.value, pseudo=checked.pseudo.value,
        backbone=checked.weights.value, table=table,
        metadata_width=(table.width,) if table else (), class_shares=balanced(cfg, data.manifest),
        values=standardization(run, train),
    )  # fmt: skip


def recipe_line(cfg: Config) -> str:
    """What the recipe's auto values chose for this run, and why, as train prints it."""
    lines, area = [], config.crop_area(cfg)
    if not cfg.crop_area and area < 1.0:
        lines.append(f"crop_area auto: {area} (random crops at {cfg.image_size} px)")
    elif not cfg.crop_area:
        lines.append(
            f"crop_area auto: 1.0, no random crops at {cfg.image_size} px (below "
            f"{config.CROP_FROM_SIZE} px they cost accuracy, measured; --crop-area 0.75 crops)"
        )
    if cfg.flip == config.AUTO and config.flips(cfg):
        lines.append(
            f"flip auto: on at {cfg.image_size} px (photos: the recipes it follows all flip "
            "them, docs/recipe.md; --no-flip turns it off)"
        )
    elif cfg.flip == config.AUTO:
        lines.append(
            f"flip auto: off at {cfg.image_size} px (below {config.FLIP_FROM_SIZE} px, measured "
            "in docs/recipe.md; --flip flips)"
        )
    return "\n".join(lines)


def metadata_table(run: Run, checked: preflight.Preflight):
    """The table joined to each image (metadata.py), its encoding saved with the run;
    None for images alone, and an earlier run's encoding removed."""
    output, writes, data = run.places.output, run.accelerator.writes_files, run.data
    if data.uses_metadata:
        table = metadata.for_training(run.cfg, run.places, data)
        if table and writes:
            write_json(output / FITTED["metadata"], table.spec)
        if table and checked.pseudo.value:  # the test images trained on join their own rows
            ids = checked.pseudo.value.ids
            table = metadata.with_test_rows(run.cfg, run.places, data, table, ids)
        if table:
            return table
    if writes:
        fitted.forget(output, FITTED["metadata"])
    return None


def standardization(run: Run, train) -> dict:
    """A metric of values: each target's mean and spread on the training images, saved with
    the run (regression.py); for classes and shares none, and an earlier run's removed."""
    output, writes = run.places.output, run.accelerator.writes_files
    if targets(run.cfg) == "values":
        standardized = regression.fitted(run.cfg, train.labels)
        if writes:
            fitted.save(output, fitted.STANDARDIZED, standardized)
        return {"standardized": standardized}
    if writes:
        fitted.forget(output, fitted.STANDARDIZED)
    return {}


def balanced(cfg: Config, manifest: dict | None) -> list[float] | None:
    """With Config.class_balance: each class's share of the training images, its weight said."""
    if not cfg.class_balance:
        return None
    shares = class_shares(cfg, manifest)
    if shares is None:
        print(f"{named('class_balance')}: the data does not count its classes; off")
        return None
    weights = recipe.class_weights(cfg, shares)
    names = class_names(cfg) or [str(number) for number in range(cfg.num_classes)]
    listed = ", ".join(f"{name} {weight:.2f}" for name, weight in zip(names, weights, strict=True))
    print(f"class balance {cfg.class_balance}: each class's loss weighs {listed}")
    return shares


def class_shares(cfg: Config, manifest: dict | None) -> list[float] | None:
    """Each class's share of the training folds as the data counted them; None where it did not."""
    per_fold = ((manifest or {}).get("train") or {}).get("per_fold")
    if not per_fold:
        return None
    held_out = str(validating_fold(cfg))
    counts = np.zeros(cfg.num_classes)
    for fold, in_fold in per_fold.items():
        if len(per_fold) > 1 and fold == held_out:
            continue
        for number, count in in_fold["classes"].items():
            if int(number) < cfg.num_classes:
                counts[int(number)] += count
    return (counts / counts.sum()).tolist() if counts.sum() else None


def validation_batches(run: Run, ready: Ready, with_ids: bool = False):
    """The fold that validates, every record once (pipeline.for_inference); None without."""
    valid = ready.checked.valid.value
    if valid and run.accelerator.processes > 1:
        print("validation: skipped with several processes; score a `predict` run instead")
        return None
    if not valid:
        return None
    return pipeline.for_inference(
        run.data, valid.files, run.cfg, ready.plan.global_batch, True,
        run.accelerator.image_dtype, with_ids=with_ids, metadata=ready.table,
    )  # fmt: skip


def validated(cfg: Config, valid) -> list[keras.callbacks.Callback]:
    """With validation records: each epoch's raw weights and their average scored with the
    competition's metric (averaging.py); labels read once, the last batch's blank rows dropped."""
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
        fitted = cuts.cuts_to_score(cfg, labels, probabilities)
        scores = {
            "metric": cuts.scored(cfg, labels, probabilities, fitted),
            "loss": float(keras.ops.mean(net.loss(labels, probabilities))),
        }
        if cfg.multi_label:
            scores["accuracy"] = float(np.mean((probabilities >= 0.5) == (labels > 0)))
        elif targets(cfg) != "values":  # of the most probable class (shares: the most voted)
            classes = labels.argmax(-1) if labels.ndim > 1 else labels
            scores["accuracy"] = float(np.mean(probabilities.argmax(-1) == classes))
        return scores

    return [averaging.ValidatedEachEpoch(score, cfg.metric)]


def skipping(skipped: frozenset[str]) -> list[keras.callbacks.Callback]:
    """With --bad-records skip: say at each epoch how many bad records every pass leaves out."""
    if not skipped:
        return []
    line = f"bad records skipped: {len(skipped)} in every pass (--bad-records skip)"
    return [keras.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: print(line))]


def bad_images_named(ready: Ready, stopped: str):
    """An image that does not decode stops `fit`: the shards (and test ids) at fault named."""
    return preflight.bad_images_named(
        ready.checked,
        f"{stopped} stopped at a bad record; the checkpoint of the last finished epoch is kept",
        "write those records again, leave their shards out, or skip them with --bad-records skip",
    )


def keep_the_average(run: Run, net: keras.Model, history: dict) -> dict | None:
    """Keep the weights' average where there is one, by the rule fixed before the run, not by
    the validation score it then reports (averaging.py); say so, with both scores."""
    choice = averaging.chosen(history, run.cfg.metric)
    averaging.keep(net)
    print(averaging.said(choice, averaging.averages_weights(net)))
    if run.accelerator.writes_files:  # an earlier run's cuts: this run fits its own, or none
        fitted.forget(run.places.output, fitted.GRADE_CUTS, fitted.THRESHOLDS)
    return choice


def score_validation(run: Run, net, ready: Ready) -> float:
    """The metric on the validation records; their predictions (with ids where the records
    carry them) go to valid.csv, and the cuts or thresholds fitted on them beside the weights."""
    cfg, output, writes = run.cfg, run.places.output, run.accelerator.writes_files
    ids = run.data.train.carries_ids(ready.checked.valid.value.files)
    batches = validation_batches(run, ready, with_ids=ids)
    probabilities, (labels, *id_column) = predict_probabilities(net, batches)
    keys = [key.decode() for key in id_column[0]] if ids else [""] * len(labels)
    probabilities, labels, keys = out_of_fold.gathered(run, probabilities, labels, keys)
    chosen = cuts.cuts_for(cfg, labels, probabilities)
    result = cuts.scored(cfg, labels, probabilities, chosen)
    print(f"valid {scoring.metric_named(cfg.metric, cfg.multi_label)}: {result:.4f}")
    if writes:
        out_of_fold.write_predictions(cfg, output, probabilities, labels, keys, chosen)
        if cfg.multi_label and chosen is not None:
            fitted.save(output, fitted.THRESHOLDS, chosen)
            print(f"thresholds per class (best validation F1 each): {chosen}")
        elif scoring.METRICS[cfg.metric].graded and chosen is not None:
            fitted.save(output, fitted.GRADE_CUTS, chosen)
            print(f"cuts between grades (best validation kappa): {chosen}")
        elif scoring.METRICS[cfg.metric].graded:
            print("grades: the most probable; cuts of the expected grade scored no better")
    return result


def save_history(run: Run, history: dict) -> None:
    """history.json and its curves, beside the trained weights."""
    if run.accelerator.writes_files:
        output = run.places.output
        write_json(output / "history.json", history)
        plots.training_curves(history, run.cfg.metric, output / "curves.png")
        print(f"weights: {output / 'model.weights.h5'}")
