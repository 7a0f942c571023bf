"""Targets that are no class per image, as image competitions pose them: numbers to regress
(PetFinder's one, Image2Biomass' several) and votes to match (HMS), from a folder of images
and a CSV through `records`, `train --fold all`, `predict` and `score` with nothing but
--label-column and --metric; and the inputs that cannot train, each refused in one line
before a shard is written."""

import contextlib
import io
import re
import shutil

import numpy as np
import pandas as pd
import pytest
from builders import competition, numbers_competition
from PIL import Image

from {{ cookiecutter.package }}.__main__ import main
from {{ cookiecutter.package }}.runtime.config import Config
from {{ cookiecutter.package }}.runtime.errors import UserError
from {{ cookiecutter.package }}.runtime.scoring import METRICS, kl_divergence
from {{ cookiecutter.package }}.tools.images_to_records import write_records

QUICK = "--backbone small-cnn --weights none --image-size 32 --batch-size 8 --learning-rate 3e-3"
QUICK = [*QUICK.split(), "--epochs", "8", "--no-flip", "--folds", "3"]
COLOURS = ["red", "green", "blue"]  # numbers_competition's targets: 0-100, 0-1, -500-500
VOTES = [f"{colour}_vote" for colour in COLOURS]


def run(folder, metric: str, columns: list[str], votes: bool = False):
    """A competition of these columns, through records, train --fold all, predict and score
    as a shell runs them (the columns given only where they are values); its folder."""
    numbers_competition(folder, columns, votes)
    given = [] if votes else ["--label-column", ",".join(columns)]
    data = ["--data-dir", str(folder / "records"), "--output-dir", str(folder / "out")]
    made = ["--images", str(folder / "train_images"), "--csv", str(folder / "train.csv")]
    made += ["--test-images", str(folder / "test_images"), "--output-dir", str(folder / "records")]
    assert main(["records", *made, "--folds", "3", "--metric", metric, *given]) == 0
    assert main(["train", *data, "--fold", "all", *QUICK]) == 0
    assert (
        main(
            ["predict", *data, *QUICK, "--sample-submission", str(folder / "sample_submission.csv")]
        )
        == 0
    )
    scored = ["--solution", str(folder / "solution.csv"), "--metric", metric, *given]
    with contextlib.redirect_stdout(io.StringIO()) as said:
        assert main(["score", *data[2:], *scored]) == 0
    (folder / "scored.txt").write_text(said.getvalue())  # on the test images' true values
    return folder


def scored(folder) -> dict[str, float]:
    """What `score` printed of the run's submission: each metric's score."""
    lines = (folder / "scored.txt").read_text().splitlines()
    return {
        name: float(value)
        for name, _, value in (line.partition(": ") for line in lines)
        if name in METRICS
    }


@pytest.fixture(scope="module")
def one_value(tmp_path_factory):
    """PetFinder's shape: one number per image, scored by RMSE."""
    return run(tmp_path_factory.mktemp("one-value"), "rmse", ["red"])


@pytest.fixture(scope="module")
def three_values(tmp_path_factory):
    """Image2Biomass' shape: several numbers per image on scales of their own, weighted R²."""
    return run(tmp_path_factory.mktemp("three-values"), "weighted_r2", COLOURS)


def out_of_fold(folder) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """oof.csv's true rows, predictions and folds."""
    oof = pd.read_csv(folder / "out" / "oof.csv", dtype={"label": str})
    truth = np.array([row.split() for row in oof["label"]], float)
    return truth, oof.filter(like="p_").to_numpy(float), oof["fold"].to_numpy()


def rmse_against_the_mean(folder) -> tuple[np.ndarray, np.ndarray]:
    """Each target's out-of-fold RMSE, and that of predicting each fold its training folds'
    mean (the baseline a model must beat)."""
    truth, predicted, folds = out_of_fold(folder)
    means = np.stack([truth[folds != fold].mean(0) for fold in folds])
    return [np.sqrt(np.mean(np.square(truth - guess), axis=0)) for guess in (predicted, means)]


def submitted_as_the_sample_asks(folder, columns: list[str]) -> pd.DataFrame:
    written = pd.read_csv(folder / "out" / "submission.csv", dtype={"image_id": str})
    sample = pd.read_csv(folder / "sample_submission.csv", dtype={"image_id": str})
    assert list(written.columns) == list(sample.columns) == [*columns, "image_id"]  # id last
    assert written["image_id"].tolist() == sample["image_id"].tolist()  # not sorted
    return written


@pytest.mark.slow
def test_a_number_per_image_is_regressed_well_beyond_the_mean_and_submitted_as_the_sample(
    one_value, capsys
):
    """The CV RMSE at most 0.6 of the mean predictor's; submission.csv in the sample's columns
    (the target before the id), ids and order; score reads the id column where it stands."""
    model, mean = rmse_against_the_mean(one_value)
    assert model[0] <= 0.6 * mean[0], (model, mean)
    submitted_as_the_sample_asks(one_value, ["red"])
    held_out = pd.read_csv(one_value / "solution.csv")["red"]
    assert scored(one_value)["rmse"] <= 0.6 * held_out.std(ddof=0), scored(one_value)
    stacked = ["--data-dir", str(one_value / "records"), "--output-dir", str(one_value / "stack")]
    stacked += ["--sample-submission", str(one_value / "sample_submission.csv")]
    assert main(["stack", str(one_value / "out"), *stacked]) == 0
    assert "  stack  " in capsys.readouterr().out  # trees on the run's values, CV nested
    assert main(["audit", str(one_value / "out")]) != 0  # it ranks given classes: none here
    assert "was trained with values; the audit weighs one given class" in capsys.readouterr().err
    assert list(pd.read_csv(one_value / "stack" / "submission.csv").columns) == ["red", "image_id"]


