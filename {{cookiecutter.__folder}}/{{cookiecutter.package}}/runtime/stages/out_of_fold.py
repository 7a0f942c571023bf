"""Out of fold: each fold's validation predictions (valid.csv, written by train), gathered into
oof.csv and scored together, every training image predicted by the fold model that never
trained on it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .. import scoring
from ..config import Config, class_names, names_in, targets
from ..data import tables
from ..errors import UserError, named
from ..learning import cuts
from ..platform.files import for_pandas, written_whole
from ..submission_shapes import probability_columns
from .run import Run


def write_predictions(
    cfg: Config, output: Path, probabilities: np.ndarray, labels, ids, thresholds=None
) -> pd.DataFrame:
    """One fold's validation predictions as valid.csv: id, fold, true and predicted classes
    (numbers, space-separated for multi-label; and names where the classes have them), then each
    class's probability; of values or shares, the true row's numbers, then the predicted ones."""
    names = class_names(cfg)
    predicted = cuts.answered(cfg, probabilities, thresholds)
    if targets(cfg) != "classes":  # the predictions are the columns after
        truth, guess = [" ".join(f"{value:.7g}" for value in row) for row in labels], ""
    elif predicted.ndim == 1:
        truth, guess = [str(n) for n in labels], [str(n) for n in predicted]
    else:  # multi-hot rows: the classes set, as numbers
        truth, guess = ([" ".join(map(str, np.flatnonzero(row))) for row in rows]
                        for rows in (labels, predicted))  # fmt: skip
    table = pd.DataFrame({"id": ids, "fold": cfg.fold, "label": truth, "predicted": guess})
    if names and targets(cfg) == "classes":
        for column in ("label", "predicted"):
            table[f"{column}_name"] = [" ".join(names[int(n)] for n in value.split())
                                       for value in table[column]]  # fmt: skip
    columns = probability_columns(names, cfg.num_classes)
    table = pd.concat([table, pd.DataFrame(probabilities, columns=columns)], axis=1)
    with written_whole(output / "valid.csv") as temporary:
        table.to_csv(temporary, index=False)
    return table


def answers_by_image(run: Run) -> dict[str, str] | None:
    """Each training image's answer by its id, where Config.answer_columns names columns of
    the training CSV that make it (several images, one answer: scored out of fold as the test
    set is answered); None where each image is its own, or where that CSV is not at hand."""
    cfg, data = run.cfg, run.data
    if not cfg.answer_columns:
        return None
    columns = names_in(cfg.answer_columns)
    csv = (
        data.manifest.get("csv") if data.trains_from == "records" else run.places.file("train_csv")
    )
    try:
        table = tables.read_csv(csv)
    except (OSError, ValueError, TypeError):
        print(f"out of fold: per image (the training CSV {csv} is not here to gather by)")
        return None
    absent = [column for column in [cfg.id_column, *columns] if column not in table]
    if absent:
        raise UserError(
            f"{named('answer_columns')} {cfg.answer_columns}: the training CSV {csv} has no "
            f"column {absent[0]!r}; name columns of both tables"
        )
    return tables.answer_by_id(table, cfg.id_column, columns)


def gathered(run: Run, probabilities, labels, keys: list[str]):
    """Validation's rows gathered to their answers (`answers_by_image`), as predict gathers the
    test set's, the truth of an answer its first image's; as they are where none are named."""
    answers = answers_by_image(run) if any(keys) else None
    if not answers:
        return probabilities, labels, keys
    grain = [answers.get(key, key) for key in keys]
    probabilities, _ = tables.by_answer(probabilities, grain, run.cfg.aggregate)
    labels, keys = tables.by_answer(labels, grain, "first")
    print(f"validation: {tables.gathering(grain, run.cfg.aggregate)}")
    return probabilities, labels, keys


def truth(cfg: Config, table: pd.DataFrame, column: str = "label") -> np.ndarray:
    """valid.csv's or oof.csv's labels (or its answers, `column` "predicted"): class numbers,
    multi-hot rows (multi-label), or rows of values or shares."""
    if targets(cfg) != "classes":
        return np.array([value.split() for value in table[column]], float)
    rows = scoring.label_rows(table[column].astype(str), cfg.num_classes)
    return rows if cfg.multi_label else rows.argmax(-1)


def scored(cfg: Config, table: pd.DataFrame) -> float:
    """The metric of valid.csv's rows: of its probabilities (or values), or its answers."""
    probabilities = table[table.columns[-cfg.num_classes :]].to_numpy(float)
    predicted = truth(cfg, table, "predicted") if targets(cfg) == "classes" else None
    return scoring.of_run(cfg, truth(cfg, table), probabilities, predicted=predicted)


def read_predictions(path) -> pd.DataFrame:
    """valid.csv or oof.csv as written: its ids, labels and answers as text (007 stays 007)."""
    text = {"id": str, "label": str, "predicted": str}
    return pd.read_csv(for_pandas(path), dtype=text, keep_default_na=False)


def test_probabilities(path) -> pd.DataFrame:
    """test_probabilities.csv as predict writes it: the ids as text (007 stays 007)."""
    return pd.read_csv(for_pandas(path), dtype={0: str}, keep_default_na=False)


def scored_folds(run: Run, folds: list[int]) -> float:
    """Every fold's validation predictions gathered into oof.csv, each fold's score and theirs."""
    cfg, output = run.cfg, run.places.output
    tables = [read_predictions(output / f"fold{fold}" / "valid.csv") for fold in folds]
    for fold, table in zip(folds, tables, strict=True):
        print(f"fold {fold} {cfg.metric}: {scored(cfg, table):.4f}")
    everything = pd.concat(tables, ignore_index=True)
    path = output / "oof.csv"
    with written_whole(path) as temporary:
        everything.to_csv(temporary, index=False)
    result = scored(cfg, everything)
    grain = "answers" if cfg.answer_columns else "images"
    print(f"out-of-fold {cfg.metric}: {result:.4f} ({len(everything)} {grain}, {path})")
    return result
