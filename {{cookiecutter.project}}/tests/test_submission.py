"""submission.csv follows the sample row for row, and a failed write loses nothing."""

import pytest

from {{ cookiecutter.package }}.config import UserError
from {{ cookiecutter.package }}.files import written_whole
from {{ cookiecutter.package }}.submission import arrange, read_sample, write


def test_rows_follow_the_sample_order_not_the_prediction_order(tmp_path):
    rows = arrange(["b", "c", "a"], [1, 2, 0], sample_ids=["c", "a", "b"])
    write(tmp_path / "submission.csv", ["id", "label"], "id", rows)
    assert (tmp_path / "submission.csv").read_text().splitlines() == [
        "id,label",
        "c,2",
        "a,0",
        "b,1",
    ]


def test_a_sample_with_the_label_column_first_keeps_that_order(tmp_path):
    columns, ids = read_sample("label,id\n0,x\n0,y\n", "sample.csv", "id", "label")
    write(tmp_path / "s.csv", columns, "id", arrange(["y", "x"], [4, 5], ids))
    assert (tmp_path / "s.csv").read_text().splitlines() == ["label,id", "5,x", "4,y"]


@pytest.mark.parametrize(
    "ids, sample, problem",
    [
        (["a", "a", "b"], ["a", "b"], "occur more than once"),
        (["a"], ["a", "b"], "1 sample ids have no test record"),
        (["a", "b", "z"], ["a", "b"], "1 test ids are not in the sample"),
    ],
    ids=["duplicate", "missing", "unexpected"],
)
def test_ids_that_disagree_with_the_sample_are_rejected(ids, sample, problem):
    with pytest.raises(UserError, match=problem):
        arrange(ids, [0] * len(ids), sample)


def test_a_rejected_submission_leaves_the_previous_file_intact(tmp_path):
    path = tmp_path / "submission.csv"
    write(path, ["id", "label"], "id", [("a", 1)])
    before = path.read_text()
    with pytest.raises(UserError):
        write(path, ["id", "label"], "id", arrange(["a"], [2], ["a", "b"]))
    with pytest.raises(RuntimeError), written_whole(path) as temporary:
        temporary.write_text("id,label\na,")  # a crash half way through writing
        raise RuntimeError("killed")
    assert path.read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["submission.csv"]


def test_a_sample_with_other_columns_names_them():
    with pytest.raises(UserError, match=r"sample.csv has columns \['image_id', 'labels'\]"):
        read_sample("image_id,labels\nx,0\n", "sample.csv", "id", "label")
