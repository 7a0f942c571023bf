"""A code competition as Kaggle runs it: the training notebook trains from the competition's
own images and CSV where Kaggle mounts them, and the inference notebook, rerun with the
hidden test set in place of the public one, writes every row of the sample it finds then.

Each notebook runs alone in an empty folder, in a real Jupyter kernel, offline, with the
inputs mounted read-only as Kaggle mounts them: by kind (/kaggle/input/competitions/<slug>,
notebooks/<owner>/<slug>, models/...) with kagglehub answered by a fake data proxy, and in
the older flat layout (/kaggle/input/<slug>) with no proxy answering.
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import PROJECT
from test_competitions import competition, image, write_csv
from test_kaggle import against_fake_kaggle, calls
from test_kernel import alone, errors, offline, text_of

from {{ cookiecutter.package }}.runtime.backbone_choices import BACKBONES
from {{ cookiecutter.package }}.runtime.config import Config, UserError
from {{ cookiecutter.package }}.runtime.platform import kaggle_inputs, paths

PACKAGE = "{{ cookiecutter.package }}"
NAME = "{{ cookiecutter.project }}"
SLUG = "cassava-leaf-disease-classification"
USER = "alice"
BACKBONE = "efficientnet-b0"  # a keras-hub preset (tests/presets.py makes a small one)
QUICK = [
    "--backbone", BACKBONE, "--weights", "imagenet", "--image-size", "32", "--epochs", "1",
    "--steps-per-epoch", "2", "--batch-size", "8", "--accelerator", "cpu",
]  # fmt: skip
# Each notebook sees its inputs read-only, as on Kaggle.
READ_ONLY = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'


def kernel(tmp_path: Path, *flags: str) -> Path:
    """`python -m PACKAGE kernel ...` on the laptop; returns the folder it wrote."""
    command = [sys.executable, "-m", PACKAGE, "kernel", "--competition", SLUG, *QUICK]
    command += ["--kaggle-user", USER, *flags]
    done = subprocess.run(
        command, check=False, cwd=PROJECT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return Path(flags[flags.index("--output") + 1])


def run_on_kaggle(notebook: Path, root: Path, mounts: dict, log: Path):
    """The notebook in a real kernel, offline, `root` mounted read-only at the mount root."""
    mounts_file = notebook.parent.parent / f"{notebook.parent.name}-mounts.json"
    mounts_file.write_text(json.dumps({"root": str(root), **mounts}))
    proxy = [sys.executable, str(PROJECT / "tests" / "fake_data_proxy.py"), str(mounts_file)]
    jupyter = Path(sys.executable).with_name("jupyter")
    return offline(
        "unshare", "-m", "sh", "-c", READ_ONLY, "sh", str(root),
        *proxy, str(log), jupyter, "execute", "--inplace", "--timeout=600", notebook.name,
        cwd=notebook.parent,
    )  # fmt: skip


def hidden_test_set(competition_folder: Path, count: int) -> pd.DataFrame:
    """test_images/ and sample_submission.csv swapped for `count` images it has never seen,
    the sample in no sorted order; returns the sample."""
    shutil.rmtree(competition_folder / "test_images")
    (competition_folder / "test_images").mkdir()
    rng = np.random.default_rng(1)
    names = [f"{900000 + number * 13}.jpg" for number in range(count)]
    for number, name in enumerate(names):
        classes = [["healthy", "rust", "scab"][number % 3]]
        image(competition_folder / "test_images" / name, classes, rng)
    order = [names[index] for index in rng.permutation(count)]
    sample = competition_folder / "sample_submission.csv"
    write_csv(sample, ["image_id", "label"], [(name, 0) for name in order])
    return pd.read_csv(sample, dtype=str)


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["by kind, with the data proxy", "flat, no proxy"])
def test_a_code_competition_trains_on_kaggle_then_its_rerun_predicts_the_hidden_test_set(
    tmp_path, preset, layout
):
    by_kind = layout.startswith("by kind")
    root = tmp_path / "input"  # what Kaggle mounts at /kaggle/input
    where = {
        "competitions": f"competitions/{SLUG}" if by_kind else SLUG,
        "notebooks": f"notebooks/{USER}/{NAME}" if by_kind else NAME,
        "models": "models/" + BACKBONES[BACKBONE].handle
        if by_kind
        else BACKBONES[BACKBONE].handle.split("/", 1)[1],
    }
    labels = [name for name in ("0", "1", "2") for _ in range(12)]
    data = competition(
        root / where["competitions"], labels, ["image_id", "label"], ["image_id", "label"]
    )
    shutil.copytree(preset(BACKBONE), root / where["models"])
    mounts = {
        "proxy": by_kind,
        "competitions": {SLUG: where["competitions"]},
        "models": {BACKBONES[BACKBONE].handle: where["models"]},
    }

    # The training notebook: only the competition (and the backbone) attached.
    training = kernel(
        tmp_path, "--output", str(tmp_path / "kernel"), "--output-dir", str(tmp_path / "working")
    )
    metadata = json.loads((training / "kernel-metadata.json").read_text())
    assert metadata["competition_sources"] == [SLUG] and metadata["dataset_sources"] == []
    notebook = alone(training / f"{NAME}.ipynb", tmp_path / "train-run")
    done = run_on_kaggle(notebook, root, mounts, tmp_path / "train-log.json")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    assert not errors(notebook)
    said = text_of(notebook)
    how = "Kaggle's data proxy, through kagglehub" if by_kind else "flat mount layout"
    assert f"kaggle:competitions/{SLUG}: {root / where['competitions']} (" in said and how in said
    assert "problems: none, ready to train" in said
    working = tmp_path / "working"
    public = pd.read_csv(data / "sample_submission.csv", dtype=str)
    written = pd.read_csv(working / "submission.csv", dtype=str)
    assert written["image_id"].tolist() == public["image_id"].tolist()
    for left in ("model.weights.h5", "model.json", "folds.csv", "backbone/config.json"):
        assert (working / "fold0" / left).is_file(), left  # what inference needs, and no more

    # Kaggle's rerun: the training notebook's output mounted, the hidden test set in place.
    shutil.copytree(working, root / where["notebooks"])
    hidden = hidden_test_set(data, 120)
    mounts["notebooks"] = {f"{USER}/{NAME}": where["notebooks"]}
    flags = ["--inference", "--output", str(tmp_path / "kernel-inference")]
    inference = kernel(tmp_path, *flags, "--output-dir", str(tmp_path / "rerun"))
    notebook = alone(inference / f"{NAME}.ipynb", tmp_path / "inference-run")
    log = tmp_path / "inference-log.json"
    done = run_on_kaggle(notebook, root, mounts, log)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    assert not errors(notebook)
    said = text_of(notebook)
    assert f"kaggle:notebooks/{USER}/{NAME}: {root / where['notebooks']} (" in said
    assert "images/s here; the 120 images of this run take about" in said
    written = pd.read_csv(tmp_path / "rerun" / "submission.csv", dtype=str)
    assert written.columns.tolist() == ["image_id", "label"]
    assert written["image_id"].tolist() == hidden["image_id"].tolist()  # every row, in order
    assert set(written["label"]) <= {"0", "1", "2"}
    asked = json.loads(log.read_text())
    if by_kind:  # the notebook's output was found through the proxy; no model was attached
        refs = [request["json"] for request in asked]
        assert {"kernelRef": {"OwnerSlug": USER, "KernelSlug": NAME}} in refs
        assert not [ref for ref in refs if "modelRef" in ref]
    else:
        assert asked == []


def test_the_inference_push_attaches_the_training_notebook_offline_without_a_tpu(tmp_path):
    """What the real client sends Kaggle for the inference notebook: the competition and the
    training notebook's output, internet off, GPU, no model (the trained run carries it)."""
    folder = str(tmp_path / "kernel-inference")
    result = against_fake_kaggle(
        tmp_path,
        [
            ["kernel", "--inference", "--competition", SLUG, "--output", folder],
            ["kaggle", "push", "--kernel-dir", folder],
        ],
    )
    made, pushed = result["steps"]
    assert made["code"] == 0 and pushed["code"] == 0, result["steps"]
    (request,) = calls(result, "kernels.KernelsApiService/SaveKernel")
    sent = request["json"]
    assert sent["slug"] == f"{USER}/{NAME}-inference"
    assert sent["kernelDataSources"] == [f"{USER}/{NAME}"]
    assert sent["competitionDataSources"] == [SLUG]
    assert sent["enableInternet"] is False and sent["enableTpu"] is False
    assert (sent["machineShape"], sent["enableGpu"]) == ("NvidiaTeslaT4", True)
    assert not sent.get("modelDataSources")
    cells = [cell["source"] for cell in json.loads(sent["text"])["cells"]]
    cells = ["".join(cell) if isinstance(cell, list) else cell for cell in cells]
    shown = "".join(cell for cell in cells if not cell.startswith("%%writefile"))
    assert f"kaggle:notebooks/{USER}/{NAME}" in shown and "predict(cfg, found" in shown
    assert "train(cfg, found" not in shown  # its cells train nothing


