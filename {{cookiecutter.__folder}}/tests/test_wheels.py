"""`kaggle wheels` and what `kernel` and the notebook's install cell do with the wheels: what
Kaggle's image lacks for the backbone goes up as a private dataset of wheels, which both
notebooks attach and install from with the internet off. tests/test_code_competition.py runs
Kaggle's rerun of such a notebook; these are the decisions and refusals around it."""

import json
import shutil
import sys

import pytest
from test_kaggle import against_fake_kaggle, calls
from test_versions import DINOV3_ON_OLDER, installed_as, run_install_cell

from {{ cookiecutter.package }}.runtime.config import Config
from {{ cookiecutter.package }}.runtime.errors import UserError
from {{ cookiecutter.package }}.runtime.platform import kaggle_inputs, paths
from {{ cookiecutter.package }}.tools import kaggle_api, kernel, notebook

DATASET = "alice/{{ cookiecutter.package | replace('_', '-') }}-wheels"
# An image whose keras-hub is older than DINOv3's, on the Keras Kaggle's image carries.
OLDER = {"keras": "3.13.2", "keras-hub": "0.22.2"}
DINOV3 = Config(backbone="dinov3-small", image_size=224)


def pushed_wheels(folder, requirement="keras-hub==0.29.1"):
    """wheels/ as `kaggle wheels` leaves it after a push (the wheel's bytes do not matter)."""
    folder.mkdir()
    name, _, version = requirement.partition("==")
    (folder / f"{name.replace('-', '_')}-{version}-py3-none-any.whl").write_bytes(b"PK")
    (folder / "requirements.txt").write_text(f"{requirement}\n")
    (folder / "dataset-metadata.json").write_text(json.dumps({"id": DATASET}))


def test_with_nothing_lacking_nothing_is_downloaded_or_pushed(tmp_path, monkeypatch, capsys):
    """Kaggle's image (platforms/kaggle-gpu.txt) builds EfficientNet-B0: said, before any
    sign-in, and no folder written."""
    monkeypatch.chdir(tmp_path)
    assert kaggle_api.act("wheels", Config(backbone="efficientnet-b0")) == 0
    said = capsys.readouterr().out
    assert said == (
        "Kaggle's image (platforms/kaggle-gpu.txt) builds efficientnet-b0: no wheels to push, "
        "and `kernel` attaches none\n"
    )
    assert list(tmp_path.iterdir()) == []


def test_a_file_it_did_not_write_in_the_wheels_folder_is_refused_and_kept(tmp_path, monkeypatch):
    """The folder goes to Kaggle whole: another file there is named, and left where it is."""
    monkeypatch.chdir(tmp_path)
    pushed_wheels(tmp_path / "wheels")
    (tmp_path / "wheels" / "notes.txt").write_text("mine")
    with pytest.raises(UserError) as refused:
        kaggle_api.push_wheels(None, {"keras-hub==0.29.1": "why"}, "")  # before signing in
    assert str(refused.value) == (
        "wheels/notes.txt is in wheels/, which `kaggle wheels` pushes whole, and it did not "
        "write it: move it out, then run `kaggle wheels` again"
    )
    assert (tmp_path / "wheels" / "notes.txt").read_text() == "mine"
    assert len(list((tmp_path / "wheels").iterdir())) == 4


