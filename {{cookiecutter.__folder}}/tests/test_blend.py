"""Blending runs: weights fitted on out-of-fold rows, the blend's CV estimated on rows its
weights never saw, the blended submission in the sample's order, its CV in what is submitted,
and the inference notebook that predicts with every run (test_code_competition.py reruns it
as Kaggle does). Each refusal is a row of test_bad_inputs.py."""

import json
import re
import shutil

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import f1_score
from test_kaggle import against_fake_kaggle, calls

from {{ cookiecutter.package }}.__main__ import main
from {{ cookiecutter.package }}.runtime.learning import blending

CLASSES = ["p0", "p1", "p2"]


def macro_f1(truth, probabilities) -> float:
    return f1_score(truth, np.asarray(probabilities).argmax(1), average="macro", zero_division=0)


def fetched(run, tmp_path, notebook):
    """A copy of the run as `kaggle output` leaves a notebook's output: with the notebook's id."""
    copy = shutil.copytree(run, tmp_path / run.name)
    (copy / "kaggle-notebook.json").write_text(json.dumps({"id": notebook}))
    return copy


def test_blend_weighs_runs_by_out_of_fold_rows_and_submits_in_the_samples_order(
    blendable, tmp_path, capsys
):
    out = tmp_path / "blend"
    flags = ["--data-dir", str(blendable.data), "--output-dir", str(out)]
    assert main(["blend", *map(str, blendable.runs), *flags, "--weights", "fitted"]) == 0
    printed = capsys.readouterr().out
    blend = json.loads((out / "blend.json").read_text())

    oofs = [pd.read_csv(run / "oof.csv", dtype={"id": str}) for run in blendable.runs]
    order = oofs[0]["id"]
    tables = [oof.set_index("id").loc[order, CLASSES].to_numpy() for oof in oofs]
    truth = oofs[0]["label"].to_numpy()
    for run, table in zip(blend["runs"], tables, strict=True):  # each run's CV, as sklearn says
        assert np.isclose(run["cv"], macro_f1(truth, table))
        assert re.search(rf"\n  {run['name']} +{run['cv']:.4f}  {run['weight']:.2f}\n", printed)
    assert [run["image_size"] for run in blend["runs"]] == [32, 40]
    assert [run["tta"] for run in blend["runs"]] == ["none", "flip"]  # as each was predicted
    # Trained with other seeds, on the same folds: the folds come from --fold-seed alone.
    records = [json.loads((run / "fold0" / "model.json").read_text()) for run in blendable.runs]
    assert records[0]["seed"] != records[1]["seed"]
    folds = [(run / "fold0" / "folds.csv").read_text() for run in blendable.runs]
    assert folds[0] == folds[1]
    weights = np.array([run["weight"] for run in blend["runs"]])
    assert (weights >= 0).all() and np.isclose(weights.sum(), 1)
    assert np.isclose(blend["equal_weights_cv"], macro_f1(truth, sum(tables) / 2))
    assert np.isclose(
        blend["blend_cv_in_sample"], macro_f1(truth, blending.blended(tables, weights))
    )
    assert blend["blend_cv_in_sample"] >= max(run["cv"] for run in blend["runs"])
    assert blend["blend_cv"] == blend["fitted_weights_cv"]  # nested: test_blending's below
    assert f"  {'equal weights':<15} {blend['equal_weights_cv']:7.4f}\n" in printed
    assert f"  {'blend':<15} {blend['blend_cv']:7.4f}  (each fold's rows blended with " in printed
    assert "the blend beats its best run" in printed

    # The submission: the runs' test probabilities weighed, row for row as the sample.
    sample = pd.read_csv(blendable.data / "sample_submission.csv", dtype=str)
    tests = [pd.read_csv(run / "test_probabilities.csv", dtype=str) for run in blendable.runs]
    expected = sum(w * t[CLASSES].to_numpy(float) for w, t in zip(weights, tests, strict=True))
    kept = pd.read_csv(out / "test_probabilities.csv", dtype={"image_id": str})
    assert kept["image_id"].tolist() == sample["image_id"].tolist()
    assert np.allclose(kept[CLASSES].to_numpy(), expected, atol=1e-6)
    written = pd.read_csv(out / "submission.csv", dtype=str)
    assert written.columns.tolist() == ["image_id", "label"]
    assert written["image_id"].tolist() == sample["image_id"].tolist()
    assert written["label"].tolist() == [str(n) for n in expected.argmax(1)]

    # By default the plain average stands unless fitted weights score better, nested.
    assert main(["blend", *map(str, blendable.runs), *flags[:-1], str(tmp_path / "auto")]) == 0
    auto = json.loads((tmp_path / "auto" / "blend.json").read_text())
    fitted_wins = blend["fitted_weights_cv"] > blend["equal_weights_cv"]
    assert auto["weights_by"] == ("fitted" if fitted_wins else "equal")
    assert auto["blend_cv"] == max(blend["fitted_weights_cv"], blend["equal_weights_cv"])