def test_an_input_is_found_in_either_layout_and_a_missing_one_lists_what_is_attached(
    tmp_path, monkeypatch
):
    """In a notebook whose data proxy does not answer: both layouts, then what is there."""
    monkeypatch.setenv("KAGGLE_KERNEL_RUN_TYPE", "Interactive")
    monkeypatch.delenv("KAGGLE_DATA_PROXY_URL", raising=False)
    monkeypatch.setattr(paths, "KAGGLE_INPUT", tmp_path)
    kaggle_inputs.found.cache_clear()
    (tmp_path / "competitions" / SLUG).mkdir(parents=True)
    (tmp_path / "datasets" / "bob" / "extra").mkdir(parents=True)
    (tmp_path / NAME).mkdir()  # a notebook's output, mounted the older way
    assert paths.resolve_data_dir(Config(competition=SLUG)) == (
        str(tmp_path / "competitions" / SLUG),
        f"the competition {SLUG}, found in Kaggle's by kind mount layout",
    )
    assert paths.local(f"kaggle:notebooks/{USER}/{NAME}/fold0") == str(tmp_path / NAME / "fold0")
    with pytest.raises(UserError) as caught:
        paths.resolve_data_dir(Config(competition="digit-recognizer"))
    assert str(caught.value) == (
        "kaggle:competitions/digit-recognizer is not attached to this notebook: not at "
        f"{tmp_path}/competitions/digit-recognizer or {tmp_path}/digit-recognizer; {tmp_path} "
        f"holds competitions/{SLUG}, datasets/bob/extra, {NAME}. Add it in the notebook's "
        "Input panel (or kernel-metadata.json)"
    )
    with pytest.raises(UserError, match="'kaggle:datasets/bob' is not a Kaggle input; give one"):
        paths.local("kaggle:datasets/bob")
