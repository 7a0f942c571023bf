"""Each metric matches its definition on a case worked by hand."""

import numpy as np
import pytest

from {{ cookiecutter.package }}.__main__ import main
from {{ cookiecutter.package }}.runtime.config import Config
from {{ cookiecutter.package }}.runtime.errors import UserError
from {{ cookiecutter.package }}.runtime.learning.cuts import scored
from {{ cookiecutter.package }}.runtime.scoring import metric_named, score, score_labels
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
    cfg = Config(multi_label=True, metric="samples_f1", num_classes=3)
    assert scored(cfg, truth, probabilities, [0.5, 0.5, 0.4]) == pytest.approx(5 / 6)


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


def isic_pauc(truth: np.ndarray, positive: np.ndarray, min_tpr: float) -> float:
    """ISIC 2024's metric as its code computes it: the classes and scores turned over, the
    ROC curve cut at the false-positive rate 1 - min_tpr (interpolated there), its area."""
    from sklearn.metrics import auc, roc_curve

    fpr, tpr, _ = roc_curve(1 - truth, -positive)
    most = 1 - min_tpr
    stop = np.searchsorted(fpr, most, "right")
    tpr = np.append(tpr[:stop], np.interp(most, fpr[stop - 1 : stop + 1], tpr[stop - 1 : stop + 1]))
    return float(auc(np.append(fpr[:stop], most), tpr))


def kaggle_qwk(truth, predicted, classes: int) -> float:
    """Quadratic weighted kappa as Kaggle's competitions define it: 1 - sum(w O) / sum(w E),
    w = (i - j)^2 / (N - 1)^2, O the confusion counts, E the outer product of their margins
    scaled to the same total."""
    observed = np.zeros((classes, classes))
    np.add.at(observed, (truth, predicted), 1)
    expected = np.outer(observed.sum(1), observed.sum(0)) / observed.sum()
    weights = np.subtract.outer(np.arange(classes), np.arange(classes)) ** 2 / (classes - 1) ** 2
    return 1 - (weights * observed).sum() / (weights * expected).sum()


def apk(actual: int, predicted: list[int], k: int) -> float:
    """Average precision at k of one true class, as Kaggle's MAP@k (ml_metrics' apk) counts."""
    hits, total = 0, 0.0
    for i, guess in enumerate(predicted[:k]):
        if guess == actual and guess not in predicted[:i]:
            hits += 1
            total += hits / (i + 1)
    return total


def random_case(rng, classes: int, images: int = 300):
    truth = rng.integers(0, classes, images)
    logits = rng.normal(size=(images, classes)) + 1.5 * np.eye(classes)[truth]  # some skill
    probabilities = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    return truth, probabilities


@pytest.mark.parametrize("seed", range(5))
def test_each_new_metric_equals_its_reference_on_random_inputs(seed):
    from sklearn.metrics import log_loss

    rng = np.random.default_rng(seed)
    truth, probabilities = random_case(rng, 2)
    for min_tpr in (0.8, 0.5, 0.95):
        assert score(truth, probabilities, "pauc", min_tpr=min_tpr) == pytest.approx(
            isic_pauc(truth, probabilities[:, 1], min_tpr)
        )
    truth, probabilities = random_case(rng, 5)
    assert score(truth, probabilities, "log_loss") == pytest.approx(
        log_loss(truth, probabilities, labels=range(5))
    )
    assert score(truth, probabilities, "qwk", num_classes=5) == pytest.approx(
        kaggle_qwk(truth, probabilities.argmax(1), 5)
    )
    for k in (1, 3, 5):
        ranked = np.argsort(-probabilities, axis=1)
        expected = np.mean([apk(t, list(row), k) for t, row in zip(truth, ranked, strict=True)])
        assert score(truth, probabilities, "map_at_k", k=k) == pytest.approx(expected)


def test_pauc_spans_0_to_the_area_above_min_tpr_and_log_loss_is_clipped_as_kaggle_clips():
    truth = np.array([0, 0, 0, 1, 1])
    ranked_right = np.array([[0.9, 0.1], [0.8, 0.2], [0.7, 0.3], [0.4, 0.6], [0.1, 0.9]])
    assert score(truth, ranked_right, "pauc") == pytest.approx(0.2)  # all of the 0.2 above 80%
    assert score(truth, ranked_right[:, ::-1], "pauc") == pytest.approx(0.0)
    # A certain wrong answer costs -log(1e-15), not infinity: one image of two, 34.54 / 2.
    sure = np.array([[1.0, 0.0], [1.0, 0.0]])
    assert score([0, 1], sure, "log_loss") == pytest.approx(-np.log(1e-15) / 2, rel=1e-6)


