"""`stack`: trees on the runs' out-of-fold probabilities and the metadata beside each image,
its CV nested (each fold scored by trees that never saw it), its submission in the sample's
order. Each refusal is a row of test_bad_inputs.py."""

import json
import shutil

import numpy as np
import pandas as pd

from {{ cookiecutter.package }}.__main__ import main


def relabeled(blendable, tmp_path, column, test_value):
    """A copy of the blendable competition and of its first run, the training labels shuffled
    (the run's images no longer tell them), train.csv with `column(labels)` beside them and a
    test table with `test_value` for every test image."""
    data = shutil.copytree(blendable.data, tmp_path / "data")
    train = pd.read_csv(data / "train.csv", dtype=str)
    train["label"] = np.random.default_rng(0).permutation(train["label"].to_numpy())
    train["size"] = column(train["label"].astype(int).to_numpy())
    train["note"] = "same"
    train.to_csv(data / "train.csv", index=False)
    run = shutil.copytree(blendable.runs[0], tmp_path / "run")
    oof = pd.read_csv(run / "oof.csv", dtype=str).set_index("id")
    oof["label"] = train.set_index("image_id")["label"].loc[oof.index]
    oof.reset_index().to_csv(run / "oof.csv", index=False)
    sample = pd.read_csv(data / "sample_submission.csv", dtype=str)
    tests = pd.DataFrame({"image_id": sample["image_id"], "size": test_value, "note": "same"})
    tests.to_csv(data / "test.csv", index=False)
    flags = ["--data-dir", str(data), "--test-csv", str(data / "test.csv")]
    return data, run, flags + ["--output-dir", str(tmp_path / "stack")]


def test_stack_learns_what_the_metadata_tells_and_submits_in_the_samples_order(
    blendable, tmp_path, capsys
):
    data, run, flags = relabeled(blendable, tmp_path, lambda labels: labels * 10, 10)
    assert main(["stack", str(run), *flags]) == 0
    printed = capsys.readouterr().out
    stack = json.loads((tmp_path / "stack" / "stack.json").read_text())

    assert stack["metadata_columns"] == ["size"]  # note, one value for all, is left out
    assert stack["features"][:3] == ["run p0", "run p1", "run p2"]
    assert stack["stack_cv"] > stack["runs"][0]["cv"] + 0.3  # size tells the class
    assert f"stack                    {stack['stack_cv']:.4f}" in printed
    submitted = pd.read_csv(tmp_path / "stack" / "submission.csv", dtype=str)
    sample = pd.read_csv(data / "sample_submission.csv", dtype=str)
    assert submitted["image_id"].tolist() == sample["image_id"].tolist()
    assert set(submitted["label"]) == {"1"}  # every test image's size is class 1's


def test_the_stacks_cv_is_nested(blendable, tmp_path):
    """A column that names each image (and so nothing of a new one) lets trees fitted on every
    image score them well, and trees fitted on the other folds no better than chance."""

    def serial(labels):
        return np.arange(len(labels)) * 7 % len(labels)

    _, run, flags = relabeled(blendable, tmp_path, serial, 1)
    assert main(["stack", str(run), *flags]) == 0
    stack = json.loads((tmp_path / "stack" / "stack.json").read_text())
    assert stack["stack_cv_in_sample"] > stack["stack_cv"] + 0.2
    assert stack["stack_cv"] < 0.6  # three classes: a third is chance