@pytest.mark.quick
def test_hill_climbing_gives_a_useless_run_no_weight_and_the_best_run_the_most():
    """Three runs: right on 80% of rows, on 70%, and noise."""
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 3, 600)
    onehot = np.eye(3)[truth]

    def noisy(right: float) -> np.ndarray:  # right on about that share of the rows
        wrong = np.eye(3)[(truth + rng.integers(1, 3, len(truth))) % 3]
        keep = rng.random(len(truth)) < right
        return np.where(keep[:, None], onehot, wrong) * 0.6 + rng.random((len(truth), 3)) * 0.4

    runs = [noisy(0.8), noisy(0.7), rng.random((len(truth), 3))]

    def score(rows, probabilities):
        return macro_f1(truth[rows], probabilities)

    weights = blending.hill_climbed(runs, score)
    assert weights[2] == 0 and weights[0] == max(weights), weights
    every = np.ones(len(truth), bool)
    assert score(every, blending.blended(runs, weights)) >= score(every, runs[0])


@pytest.mark.quick
def test_the_blends_cv_scores_each_fold_with_weights_fitted_on_the_other_folds():
    """Run a is right on fold 1 only, run b on fold 0 only: weights fitted on every row can
    score 0.5 or more, but fitted on the other fold they pick the wrong run for each fold."""
    truth, folds = np.array([0, 1, 2, 0, 1, 2]), np.array([0, 0, 0, 1, 1, 1])
    right, wrong = np.eye(3)[truth], np.eye(3)[(truth + 1) % 3]
    a = np.where((folds == 1)[:, None], right, wrong)
    b = np.where((folds == 0)[:, None], right, wrong)

    def score(rows, probabilities):
        return float((probabilities.argmax(1) == truth[rows]).mean())

    every = np.ones(6, bool)
    assert score(every, blending.blended([a, b], blending.hill_climbed([a, b], score))) >= 0.5
    assert score(every, blending.nested([a, b], folds, score)) == 0


def test_a_blends_cv_goes_with_what_is_submitted_and_its_notebook_attaches_every_run(
    blendable, tmp_path
):
    """The file submission (the blend's submission.csv) and the code submission (the blend's
    inference notebook) each carry the blend's CV; `submissions` shows it."""
    runs = [fetched(run, tmp_path, f"alice/{run.name}-run") for run in blendable.runs]
    blend, notebook = tmp_path / "blend", tmp_path / "kernel-blend"
    flags = ["--data-dir", str(blendable.data), "--output-dir", str(blend)]
    result = against_fake_kaggle(
        tmp_path,
        [
            ["blend", *map(str, runs), *flags],
            ["kernel", "--blend", str(blend / "blend.json"), "--kernel-dir", str(notebook)],
            ["kernel", "--slug", "cnn40-run", "--kernel-dir", str(tmp_path / "kernel-cnn40")],
            ["kaggle", "submit", "--kernel-dir", str(notebook)],
            ["kaggle", "submit", "--output-dir", str(blend), "--message", "two sizes"],
            ["kaggle", "submissions"],
        ],
        kernels={"alice/{{ cookiecutter.project }}-inference": {"version": 2, "status": "COMPLETE"}},
    )
    for step in result["steps"]:
        assert step["code"] == 0, step
    fitted = json.loads((blend / "blend.json").read_text())
    cv = fitted["blend_cv"]
    said = f"cv macro_f1 {cv:.4f}, blend of 2"
    metadata = json.loads((notebook / "kernel-metadata.json").read_text())
    weighed = [f"alice/{run['name']}-run" for run in fitted["runs"] if run["weight"] > 0]
    assert metadata["kernel_sources"] == weighed  # a run of no weight is not predicted
    for run in fitted["runs"]:
        left_out = f"leaving out {run['name']}: the blend gives it no weight"
        assert (left_out in result["steps"][1]["out"]) == (run["weight"] == 0)
    assert metadata["model_sources"] == [] and metadata["enable_internet"] is False
    (code,) = calls(result, "CreateCodeSubmission")
    assert code["json"]["submissionDescription"] == f"a blend; {said}"
    (sent,) = calls(result, "CreateSubmission")
    assert sent["json"]["submissionDescription"] == f"two sizes; {said}"
    (upload,) = [r for r in result["requests"] if r["method"] == "PUT"]
    assert upload["text"] == (blend / "submission.csv").read_text()
    training = json.loads((tmp_path / "kernel-cnn40" / "kernel-metadata.json").read_text())
    assert (training["id"], training["title"]) == ("alice/cnn40-run", "Cnn40 Run")  # its own
    listed = [re.split(r"  +", line) for line in result["steps"][-1]["out"].splitlines()]
    assert [row[4] for row in listed[1:]] == [f"macro_f1 {cv:.4f}, blend of 2"] * 2