def test_a_run_keeps_the_average_by_its_rule_whichever_scored_better():
    """A CV picked on the records it is reported on would overstate it: the average is kept
    (Config.ema above 0), with the raw weights' lower or higher loss recorded beside it."""
    from {{ cookiecutter.package }}.runtime.learning.averaging import chosen

    for raw in (0.40, 0.30):  # log loss: the raw weights' worse, then better
        history = {"val_log_loss_raw": [raw], "val_log_loss_average": [0.35]}
        kept = chosen(history, "log_loss")
        assert (kept["kept"], kept["valid_raw"], kept["valid_average"]) == ("average", raw, 0.35)
    assert metric_named("log_loss", False) == "log_loss (lower is better)"


def test_binary_map_at_k_and_graded_submission_files_are_scored_by_the_metric(tmp_path):
    from {{ cookiecutter.package }}.runtime.config import Config

    (tmp_path / "sol.csv").write_text("isic_id,target\na,0\nb,1\nc,0\nd,1\n")
    (tmp_path / "sub.csv").write_text("isic_id,target\nd,0.9\nc,0.2\nb,0.6\na,0.1\n")
    files = str(tmp_path / "sub.csv"), str(tmp_path / "sol.csv"), "isic_id", "target"
    scores = score_files(*files, Config(metric="pauc", num_classes=2))
    assert scores == {"roc_auc": 1.0, "pauc": pytest.approx(0.2)}
    (tmp_path / "sol.csv").write_text("id,label\na,cat\nb,dog\nc,cow\n")
    (tmp_path / "sub.csv").write_text("id,label\na,cat dog cow\nb,cat dog cow\nc,cat dog pig\n")
    files = str(tmp_path / "sub.csv"), str(tmp_path / "sol.csv"), "id", "label"
    scores = score_files(*files, Config(metric="map_at_k", num_classes=4))
    assert scores == {"map_at_k": pytest.approx((1 + 1 / 2 + 0) / 3)}
    (tmp_path / "sol.csv").write_text("id,label\na,0\nb,4\nc,2\n")
    (tmp_path / "sub.csv").write_text("id,label\na,0\nb,3\nc,2\n")
    scores = score_files(*files, Config(metric="qwk", num_classes=5))
    assert scores["qwk"] == pytest.approx(kaggle_qwk(np.array([0, 4, 2]), np.array([0, 3, 2]), 5))


def test_grade_cuts_fitted_on_validation_beat_the_nearest_grade_of_a_biased_model():
    """A model that leans a grade low everywhere: the nearest expected grade scores a poor
    kappa; cuts fitted to the same records move down and score better, and never worse."""
    from sklearn.metrics import cohen_kappa_score

    from {{ cookiecutter.package }}.runtime.learning import grades

    rng = np.random.default_rng(0)
    truth = rng.integers(0, 5, 400)
    leaning = np.clip(truth - 0.7 + rng.normal(0, 0.35, 400), 0, 4)  # expected grade, biased
    probabilities = np.zeros((400, 5))
    low = np.floor(leaning).astype(int)
    probabilities[np.arange(400), low] = 1 - (leaning - low)
    probabilities[np.arange(400), np.minimum(low + 1, 4)] += leaning - low
    midpoints = [0.5, 1.5, 2.5, 3.5]
    cuts = grades.fitted(truth, probabilities)
    graded = Config(metric="qwk", num_classes=5)
    nearest = scored(graded, truth, probabilities, midpoints)
    fitted = scored(graded, truth, probabilities, cuts)
    assert fitted > nearest + 0.02 and cuts == sorted(cuts) and cuts[0] < 0.5
    assert grades.chosen(truth, probabilities) == cuts  # they beat the most probable grade too
    # Classes out of order (the right one most probable, the rest far off): the expected grade
    # mixes them, and the most probable grade is kept.
    mixed = np.full((400, 5), 0.05)
    mixed[np.arange(400), truth] = 0.45
    mixed[np.arange(400), (truth + 3) % 5] = 0.35
    assert grades.chosen(truth, mixed) is None
    predicted = grades.applied(probabilities, cuts)
    assert grades.kappa(truth, predicted, 5) == pytest.approx(
        cohen_kappa_score(truth, predicted, weights="quadratic")
    )


def test_a_roc_auc_project_of_many_classes_still_scores_a_labels_submission(tmp_path):
    """Only a binary target's one column is read as a probability."""
    from {{ cookiecutter.package }}.runtime.config import Config

    (tmp_path / "sol.csv").write_text("id,label\na,rust\nb,scab\n")
    (tmp_path / "sub.csv").write_text("id,label\na,rust\nb,rust\n")
    files = str(tmp_path / "sub.csv"), str(tmp_path / "sol.csv"), "id", "label"
    assert score_files(*files, Config(metric="roc_auc", num_classes=3)) == {
        "macro_f1": pytest.approx(1 / 3),
        "accuracy": 0.5,
    }


