"""Score the trained model on the validation records: per-class scores and a confusion matrix
(a metric of values: each target's scores, and its values against the true ones); with every
fold (`--fold all`), each fold's model on its own validation records, then all of
them together, as train --fold all scores its out-of-fold predictions."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
from sklearn.metrics import classification_report

from .. import scoring
from ..config import Config, class_names, targets
from ..data import metadata, pipeline
from ..learning import cuts
from ..learning.predictions import predict_probabilities
from ..outputs import plots, trained_run
from ..scoring import METRICS
from . import folds, preflight
from .run import Run, started


@dataclasses.dataclass
class Validated:
    """One model's answers on its validation records."""

    labels: np.ndarray
    probabilities: np.ndarray
    predicted: np.ndarray  # the class of each record, or each class's yes or no (multi-label)
    images: np.ndarray  # the first few, as read, for the picture of predictions

    def score(self, cfg: Config) -> float:
        """The competition metric, of the probabilities or of the answers, as it scores."""
        return scoring.of_run(cfg, self.labels, self.probabilities, self.predicted)


def evaluate(run: Run | Config) -> list[Path]:
    """Score the trained model of the fold asked for, or of every fold (`report` says what is
    printed and drawn); returns the paths of its pictures. Given a config, it starts its run."""
    run = started(run)  # where it reads and writes, the accelerator and the data: found once
    if run.data.folds > 1 and run.cfg.fold == "all":
        return every_fold(run)
    if run.data.folds > 1:  # the model of the fold asked for, on its validation records
        run = run.fold(folds.chosen(run)[0])
    return report(run.cfg, validate(run), run.places.output / "confusion.png")


PICTURED = 16  # validation images in the picture of predictions


def every_fold(run: Run) -> list[Path]:
    """Each fold's model on its own validation records, its score said, then the report of
    all of them together (every training record once): the out-of-fold score."""
    answers = []
    for fold in folds.chosen(run):
        validated = validate(run.fold(fold))
        print(f"fold {fold} {run.cfg.metric}: {validated.score(run.cfg):.4f}")
        answers.append(validated)
    keys = ("labels", "probabilities", "predicted")
    pooled = [np.concatenate([getattr(one, key) for one in answers]) for key in keys]
    pooled = Validated(*pooled, answers[0].images)  # the first fold's, first in the rows too
    print(f"out-of-fold: the {len(answers)} fold models, each on its own validation records")
    return report(run.cfg, pooled, run.places.output / "confusion.png")


def validate(run: Run) -> Validated:
    """The trained model's answers on the validation records."""
    cfg, accelerator, data = run.cfg, run.accelerator, run.data
    checked = preflight.ready(run, "evaluate")
    table = None  # images alone; or the table beside each, as the trained run encoded it
    if data.uses_metadata:
        spec = trained_run.metadata_spec(run.places, data)
        table = metadata.for_validation(cfg, run.places, data, spec)
    files, batch = checked.valid.value.files, accelerator.global_batch(cfg.batch_size)
    image_dtype = accelerator.image_dtype
    batches = pipeline.for_inference(data, files, cfg, batch, True, image_dtype, metadata=table)
    with accelerator.scope():
        net = trained_run.load_trained(cfg, run.places, data, accelerator)
        probabilities, (labels,) = predict_probabilities(net, batches)
    first = next(iter(batches))[0]
    first = first["image"] if isinstance(first, dict) else first  # not its metadata
    images = np.asarray(first[: min(PICTURED, len(labels))])  # as predicted
    fitted = checked.trained.value.thresholds  # each class's (multi-label), or between grades
    return Validated(labels, probabilities, cuts.answered(cfg, probabilities, fitted), images)


def report(cfg: Config, validated: Validated, picture: Path) -> list[Path]:
    """Print the per-class report and the metric; draw the confusion matrix into `picture`, and
    the first images with the model's answers beside it (a metric of values: `values_report`)."""
    names = class_names(cfg) or [str(n) for n in range(cfg.num_classes)]
    if targets(cfg) == "values":
        print(f"valid {cfg.metric}: {validated.score(cfg):.4f}")
        values = picture.with_name("values.png")
        return [values_report(cfg, validated.labels, validated.probabilities, values)]
    labels = validated.labels  # shares: each image's most voted class
    labels = labels.argmax(-1) if labels.ndim > 1 and not cfg.multi_label else labels
    print(classification_report(
        labels, validated.predicted, labels=range(cfg.num_classes), target_names=names, digits=4,
        zero_division=0,
    ))  # fmt: skip
    print(f"valid {scoring.metric_named(cfg.metric, cfg.multi_label)}: {validated.score(cfg):.4f}")
    if cfg.multi_label:  # one matrix of classes against classes means nothing here
        return []
    shown = len(validated.images)
    return [
        plots.confusion(labels, validated.predicted, cfg.num_classes, picture, class_names(cfg)),
        plots.predictions(
            validated.images, labels[:shown], validated.predicted[:shown],
            picture.with_name("predictions.png"), class_names(cfg),
        ),
    ]  # fmt: skip


def command(args, run: Run) -> int:
    for picture in evaluate(run):
        print(f"picture: {picture}")
    return 0


def values_report(cfg: Config, truth: np.ndarray, predicted: np.ndarray, path: Path) -> Path:
    """Each target's score by every metric of values, printed; drawn into `path`, its predicted
    values against the true ones (right: on the diagonal) and its residuals against them."""
    from matplotlib.figure import Figure

    names = class_names(cfg) or [str(number) for number in range(cfg.num_classes)]
    figure = Figure(figsize=(9, 3.6 * len(names)), layout="constrained")
    for number, name in enumerate(names):
        true, guess = truth[:, number], predicted[:, number]
        scores = {metric: entry.of(true[:, None], guess[:, None])
                  for metric, entry in METRICS.items() if entry.targets == "values"}  # fmt: skip
        print(f"{name}: " + ", ".join(f"{metric} {value:.4f}" for metric, value in scores.items()))
        against, residuals = (figure.add_subplot(len(names), 2, 2 * number + n) for n in (1, 2))
        against.scatter(true, guess, s=8, alpha=0.6)
        ends = [min(true.min(), guess.min()), max(true.max(), guess.max())]
        against.plot(ends, ends, color="black", linewidth=1)
        title = f"{name}: {cfg.metric} {scores[cfg.metric]:.4f}"
        against.set(xlabel=f"true {name}", ylabel=f"predicted {name}", title=title)
        residuals.scatter(guess, true - guess, s=8, alpha=0.6)
        residuals.axhline(0, color="black", linewidth=1)
        residuals.set(xlabel=f"predicted {name}", ylabel="true - predicted", title="residuals")
    figure.suptitle(f"Validation, {len(truth)} images: predicted against true values")
    return plots.save(figure, path)
