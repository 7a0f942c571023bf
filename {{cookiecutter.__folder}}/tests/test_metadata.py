"""The table beside each image: which columns a run uses, how each becomes the model's
inputs (fitted on the training folds only), and every image matched to its row."""

import json

import numpy as np
import pandas as pd
import pytest
from builders import competition, ids, write_csv

from {{ cookiecutter.package }}.runtime.config import Config
from {{ cookiecutter.package }}.runtime.data import images, metadata
from {{ cookiecutter.package }}.runtime.errors import UserError
from {{ cookiecutter.package }}.runtime.stages import fitting, preflight
from {{ cookiecutter.package }}.runtime.stages.run import start

TRAIN = pd.DataFrame(
    {
        "isic_id": ["a", "b", "c", "d"],
        "target": ["0", "1", "0", "1"],
        "patient_id": ["p1", "p1", "p2", "p3"],
        "age_approx": ["30", "60", "", "50"],
        "sex": ["male", "female", "male", ""],
        "iddx_full": ["Benign", "Malignant", "Benign", "Malignant"],  # the label in words
        "image_type": ["TBP tile"] * 4,
    }
)
TEST = TRAIN.drop(columns=["target", "iddx_full"]).assign(attribution="MSK")
RESERVED = {"isic_id", "target", "patient_id"}


def chosen(requested, test=TEST):
    return metadata.chosen(TRAIN, test, requested, RESERVED, "--metadata-columns", "--test-csv")


def test_by_default_only_columns_both_tables_hold_are_used_and_the_rest_said_with_why():
    columns, left_out = chosen(metadata.AUTO)
    assert columns == ["age_approx", "sex"]
    assert left_out == {
        "iddx_full": "only the training table has it",
        "image_type": "every image has 'TBP tile'",
    }
    assert chosen("") == ([], {})  # images alone
    assert chosen(metadata.AUTO, test=None) == ([], {})  # no test table: nothing to supply


@pytest.mark.parametrize(
    ("requested", "said"),
    [
        ("age_approx,weight", "the training table has no column 'weight'; its columns are "),
        ("iddx_full", "the test images' table has no column 'iddx_full'"),
        ("target", "'target' is the id, label or group column, not metadata"),
    ],
)
def test_columns_that_cannot_be_used_are_refused_by_name(requested, said):
    with pytest.raises(UserError, match=said):
        chosen(requested)


def test_a_column_with_no_values_is_refused_and_no_test_table_is_asked_for():
    empty = TRAIN.assign(height=""), TEST.assign(height="")
    with pytest.raises(UserError, match="column 'height' holds no values"):
        metadata.chosen(*empty, "height", RESERVED, "--metadata-columns", "--test-csv")
    with pytest.raises(UserError, match=r"no table of the test images says their 'sex'; give"):
        chosen("sex", test=None)


def test_the_encoding_is_fitted_on_the_training_rows_and_applied_as_fitted_to_others():
    """Numbers standardised by the training rows alone, a missing one 0 and flagged; a
    category one-hot over the training rows' values, an unseen or missing one in its own slot."""
    spec = metadata.fitted(TRAIN.iloc[:2], ["age_approx", "sex"])  # rows a and b train
    assert spec["columns"][0] == {
        "column": "age_approx",
        "kind": "number",
        "mean": 45.0,
        "std": 15.0,
    }
    assert metadata.feature_names(spec) == [
        "age_approx", "age_approx missing", "sex=female", "sex=male", "sex other or missing",
    ]  # fmt: skip
    held_out = pd.DataFrame({"age_approx": ["", "75", "1e9"], "sex": ["", "male", "other"]})
    assert metadata.encoded(spec, held_out).tolist() == [
        [0, 1, 0, 0, 1],  # missing age: 0 and flagged; missing sex: the last slot
        [2, 0, 0, 1, 0],  # (75 - 45) / 15
        [metadata.SPREAD, 0, 0, 0, 1],  # a typo's age is clipped; a value never seen
    ]


def test_a_column_of_many_values_keeps_its_commonest_and_a_number_column_with_text_is_a_category():
    many = pd.DataFrame({"site": [f"s{n % 40}" for n in range(400)] + ["s0"] * 10})
    spec = metadata.fitted(many, ["site"])
    assert len(spec["columns"][0]["values"]) == metadata.MOST_VALUES
    assert "s0" in spec["columns"][0]["values"]
    mixed = pd.DataFrame({"size": ["1.5", "2", "large"]})
    assert metadata.fitted(mixed, ["size"])["columns"][0]["kind"] == "category"


def test_each_image_gets_its_own_row_whatever_the_spelling_of_its_id_and_none_is_left_without():
    spec = metadata.fitted(TRAIN, ["age_approx"])
    table = TRAIN.assign(id=TRAIN["isic_id"]).iloc[::-1]  # in another order
    rows = metadata.of_ids_rows(table, ["b.jpg", "sub/a.jpg", "d"], "test.csv", "fix it")
    values = metadata.encoded(spec, rows)
    ages = values[:, 0] * spec["columns"][0]["std"] + spec["columns"][0]["mean"]
    assert np.allclose(ages, [60, 30, 50])
    with pytest.raises(
        UserError, match=r"test.csv has no row for 1 of the 2 images \(such as 'z.jpg'\); fix it"
    ):
        metadata.of_ids_rows(table, ["a.jpg", "z.jpg"], "test.csv", "fix it")


def test_beside_images_the_training_csv_columns_are_fitted_on_the_training_folds_alone(tmp_path):
    """Training from images and a CSV: the CSV's columns that the test table holds too, the
    numbers standardised by the folds that train (not the one that validates), the encoding
    saved with the run for predict."""
    labels = ["0", "1"] * 10
    folder = competition(tmp_path, labels, ["image_id", "label"], ["image_id", "label"])
    names = ids(folder / "train.csv", "image_id")
    rows = [
        (name, label, str(number), "x")
        for number, (name, label) in enumerate(zip(names, labels, strict=True))
    ]
    write_csv(folder / "train.csv", ["image_id", "label", "age", "only_here"], rows)
    write_csv(folder / "test.csv", ["image_id", "age"], [("5000", "3")])
    run = start(  # as train starts it: its accelerator found, its data read
        Config(
            data_dir=str(folder),
            test_csv="test.csv",
            folds=2,
            fold="0",
            output_dir=str(tmp_path / "out"),
        )
    )
    no_pseudo = preflight.Result("", None)  # no test images trained on
    features = fitting.metadata_table(run, preflight.Preflight("train", run, pseudo=no_pseudo))
    training = images.table(run.cfg, run.places).rows["fold"] == 1  # fold 0 validates
    ages = np.arange(len(labels))[training.to_numpy()]
    saved = json.loads((tmp_path / "out" / metadata.SPEC).read_text())
    assert saved["columns"] == [
        {"column": "age", "kind": "number", "mean": ages.mean(), "std": ages.std()}
    ]
    assert features.ids == names and features.width == 2
    (tested,) = metadata.for_test(run.cfg, run.places, run.data, [saved], ["5000.jpg"])
    assert np.allclose(tested.values, [[(3 - ages.mean()) / ages.std(), 0]])
