"""Each metric matches its definition on a case worked by hand."""

import numpy as np
import pytest

from {{ cookiecutter.package }}.__main__ import main
from {{ cookiecutter.package }}.runtime.errors import UserError
from {{ cookiecutter.package }}.runtime.learning.scoring import metric_named, score, score_labels
from {{ cookiecutter.package }}.runtime.stages.score import check_rows_match, score_files

pytestmark = pytest.mark.quick  # one unit alone: make test-quick runs it


def test_macro_f1_and_accuracy_on_a_worked_case():
    truth, predicted = [0, 0, 1, 1], [0, 1, 1, 1]
    assert score_labels(truth, predicted, "accuracy") == 0.75
    # class 0: precision 1, recall 1/2, F1 2/3; class 1: precision 2/3, recall 1, F1 4/5
    assert score_labels(truth, predicted, "macro_f1") == pytest.approx((2 / 3 + 4 / 5) / 2)
    probabilities = np.eye(2)[predicted] * 0.6 + 0.2
    assert score(truth, probabilities, "accuracy") == 0.75


def test_roc_auc_is_the_mean_over_the_classes_of_their_probabilities():
    truth = [0, 0, 1, 1]
    probabilities = np.array([[0.9, 0.1], [0.4, 0.6], [0.7, 0.3], [0.2, 0.8]])
    # class 1's scores (0.1, 0.6 | 0.3, 0.8): 3 of 4 pairs ranked right; class 0 the same
    assert score(truth, probabilities, "roc_auc") == pytest.approx(0.75)


def test_samples_f1_of_several_labels_with_thresholds():
    truth = np.array([[1, 1, 0], [0, 0, 1]])
    probabilities = np.array([[0.9, 0.2, 0.1], [0.1, 0.1, 0.45]])
    # image 0: {0} against {0, 1}: F1 2/3; image 1: {2} at threshold 0.4: F1 1
    assert score(truth, probabilities, "samples_f1", [0.5, 0.5, 0.4]) == pytest.approx(5 / 6)


def test_probability_and_multi_label_submission_files_are_scored(tmp_path):
    (tmp_path / "sol.csv").write_text("id,label\na,rust\nb,healthy\n")
    (tmp_path / "sub.csv").write_text("id,healthy,rust\nb,0.9,0.1\na,0.3,0.7\n")
    assert score_files(str(tmp_path / "sub.csv"), str(tmp_path / "sol.csv"), "id", "label") == {
        "roc_auc": 1.0
    }
    (tmp_path / "sol.csv").write_text("id,label\na,rust scab\nb,healthy\n")
    (tmp_path / "sub.csv").write_text("id,label\na,rust\nb,healthy\n")
    scores = score_files(str(tmp_path / "sub.csv"), str(tmp_path / "sol.csv"), "id", "label")
    assert scores == {"samples_f1": pytest.approx((2 / 3 + 1) / 2)}


def test_files_are_joined_by_id_not_by_row(tmp_path):
    (tmp_path / "sub.csv").write_text("id,label\nb,1\na,0\n")
    (tmp_path / "sol.csv").write_text("id,label\na,0\nb,1\n")
    scores = score_files(str(tmp_path / "sub.csv"), str(tmp_path / "sol.csv"), "id", "label")
    assert scores == {"accuracy": 1.0, "macro_f1": 1.0}


def test_a_missing_solution_is_named(tmp_path):
    (tmp_path / "sub.csv").write_text("id,label\na,0\n")
    with pytest.raises(UserError, match="nope.csv does not exist"):
        score_files(str(tmp_path / "sub.csv"), str(tmp_path / "nope.csv"), "id", "label")


def test_a_submission_in_another_row_order_is_caught(tmp_path):
    (tmp_path / "sample.csv").write_text("id,label\na,0\nb,0\n")
    (tmp_path / "sub.csv").write_text("id,label\na,1\nb,0\n")
    assert check_rows_match(str(tmp_path / "sub.csv"), str(tmp_path / "sample.csv"), "id") == 2
    (tmp_path / "sub.csv").write_text("id,label\nb,0\na,1\n")
    with pytest.raises(UserError, match="does not follow .*sample.csv .*first difference at row 0"):
        check_rows_match(str(tmp_path / "sub.csv"), str(tmp_path / "sample.csv"), "id")


def test_score_reads_the_columns_the_sample_names_as_predict_wrote_them(tmp_path, capsys):
    """A Cassava-style sample (image_id,label): the submission predict wrote from it is scored
    by its id column, with no --id-column."""
    (tmp_path / "out").mkdir()
    (tmp_path / "sample_submission.csv").write_text("image_id,label\nb.jpg,0\na.jpg,0\n")
    (tmp_path / "solution.csv").write_text("image_id,label\na.jpg,1\nb.jpg,2\n")
    (tmp_path / "out" / "submission.csv").write_text("image_id,label\nb.jpg,2\na.jpg,1\n")
    assert main(["score", "--data-dir", str(tmp_path), "--output-dir", str(tmp_path / "out")]) == 0
    assert "accuracy: 1.0000" in capsys.readouterr().out


def test_without_a_sample_score_reads_the_columns_of_the_submission_it_scores(tmp_path, capsys):
    """This project's own submission (image_id,label) against a solution with the same
    columns, no sample beside them; a solution without those columns names both headers."""
    (tmp_path / "out").mkdir()
    (tmp_path / "solution.csv").write_text("image_id,label\na.jpg,1\nb.jpg,2\n")
    (tmp_path / "out" / "submission.csv").write_text("image_id,label\nb.jpg,2\na.jpg,0\n")
    flags = ["--data-dir", str(tmp_path), "--output-dir", str(tmp_path / "out")]
    assert main(["score", *flags]) == 0
    assert "accuracy: 0.5000" in capsys.readouterr().out
    (tmp_path / "solution.csv").write_text("id,diagnosis\na.jpg,1\nb.jpg,2\n")
    assert main(["score", *flags]) == 2
    said = capsys.readouterr().err
    assert "solution.csv has the columns ['id', 'diagnosis'], " in said
    assert "submission.csv ['image_id', 'label']: the solution needs the id column" in said


def test_multi_label_accuracy_says_it_is_an_exact_match_not_keras_per_label_one():
    """Beside Keras' per-label val_accuracy, an exact-match accuracy of 0 looked like a bug."""
    assert metric_named("accuracy", True).startswith("accuracy (exact match")
    assert "per label" in metric_named("accuracy", True)
    assert metric_named("accuracy", False) == "accuracy"
    assert metric_named("samples_f1", True) == "samples_f1"
