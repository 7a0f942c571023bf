"""`audit`: the training labels most likely wrong, from a `--fold all` run's out-of-fold
predictions (or a blend's), most suspicious first.

Confident learning (Northcutt et al., 2021, as cleanlab computes it): each class's threshold is the
average probability the models give it on the images labeled with it, and every image is ranked by
its given label's probability as a share of that threshold, lowest first (on Fashion-MNIST with 5%
of its labels changed, 87% and 85% of them came first; suspects first: 71%, 72%; docs/commands.md).
An image is a suspect where another class clears its own threshold and the given label's class is
not the likeliest of those that do (the confident joint's off-diagonal): their count estimates how
many labels are wrong. The out-of-fold probabilities come from models that never trained on the
image, so an image cannot vouch for its own label.

Writes label_audit.csv (every training image: id, fold, the given label and the models', both
probabilities, the threshold, whether it is a suspect), likely_wrong.csv (its first rows, as many as
it counts suspects) and label_audit.png into the run's folder. The rows a competitor keeps become
`train --drop-ids FILE` or `--relabel FILE`; the records stay as they are."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd

from ..config import Config, Sources, class_names, targets
from ..errors import UserError, first_line
from ..learning.blending import weighted
from ..outputs import blend_record
from ..outputs.run_record import read_record, run_records
from ..platform.files import BLEND, place, written_whole
from .out_of_fold import read_predictions
from .run import Run, start, started

# The data the picture's images are read from, as train was given it (its flags, its preset).
CONFIG_FIELDS = ("data_dir", "train_files", "valid_files", "train_csv", "train_images",
                 "group_column", "image_key", "label_key", "id_key", "id_column",
                 "label_column")  # fmt: skip
FROM_RUN = ("image_size", "num_classes", "class_names", "multi_label", "metric")  # as trained
AUDIT = "label_audit.csv"
LIKELY_WRONG = "likely_wrong.csv"  # its first rows, as many as it counts suspects
PICTURE = "label_audit.png"
PICTURED = 16  # suspects in the picture
LISTED = 5  # suspects printed


def out_of_fold(folder: Path) -> tuple[pd.DataFrame, dict]:
    """A run's oof.csv (a blend's: its runs', weighted) and the model.json of (its first) run."""
    if (folder / BLEND).is_file():
        runs = blend_record.read(folder / BLEND)["runs"]
        read = [out_of_fold(place(run["folder"])) for run in runs]
        table, record = read[0]
        # Each run's rows in the first run's order: blend checked they hold the same ids.
        aligned = [table, *(oof.set_index("id").loc[table["id"]] for oof, _ in read[1:])]
        weights = [run["weight"] for run in runs]
        return weighted(aligned, weights, columns(table, record)), record
    records, path = run_records(folder), folder / "oof.csv"
    if not folder.is_dir() or not records or not path.is_file():
        raise UserError(
            f"audit: {folder} holds no oof.csv: the audit reads the out-of-fold predictions of "
            f'a `--fold all` run (in a notebook: fold="all") or of a blend; give its folder'
        )
    try:
        table = read_predictions(path)
    except ValueError as error:
        raise UserError(f"audit: {path}: {first_line(error)}; train the run again") from None
    return table, read_record(records[0])


def columns(table: pd.DataFrame, record: dict) -> list[str]:
    """oof.csv's probability columns: its last, one a class (valid.csv's layout)."""
    return table.columns[-int(record.get("num_classes", 0)) :].tolist()


def audited(table: pd.DataFrame, record: dict) -> pd.DataFrame:
    """Every image's given label against its out-of-fold probabilities, most suspicious first."""
    num_classes = int(record["num_classes"])
    probabilities = table[columns(table, record)].to_numpy(float)
    given_labels = table["label"].astype(int).to_numpy()
    rows = np.arange(len(table))
    thresholds = np.array([  # the models' average confidence where it is the label
        probabilities[given_labels == n, n].mean() if np.any(given_labels == n) else 1.0
        for n in range(num_classes)
    ])  # fmt: skip
    clears = probabilities >= thresholds
    suggested = np.where(clears, probabilities, -1.0).argmax(-1)
    suspect = clears.any(-1) & (suggested != given_labels)
    suggested = np.where(clears.any(-1), suggested, given_labels)
    p_given = probabilities[rows, given_labels]
    below = p_given / np.maximum(thresholds[given_labels], 1e-12)
    audit = pd.DataFrame({
        "id": table["id"], "fold": table["fold"], "given_label": given_labels,
        "suggested_label": suggested, "p_given": p_given,
        "p_suggested": probabilities[rows, suggested], "given_threshold": thresholds[given_labels],
        "suspect": suspect, "below": below,
    })  # fmt: skip
    return audit.iloc[np.argsort(below, kind="stable")].drop(columns="below").reset_index(drop=True)