def test_a_wheel_pip_cannot_download_is_one_line_and_nothing_is_pushed(tmp_path):
    """pip, offline, with an index that has no keras-hub: its reason in one line, no dataset."""
    (tmp_path / "index").mkdir()
    result = against_fake_kaggle(
        tmp_path,
        [["kaggle", "wheels", "--backbone", "dinov3-small", "--image-size", "224"]],
        image=OLDER,
        env={"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(tmp_path / "index")},
    )
    (step,) = result["steps"]
    assert step["code"] == 2, step
    assert step["err"].startswith(
        "error: pip could not download keras-hub==0.29.1 for Python "
        f"{notebook.image_python()} on manylinux_2_28_x86_64 (ERROR: No matching distribution "
        "found for keras-hub==0.29.1); check that pip reaches its index"
    ), step
    assert step["err"].count("\n") == 1, step
    assert not calls(result, "CreateDataset") and not calls(result, "StartBlobUpload")
    assert list((tmp_path / "wheels").iterdir()) == []  # no wheel, no metadata


def test_kernel_attaches_the_pushed_wheels_to_both_notebooks_else_refuses_the_rerun_one(
    tmp_path, monkeypatch, capsys
):
    """Without the wheels, the training notebook installs keras-hub with its internet on and
    the inference notebook, rerun offline, is refused, saying to push them; with them pushed
    for this keras-hub, both attach the dataset, keep the internet off and name it to the
    install cell; wheels of another keras-hub are none."""
    monkeypatch.setattr(notebook, "image_packages", lambda: OLDER)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UserError) as refused:
        kernel.write_kernel(DINOV3, "gpu", "alice", "infer", inference=True)
    assert str(refused.value).startswith(
        f"on Kaggle's image (platforms/kaggle-gpu.txt), {DINOV3_ON_OLDER}: keras-hub==0.29.1, "
        "and a code competition reruns this notebook offline: push the wheels first with "
        "`kaggle wheels --backbone dinov3-small` in this folder, then write the notebook again"
    )
    assert not (tmp_path / "infer").exists()
    training = kernel.write_kernel(DINOV3, "gpu", "alice", "train")
    metadata = json.loads((training / "kernel-metadata.json").read_text())
    assert metadata["enable_internet"] is True and metadata["dataset_sources"] == []

    pushed_wheels(tmp_path / "wheels", "keras-hub==0.26.0")  # not the keras-hub needed
    with pytest.raises(UserError, match="push the wheels first"):
        kernel.write_kernel(DINOV3, "gpu", "alice", "infer", inference=True)
    shutil.rmtree(tmp_path / "wheels")
    pushed_wheels(tmp_path / "wheels")
    capsys.readouterr()
    for folder, inference in (("train-offline", False), ("infer", True)):
        made = kernel.write_kernel(DINOV3, "gpu", "alice", folder, inference=inference)
        metadata = json.loads((made / "kernel-metadata.json").read_text())
        assert metadata["enable_internet"] is False, folder
        assert metadata["dataset_sources"] == [DATASET], folder
        script = (made / f"{kernel.PROJECT}.py").read_text()
        assert f'WHEELS = "kaggle:datasets/{DATASET}"' in script, folder
    said = capsys.readouterr().out
    assert f"attaching the wheels dataset {DATASET} (" in said


def test_the_install_cell_installs_from_the_attached_wheels_with_no_index(
    tmp_path, monkeypatch, capsys
):
    """Found where Kaggle mounts the dataset (by kind, or flat), installed with pip
    --no-index from there, and said; a backbone the image builds installs nothing."""
    installed_as(monkeypatch, keras_hub="0.22.2", keras="3.13.2")
    monkeypatch.setattr(paths, "KAGGLE_INPUT", tmp_path)
    monkeypatch.delenv("KAGGLE_DATA_PROXY_URL", raising=False)
    attached = f"kaggle:datasets/{DATASET}"
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--find-links"]
    for mounted in (tmp_path / "datasets" / DATASET, tmp_path / DATASET.split("/")[1]):
        mounted.mkdir(parents=True)
        kaggle_inputs.found.cache_clear()
        ran = run_install_cell(DINOV3, monkeypatch, attached)
        assert ran == [[*pip, str(mounted), "--no-deps", "keras-hub==0.29.1"]]
        said = f"{DINOV3_ON_OLDER}: installing keras-hub 0.29.1 from the wheels in {mounted} "
        assert said + f"({attached})" in capsys.readouterr().out
        mounted.rmdir()
    kaggle_inputs.found.cache_clear()
    assert run_install_cell(Config(), monkeypatch, attached) == []  # EfficientNet-B0: none