@pytest.mark.slow
def test_three_numbers_on_their_own_scales_are_each_regressed_and_drawn(three_values, capsys):
    """Standardized by the training folds' mean and spread (kept beside each fold's weights),
    each target beats its mean predictor as the one alone did; evaluate draws each one's
    values against the truth, and its residuals."""
    model, mean = rmse_against_the_mean(three_values)
    assert (model <= 0.6 * mean).all(), (model, mean)
    assert (three_values / "out" / "fold0" / "standardized.json").is_file()
    submitted_as_the_sample_asks(three_values, COLOURS)
    data = ["--data-dir", str(three_values / "records"), "--output-dir", str(three_values / "out")]
    assert scored(three_values)["weighted_r2"] >= 0.64, scored(three_values)
    assert main(["evaluate", *data, *QUICK, "--fold", "0"]) == 0
    assert "blue: rmse " in capsys.readouterr().out  # each target's scores
    with Image.open(three_values / "out" / "fold0" / "values.png") as picture:
        drawn = picture.text["Description"]  # its visible text (plots.save)
    assert "true blue" in drawn and "predicted blue" in drawn and "residuals" in drawn


@pytest.mark.slow
def test_votes_train_as_shares_and_beat_the_uniform_prediction(tmp_path):
    """HMS' shape: vote columns found by the sample's names, trained on their shares; a
    probability per class under its column's name, and a CV KL divergence below the
    uniform prediction's."""
    folder = run(tmp_path, "kl_divergence", VOTES, votes=True)
    truth, predicted, _ = out_of_fold(folder)
    uniform = np.full_like(truth, 1 / 3)
    assert kl_divergence(truth, predicted) < 0.5 * kl_divergence(truth, uniform)
    assert set(scored(folder)) == {"kl_divergence"}
    written = submitted_as_the_sample_asks(folder, VOTES)
    assert np.allclose(written[VOTES].sum(axis=1), 1, atol=1e-4)


@pytest.fixture(scope="module")
def unwritten(tmp_path_factory):
    """A competition of values and one of votes, to spoil one cell of and copy."""
    root = tmp_path_factory.mktemp("unwritten")
    return numbers_competition(root / "values", COLOURS), numbers_competition(
        root / "votes", VOTES, True
    )


def spoiled(row: int, column: str, value: str):
    def spoil(table: pd.DataFrame) -> pd.DataFrame:
        table.loc[row, column] = value
        return table

    return spoil


@pytest.mark.quick
@pytest.mark.parametrize(
    "votes, fields, spoil, said",
    [
        (False, {"label_column": "red,mass"}, None, "has no column 'mass' (Config.label_column"),
        (False, {}, spoiled(4, "green", "n/a"), "row 6 holds 'n/a' in 'green'; Config.metric"),
        (True, {}, spoiled(2, "red_vote", "-1"), "row 4 holds '-1' in 'red_vote'"),
        (True, {}, lambda table: table.assign(**dict.fromkeys(VOTES, "0")), "row 2 has no vote"),
        (False, {"label_column": "red,green", "metric": "macro_f1"}, None, "of values or shares"),
    ],
    ids=["missing-column", "text-in-numbers", "negative-vote", "no-votes", "metric-of-classes"],
)
def test_a_target_that_cannot_train_is_refused_in_one_line_before_a_shard(
    unwritten, tmp_path, votes, fields, spoil, said
):
    folder = shutil.copytree(unwritten[votes], tmp_path / "competition")
    if spoil:
        spoil(pd.read_csv(folder / "train.csv", dtype=str)).to_csv(
            folder / "train.csv", index=False
        )
    given = (
        {"metric": "kl_divergence"}
        if votes
        else {"metric": "rmse", "label_column": "red,green,blue"}
    )
    cfg = Config(**{**given, **fields})  # the vote columns: the sample's
    with pytest.raises(UserError, match=re.escape(said)) as refused:
        write_records(
            cfg, str(folder / "train_images"), str(folder / "train.csv"), str(tmp_path / "out")
        )
    assert "\n" not in str(refused.value)
    assert not (tmp_path / "out").exists()


def test_labels_of_classes_are_refused_by_a_metric_of_values_and_values_by_one_of_classes(
    tmp_path, capsys
):
    """Names in the label column cannot be regressed; records of values cannot be scored by a
    metric of classes: each says which metrics fit."""
    folder = competition(
        tmp_path / "classes", ["healthy", "rust"] * 4, ["image_id", "label"], ["image_id", "label"]
    )
    with pytest.raises(UserError, match="row 2 holds 'healthy' in 'label'; Config.metric"):
        write_records(
            Config(metric="rmse", num_classes=1),
            str(folder / "train_images"),
            str(folder / "train.csv"),
            str(tmp_path / "out"),
        )
    values = numbers_competition(tmp_path / "values", ["red"])
    made = ["--images", str(values / "train_images"), "--csv", str(values / "train.csv")]
    assert (
        main(
            [
                "records",
                *made,
                "--output-dir",
                str(tmp_path / "records"),
                "--metric",
                "rmse",
                "--label-column",
                "red",
                "--folds",
                "2",
            ]
        )
        == 0
    )
    capsys.readouterr()
    trained = ["--data-dir", str(tmp_path / "records"), "--output-dir", str(tmp_path / "out")]
    assert main(["train", *trained, "--metric", "accuracy"]) != 0
    said = capsys.readouterr()
    assert (
        "the records hold values (records --metric rmse), which Config.metric"
        in said.out + said.err
    )
