"""submission.csv as the sample asks for it: its rows, columns and id spelling; a failed
write loses nothing."""

import numpy as np
import pytest

from {{ cookiecutter.package }}.runtime.config import Config
from {{ cookiecutter.package }}.runtime.errors import UserError
from {{ cookiecutter.package }}.runtime.outputs.submission import (
    arrange,
    layout,
    read_sample,
    write,
)
from {{ cookiecutter.package }}.runtime.platform.files import written_whole

pytestmark = pytest.mark.quick  # one unit alone: make test-quick runs it


def one_hot(classes, width=3):
    """Probabilities that pick these classes."""
    return np.eye(width)[classes] * 0.8 + 0.2 / width


def submit(ids, probabilities, text=None, names=None, thresholds=None, **fields):
    """The rows predict writes for these ids and probabilities, given the sample's text."""
    cfg = Config(**fields)
    sources = dict.fromkeys(fields, "notebook")  # as the notebook's config cell gives them
    sample = read_sample(text.encode(), "sample.csv") if text is not None else None
    shape = layout(cfg, sources, sample, probabilities.shape[1], names)
    return arrange(ids, shape.values(probabilities, names, thresholds), sample, shape)


def lines(rows, tmp_path):
    write(tmp_path / "submission.csv", rows)
    return (tmp_path / "submission.csv").read_text().splitlines()


def test_rows_follow_the_sample_order_not_the_prediction_order(tmp_path):
    rows = submit(["b", "c", "a"], one_hot([1, 2, 0]), "id,label\nc,0\na,0\nb,0\n")
    assert lines(rows, tmp_path) == ["id,label", "c,2", "a,0", "b,1"]


def test_a_sample_with_the_label_column_first_keeps_that_order(tmp_path):
    rows = submit(["y", "x"], one_hot([1, 2]), "label,id\n0,x\n0,y\n")
    assert lines(rows, tmp_path) == ["label,id", "2,x", "1,y"]


def test_ids_stay_text_and_a_byte_order_mark_is_read_past(tmp_path):
    """Spreadsheet programs save CSV with a BOM; ids like 007 must not become 7."""
    rows = submit(["10", "007"], one_hot([2, 1]), "\ufeffid,label\n007,0\n10,0\n")
    assert lines(rows, tmp_path) == ["id,label", "007,1", "10,2"]


@pytest.mark.parametrize("separator", [";", "\t"])
def test_a_sample_saved_by_a_spreadsheet_with_semicolons_or_tabs_is_read_by_its_columns(
    separator, tmp_path
):
    """Some locales' spreadsheets save CSV with semicolons; the submission is written with
    commas, as Kaggle reads it."""
    text = f"image_id{separator}label\nb{separator}0\na{separator}0\n"
    assert lines(submit(["a", "b"], one_hot([1, 2]), text), tmp_path) == [
        "image_id,label", "b,2", "a,1",
    ]  # fmt: skip


def test_without_a_sample_rows_are_sorted_by_id(tmp_path):
    assert lines(submit(["b", "a"], one_hot([1, 0])), tmp_path) == ["id,label", "a,0", "b,1"]


@pytest.mark.parametrize(
    "ids, text, problem",
    [
        (["a", "a", "b"], "id,label\na,0\nb,0\n", "occur more than once in the test records"),
        (["a"], "id,label\na,0\nb,0\n", "1 sample ids have no test record"),
        (["a", "b", "z"], "id,label\na,0\nb,0\n", "1 test ids are not in the sample"),
        (["a", "b"], "id,label\na,0\nb,0\na,0\n", r"sample.csv: 1 ids occur more than once"),
    ],
    ids=["duplicate", "missing", "unexpected", "duplicate-in-sample"],
)
def test_ids_that_disagree_with_the_sample_are_rejected(ids, text, problem):
    with pytest.raises(UserError, match=problem):
        submit(ids, one_hot([0] * len(ids)), text)


def test_the_id_column_is_the_samples_own_when_none_is_given(tmp_path):
    """A Cassava-style sample (image_id,label) needs no id flag."""
    rows = submit(["t1.jpg", "t0.jpg"], one_hot([1, 2]), "image_id,label\nt0.jpg,4\nt1.jpg,4\n")
    assert lines(rows, tmp_path) == ["image_id,label", "t0.jpg,2", "t1.jpg,1"]


def test_an_id_column_given_that_the_sample_lacks_is_refused():
    with pytest.raises(UserError, match=r"not 'id' \(Config.id_column, notebook\)"):
        submit(["t0"], one_hot([1]), "image_id,label\nt0,0\n", id_column="id")


@pytest.mark.parametrize(
    "records, sample, written",
    [(["t0", "t1"], ["t0.jpg", "t1.jpg"], "t0.jpg"), (["t0.jpg", "t1.jpg"], ["t0", "t1"], "t0")],
    ids=["sample-keeps-extensions", "sample-drops-them"],
)
def test_ids_are_written_as_the_sample_spells_them(records, sample, written, tmp_path):
    text = "image_id,label\n" + "".join(f"{key},0\n" for key in sample)
    rows = submit(records, one_hot([2, 1]), text)
    assert lines(rows, tmp_path)[1] == f"{written},2"


def test_probability_columns_follow_the_class_names_in_the_samples_order(tmp_path):
    text = "image_id,rust,healthy,scab\na,0.25,0.25,0.5\n"
    probabilities = np.array([[0.7, 0.2, 0.1]])  # healthy, rust, scab
    rows = submit(["a"], probabilities, text, names=["healthy", "rust", "scab"])
    assert lines(rows, tmp_path) == ["image_id,rust,healthy,scab", "a,0.2,0.7,0.1"]


