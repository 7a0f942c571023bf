"""submission.csv follows the sample row for row, and a failed write loses nothing."""

import pytest

from {{ cookiecutter.package }}.config import UserError
from {{ cookiecutter.package }}.files import written_whole
from {{ cookiecutter.package }}.submission import arrange, read_sample, write


def sample(text: str):
    return read_sample(text.encode(), "sample.csv", "id", "label")


def test_rows_follow_the_sample_order_not_the_prediction_order(tmp_path):
    rows = arrange(["b", "c", "a"], [1, 2, 0], sample("id,label\nc,0\na,0\nb,0\n"))
    write(tmp_path / "submission.csv", rows)
    assert (tmp_path / "submission.csv").read_text().splitlines() == [
        "id,label",
        "c,2",
        "a,0",
        "b,1",
    ]


def test_a_sample_with_the_label_column_first_keeps_that_order(tmp_path):
    write(tmp_path / "s.csv", arrange(["y", "x"], [4, 5], sample("label,id\n0,x\n0,y\n")))
    assert (tmp_path / "s.csv").read_text().splitlines() == ["label,id", "5,x", "4,y"]


def test_ids_stay_text_and_a_byte_order_mark_is_read_past(tmp_path):
    """Spreadsheet programs save CSV with a BOM; ids like 007 must not become 7."""
    marked = read_sample("\ufeffid,label\n007,0\n10,0\n".encode(), "sample.csv", "id", "label")
    write(tmp_path / "s.csv", arrange(["10", "007"], [3, 1], marked))
    assert (tmp_path / "s.csv").read_text().splitlines() == ["id,label", "007,1", "10,3"]


def test_without_a_sample_rows_are_sorted_by_id(tmp_path):
    write(tmp_path / "s.csv", arrange(["b", "a"], [1, 0], None))
    assert (tmp_path / "s.csv").read_text().splitlines() == ["id,label", "a,0", "b,1"]


@pytest.mark.parametrize(
    "ids, text, problem",
    [
        (["a", "a", "b"], "id,label\na,0\nb,0\n", "occur more than once"),
        (["a"], "id,label\na,0\nb,0\n", "1 sample ids have no test record"),
        (["a", "b", "z"], "id,label\na,0\nb,0\n", "1 test ids are not in the sample"),
    ],
    ids=["duplicate", "missing", "unexpected"],
)
def test_ids_that_disagree_with_the_sample_are_rejected(ids, text, problem):
    with pytest.raises(UserError, match=problem):
        arrange(ids, [0] * len(ids), sample(text))


def test_a_rejected_submission_leaves_the_previous_file_intact(tmp_path):
    path = tmp_path / "submission.csv"
    write(path, arrange(["a"], [1], None))
    before = path.read_text()
    with pytest.raises(UserError):
        write(path, arrange(["a"], [2], sample("id,label\na,0\nb,0\n")))
    with pytest.raises(RuntimeError), written_whole(path) as temporary:
        temporary.write_text("id,label\na,")  # a crash half way through writing
        raise RuntimeError("killed")
    assert path.read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["submission.csv"]


def test_a_sample_with_other_columns_names_them_and_the_fields():
    with pytest.raises(UserError, match=r"sample.csv has columns \['image_id', 'labels'\]"):
        sample("image_id,labels\nx,0\n")
    with pytest.raises(UserError, match="set Config.id_column / --id-column and Config.label"):
        sample("image_id,labels\nx,0\n")