def images_of(cfg: Config, sources: Sources, ids: list[str]) -> dict[str, np.ndarray]:
    """The training images of these ids, read from the audited run's data as train reads it."""
    import tensorflow as tf

    from ..data import steps  # TensorFlow: `audit --help` loads none

    run = start(cfg, sources, on_accelerator=False)  # the audited run's settings, its data
    run = run.fold(0) if run.data.folds > 1 else run  # with fold 0: every image
    reading, images = run.data.train, {}
    keys = tf.lookup.KeyValueTensorInitializer(ids, [True] * len(ids))
    wanted = tf.lookup.StaticHashTable(keys, False)
    for field in ("train_files", "valid_files"):
        if not getattr(run.cfg, field) or not (split := reading.split(field, True)).files:
            continue
        examples, _ = reading.in_order(split.files, True, with_ids=True)
        chosen = examples.filter(lambda ex: wanted.lookup(ex[cfg.id_key])).map(
            lambda ex: (ex[cfg.id_key], steps.image(reading.encoded(ex[cfg.image_key]), cfg))
        )
        images.update((key.decode(), image) for key, image in chosen.as_numpy_iterator())
    return images


def picture(
    cfg: Config, sources: Sources, audit: pd.DataFrame, path: Path, names: list[str] | None
) -> str:
    """label_audit.png of the first suspects; what was drawn, or why nothing was."""
    from ..outputs import plots  # matplotlib: `audit --help` loads none

    shown = audit[audit["suspect"]].head(PICTURED)
    if shown.empty:
        return "no suspects to picture"
    try:
        images = images_of(cfg, sources, shown["id"].tolist())
    except UserError as error:  # a run fetched without its data: the table still stands
        return f"{path.name} not drawn: the training images cannot be read ({error})"
    shown = shown[shown["id"].isin(images)]
    if shown.empty:
        return f"{path.name} not drawn: the data read holds none of the suspects' ids"
    # Each titled with its given label and the one the out-of-fold models give, with their
    # probabilities: what to relabel, or leave out, at a glance.
    figure, cells = plots.image_grid(np.stack([images[key] for key in shown["id"]]), 2.6)
    for axes, row in zip(cells, shown.itertuples(), strict=True):
        labels = (row.given_label, row.suggested_label)
        given, guess = (plots.class_name(int(one), names) for one in labels)
        title = f"given {given} {row.p_given:.2f}\nmodels {guess} {row.p_suggested:.2f}"
        axes.set_title(title, fontsize=9, color="red")
    figure.suptitle("Training labels most likely wrong (out of fold), most suspicious first")
    plots.save(figure, path)
    return f"picture: {path}"


def audit_run(run: Run | Config, folder: str) -> pd.DataFrame:
    """Audit a run's labels; write label_audit.csv and label_audit.png into its folder. `run`:
    the command's, whose settings the audited run's image size and classes complete."""
    run = started(run, on_accelerator=False, read=False)
    run_folder = place(folder)
    table, record = out_of_fold(run_folder)
    cfg = dataclasses.replace(run.cfg, **{key: record[key] for key in FROM_RUN if key in record})
    if cfg.multi_label or targets(cfg) != "classes":
        what = "several labels per image" if cfg.multi_label else targets(cfg)
        raise UserError(
            f"audit: {run_folder} was trained with {what}; the audit weighs one given class "
            "against the others, for runs of one label per image"
        )
    names = class_names(cfg)
    audit = audited(table, record)
    suspects = int(audit["suspect"].sum())
    print(
        f"{suspects} of {len(audit)} training images ({suspects / len(audit):.1%}) are "
        "suspects (another class clears its threshold, and their label's does not lead): "
        "an estimate of how many labels are wrong"
    )
    written = audit.copy()  # the labels as the competition spells them: its class names
    for column in ("given_label", "suggested_label") if names else ():
        written[column] = [names[number] for number in audit[column]]
    for row in written.head(LISTED).itertuples():
        print(
            f"  {row.id} (fold {row.fold}): given {row.given_label} {row.p_given:.2f} (threshold "
            f"{row.given_threshold:.2f}), models {row.suggested_label} {row.p_suggested:.2f}"
        )
    path = run_folder / AUDIT
    with written_whole(path) as temporary:
        written.to_csv(temporary, index=False, float_format="%.4f")
    print(f"wrote {path}: every training image, the most suspicious first")
    print(picture(cfg, run.sources, audit, run_folder / PICTURE, names))
    # Written even with no suspects (its header alone): a notebook that passes it on finds it,
    # and an earlier audit's suspects never stay beside this one's table.
    first = run_folder / LIKELY_WRONG
    with written_whole(first) as temporary:
        written.head(suspects).to_csv(temporary, index=False, float_format="%.4f")
    if suspects:
        print(
            f"wrote {first}: its first {suspects} rows; to train without them, --drop-ids "
            f"{first} (or with the models' labels, --relabel {first})"
        )
    else:
        print(f"wrote {first}: no rows, as no image is a suspect")
    return written


def arguments(parser) -> None:
    run = "the output folder of a --fold all run, or of a blend"
    parser.add_argument("run", metavar="RUN_DIR", help=run)


def command(args, run: Run) -> int:
    audit_run(run, args.run)
    return 0