def test_probability_columns_numbered_in_another_order_are_matched_by_number(tmp_path):
    """A sample whose columns are class numbers in another order (id,2,1,0) gets class 2's
    probability under 2, not class 0's by position."""
    probabilities = np.array([[0.7, 0.2, 0.1]])
    rows = submit(["a"], probabilities, "id,2,1,0\na,0,0,0\n")
    assert lines(rows, tmp_path) == ["id,2,1,0", "a,0.1,0.2,0.7"]


@pytest.mark.parametrize(
    "header, names, problem",
    [
        ("id,0,1,2,3", None, r"column\(s\) '3': no class of the model"),
        ("id,0,1", None, r"class\(es\) '2': no column"),
        ("id,healthy,rust,blight", ["healthy", "rust", "scab"], "'blight': no class.*'scab': no"),
        ("id,x,y,z", None, "'x', 'y', 'z': no class of the model"),
    ],
    ids=["one-too-many", "one-too-few", "a-name-the-classes-lack", "unnamed-classes"],
)
def test_probability_columns_that_are_not_the_classes_are_refused_by_name(header, names, problem):
    """Never matched by position: the column at fault is named."""
    with pytest.raises(UserError, match=problem):
        submit(["a"], one_hot([0]), f"{header}\na{',0' * header.count(',')}\n", names=names)


def test_numbers_written_for_named_classes_say_which_number_is_which():
    """Names in the training CSV, numbers in the sample: the mapping is printed, not guessed
    silently."""
    names = ["healthy", "rust", "scab"]
    for text in ("id,label\na,0\n", "id,2,0,1\na,0,0,0\n"):
        sample = read_sample(text.encode(), "sample.csv")
        shape = layout(Config(), {}, sample, 3, names)
        assert "0 = healthy, 1 = rust, 2 = scab" in shape.numbering(names)
    shape = layout(Config(), {}, read_sample(b"id,label\na,rust\n", "s.csv"), 3, names)
    assert shape.numbering(names) == ""


def test_several_labels_per_image_are_space_separated_names_above_their_thresholds(tmp_path):
    probabilities = np.array([[0.9, 0.6, 0.1], [0.2, 0.3, 0.35]])
    rows = submit(
        ["a", "b"], probabilities, "image,labels\na,healthy\nb,healthy\n",
        names=["healthy", "rust", "scab"], thresholds=[0.5, 0.5, 0.4],
    )  # fmt: skip
    # b has no class above its threshold: it gets its most probable one
    assert lines(rows, tmp_path) == ["image,labels", "a,healthy rust", "b,scab"]


def test_class_numbers_are_written_where_the_sample_has_numbers(tmp_path):
    """Named classes (for the pictures) still submit numbers when the sample's labels are."""
    names = ["healthy", "rust", "scab"]
    assert lines(submit(["a"], one_hot([2]), "id,label\na,0\n", names=names), tmp_path)[1] == "a,2"
    assert lines(submit(["a"], one_hot([2]), "id,label\na,rust\n", names=names), tmp_path)[1] == (
        "a,scab"
    )


def test_a_rejected_submission_leaves_the_previous_file_intact(tmp_path):
    path = tmp_path / "submission.csv"
    write(path, submit(["a"], one_hot([1])))
    before = path.read_text()
    with pytest.raises(UserError):
        write(path, submit(["a"], one_hot([2]), "id,label\na,0\nb,0\n"))
    with pytest.raises(RuntimeError), written_whole(path) as temporary:
        temporary.write_text("id,label\na,")  # a crash half way through writing
        raise RuntimeError("killed")
    assert path.read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["submission.csv"]


def test_a_binary_target_scored_on_probabilities_submits_the_positive_probability(tmp_path):
    """ISIC 2024's sample (isic_id,target): one probability per image, the second class's."""
    probabilities = np.array([[0.9, 0.1], [0.25, 0.75]])
    sample = "isic_id,target\nb,0.3\na,0.3\n"
    for metric in ("pauc", "roc_auc", "log_loss"):
        rows = submit(["a", "b"], probabilities, sample, metric=metric, num_classes=2)
        assert lines(rows, tmp_path) == ["isic_id,target", "b,0.75", "a,0.1"], metric
    # Scored on the answers, the same sample gets the class.
    rows = submit(["a", "b"], probabilities, sample, metric="accuracy", num_classes=2)
    assert lines(rows, tmp_path) == ["isic_id,target", "b,1", "a,0"]


def test_map_at_k_submits_the_k_most_probable_classes_most_probable_first(tmp_path):
    probabilities = np.array([[0.1, 0.5, 0.15, 0.25], [0.4, 0.3, 0.2, 0.1]])
    names = ["cat", "dog", "cow", "pig"]
    rows = submit(
        ["a", "b"], probabilities, "id,label\na,cat\nb,cat\n", names=names, metric="map_at_k",
        num_classes=4,
    )  # fmt: skip
    assert lines(rows, tmp_path) == ["id,label", "a,dog pig cow", "b,cat dog cow"]
    rows = submit(["a"], probabilities[:1], None, metric="map_at_k", map_k=2, num_classes=4)
    assert lines(rows, tmp_path) == ["id,label", "a,1 3"]


def test_a_binary_column_named_after_a_class_gets_that_class_probability(tmp_path):
    """Deepfake-style: classes FAKE and REAL (class order FAKE first), a column `FAKE`."""
    probabilities = np.array([[0.8, 0.2], [0.1, 0.9]])
    rows = submit(
        ["a", "b"], probabilities, "id,FAKE\na,0.5\nb,0.5\n", names=["FAKE", "REAL"],
        metric="log_loss", num_classes=2,
    )  # fmt: skip
    assert lines(rows, tmp_path) == ["id,FAKE", "a,0.8", "b,0.1"]