def test_a_probability_column_per_class_is_scored_with_log_loss_and_map_at_k_too(tmp_path):
    from sklearn.metrics import log_loss

    from {{ cookiecutter.package }}.runtime.config import Config

    (tmp_path / "sol.csv").write_text("id,label\na,rust\nb,healthy\nc,scab\n")
    (tmp_path / "sub.csv").write_text(
        "id,healthy,rust,scab\nc,0.2,0.5,0.3\nb,0.7,0.2,0.1\na,0.3,0.6,0.1\n"
    )
    files = str(tmp_path / "sub.csv"), str(tmp_path / "sol.csv"), "id", "label"
    scores = score_files(*files, Config(metric="log_loss", num_classes=3))
    truth, rows = [1, 0, 2], [[0.3, 0.6, 0.1], [0.7, 0.2, 0.1], [0.2, 0.5, 0.3]]
    assert scores["log_loss"] == pytest.approx(log_loss(truth, rows, labels=range(3)))
    scores = score_files(*files, Config(metric="map_at_k", map_k=2, num_classes=3))
    assert scores["map_at_k"] == pytest.approx((1 + 1 + 1 / 2) / 3)


def hms_kl_divergence(truth: np.ndarray, probabilities: np.ndarray) -> float:
    """HMS' metric as its code (kaggle-kl-div) computes it, on rows of shares: the
    predictions clipped to [1e-15, 1 - 1e-15], a class of no share adding 0, summed over the
    classes and averaged over the images."""
    clipped = np.clip(probabilities, 1e-15, 1 - 1e-15)
    terms = np.zeros_like(truth)
    given = truth != 0
    terms[given] = truth[given] * np.log(truth[given] / clipped[given])
    return float(np.average(terms.sum(axis=1)))


@pytest.mark.parametrize("seed", range(3))
def test_each_metric_of_values_or_shares_equals_its_reference(seed):
    """rmse and mae over every value, r2 each target's averaged, as scikit-learn's; weighted_r2 as Image2Biomass states it (one R²
    over every (image, target) pair, each weighed by its target's weight, the mean weighted
    too); kl_divergence as HMS' code, votes scaled to shares and a zero share adding 0."""
    from sklearn.metrics import mean_absolute_error, r2_score, root_mean_squared_error

    rng = np.random.default_rng(seed)
    truth = rng.normal([10, 0, 500], [3, 1, 100], (50, 3))
    values = truth + rng.normal(0, [1, 0.5, 60], truth.shape)
    every = truth.ravel(), values.ravel()  # one error over every value, as a long-format file
    assert score(truth, values, "rmse") == pytest.approx(root_mean_squared_error(*every))
    assert score(truth, values, "mae") == pytest.approx(mean_absolute_error(*every))
    assert score(truth, values, "r2") == pytest.approx(r2_score(truth, values))
    weights = np.array([0.1, 0.4, 0.5])
    w = np.broadcast_to(weights, truth.shape)
    mean = (w * truth).sum() / w.sum()
    expected = 1 - (w * (truth - values) ** 2).sum() / (w * (truth - mean) ** 2).sum()
    assert score(truth, values, "weighted_r2", weights="0.1,0.4,0.5") == pytest.approx(expected)
    assert score(truth[:, :1], values[:, :1], "weighted_r2") == pytest.approx(
        r2_score(truth[:, 0], values[:, 0])
    )
    votes = rng.integers(0, 4, (50, 6)) * (rng.random((50, 6)) < 0.6)
    votes[:, 0] += 1  # every row has a vote
    shares = votes / votes.sum(axis=1, keepdims=True)
    _, probabilities = random_case(rng, 6, 50)
    assert score(votes, probabilities, "kl_divergence") == pytest.approx(
        hms_kl_divergence(shares, probabilities)
    )


def test_a_file_of_values_is_scored_column_by_column_by_every_metric_of_values(tmp_path):
    """By the columns' names and the ids, whatever their order; the weights the run gave."""
    (tmp_path / "sol.csv").write_text("id,a,b\nx,1,10\ny,2,30\nz,3,20\n")
    (tmp_path / "sub.csv").write_text("b,id,a\n20,z,3\n10,x,2\n30,y,2\n")
    files = str(tmp_path / "sub.csv"), str(tmp_path / "sol.csv"), "id", "a,b"
    scores = score_files(*files, Config(metric="weighted_r2", num_classes=2, target_weights="1,0"))
    assert set(scores) == {"rmse", "mae", "r2", "weighted_r2"}
    assert scores["rmse"] == pytest.approx(np.sqrt(1 / 6))
    assert scores["weighted_r2"] == pytest.approx(1 - 1 / 2)  # of a alone: 1 / sum (a - 2)^2
