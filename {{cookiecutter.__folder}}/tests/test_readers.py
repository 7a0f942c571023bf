"""The readers of files a user can edit, fed generated input: whatever the bytes, each ends in
what it read or a UserError that names the file, never in a traceback."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from {{ cookiecutter.package }}.runtime.config import Config
from {{ cookiecutter.package }}.runtime.data.manifest import with_manifest
from {{ cookiecutter.package }}.runtime.data.tables import read_csv
from {{ cookiecutter.package }}.runtime.errors import UserError
from {{ cookiecutter.package }}.runtime.outputs import fitted, run_record
from {{ cookiecutter.package }}.runtime.outputs.submission import layout, read_sample
from {{ cookiecutter.package }}.runtime.platform.files import MANIFEST
from {{ cookiecutter.package }}.runtime.platform.paths import find
from {{ cookiecutter.package }}.tools.kaggle_api import check_key_file, metadata_id

pytestmark = pytest.mark.quick  # one unit alone: make test-quick runs it


QUICK = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Values JSON can hold, NaN and infinities included (Python's json reads and writes them).
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
# What a CSV is made of: separators, quotes, line ends, a byte-order mark, ids and numbers.
CSV = st.lists(
    st.sampled_from(
        [",", ";", "\t", '"', "\n", "\r\n", "\ufeff", "id", "label", "0", "1", "2", "a", "0.5", " "]
    ),
    max_size=40,
).map("".join)


def read_or_refused(where: str, read, *args):
    """What `read(*args)` returns, or None where it refused with a UserError naming the file."""
    try:
        return read(*args)
    except UserError as error:
        assert where in str(error), error
        return None


@QUICK
@given(st.binary(max_size=200) | CSV.map(str.encode))
def test_the_sample_reader_reads_or_refuses_any_bytes(data):
    """A sample submission, and the columns predict would write from it for 3 classes."""
    sample = read_or_refused("sample.csv", read_sample, data, "sample.csv")
    if sample is not None:
        read_or_refused("sample.csv", layout, Config(), {}, sample, 3, None)


@QUICK
@given(
    st.binary(max_size=100)
    | JSON.map(json.dumps).map(str.encode)
    | st.lists(JSON, max_size=5).map(lambda cuts: json.dumps({"thresholds": cuts}).encode())
)
def test_the_thresholds_reader_reads_or_refuses_any_bytes(data):
    """Read, thresholds are one number in 0..1 per class."""
    cuts = read_or_refused(
        "thresholds.json", fitted.read_thresholds, data, "thresholds.json", 3, "abc"
    )
    if cuts is not None:
        assert len(cuts) == 3 and all(0 <= cut <= 1 for cut in cuts)


# A manifest as `records` writes it, each field either as written or any JSON value.
VALID = {
    "folds": 2, "num_classes": 3, "classes": ["a", "b", "c"], "multi_label": False,
    "id_column": "id", "label_column": "label", "test": {"records": 4},
    "train": {"per_fold": {"0": {"records": 5, "classes": {"0": 2}}}},
}  # fmt: skip
MANIFESTS = st.fixed_dictionaries(
    {}, optional={field: st.just(value) | JSON for field, value in VALID.items()}
).map(lambda fields: json.dumps(fields).encode())


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("data")


@QUICK
@given(data=st.binary(max_size=100) | JSON.map(json.dumps).map(str.encode) | MANIFESTS)
def test_the_manifest_reader_reads_or_refuses_any_bytes(data_dir, data):
    (data_dir / MANIFEST).write_bytes(data)
    cfg, sources = Config(data_dir=str(data_dir)), {"data_dir": "flag"}
    found = read_or_refused(MANIFEST, with_manifest, cfg, sources, find(cfg, sources))
    if found is not None:
        cfg, sources, manifest = found
        assert cfg.num_classes == manifest["num_classes"]
        assert sources["num_classes"] == "manifest"


@pytest.mark.parametrize(
    "name, read",
    [
        ("model.json", run_record.read_record),
        ("kernel-metadata.json", metadata_id),
        ("kaggle.json", check_key_file),
    ],
    ids=["model.json", "kernel-metadata.json", "kaggle.json"],
)
@QUICK
@given(data=st.binary(max_size=60) | JSON.map(json.dumps).map(str.encode))
def test_the_run_and_kaggle_json_readers_read_or_refuse_any_bytes(data_dir, name, read, data):
    """The trained run's record, a kernel's metadata and Kaggle's API key, as a hand left them."""
    (data_dir / name).write_bytes(data)
    read_or_refused(name, read, data_dir / name)


def test_a_training_csv_a_spreadsheet_saved_with_semicolons_is_read_by_its_columns(tmp_path):
    """Not one column named "image_id;label", which asked for --id-column."""
    (tmp_path / "train.csv").write_text("image_id;label\n007.jpg;rust\n")
    rows = read_csv(str(tmp_path / "train.csv"))
    assert list(rows.columns) == ["image_id", "label"] and rows["image_id"][0] == "007.jpg"
