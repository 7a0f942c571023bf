"""Each backbone's oldest keras-hub, and a backbone the installed keras-hub cannot build,
refused in one line that names the backbone, the version installed, the version needed and
the fix where it runs, before anything is built. The installed versions are faked in-process,
where the package reads them (importlib.metadata's `version`, in versions.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import PackageNotFoundError

import pytest

from {{ cookiecutter.package }}.__main__ import main
from {{ cookiecutter.package }}.runtime.config import Config
from {{ cookiecutter.package }}.runtime.errors import UserError
from {{ cookiecutter.package }}.runtime.platform import versions
from {{ cookiecutter.package }}.runtime.stages.run import start
from {{ cookiecutter.package }}.tools import kernel, notebook

SWIN_ON_KAGGLE = "swin-tiny needs keras-hub 0.29.1 or later; keras-hub 0.26.0 is installed"
# keras-hub 0.29.1's Swin needs Keras 3.15 to train (keras.ops.random), which the image lacks.
NO_SWIN_ON_KAGGLE = (
    f"{SWIN_ON_KAGGLE}; no keras-hub with it runs on keras 3.13.2: install Keras 3.15 or later"
)
DINOV3_ON_OLDER = "dinov3-small needs keras-hub 0.24.0 or later; keras-hub 0.22.2 is installed"


def installed_as(monkeypatch, **found: str | None) -> None:
    """Packages installed at these versions (keras_hub="0.26.0"; None: absent); the rest as
    they are."""
    real = versions.version

    def version(name: str) -> str:
        key = name.replace("-", "_")
        if key not in found:
            return real(name)
        if found[key] is None:
            raise PackageNotFoundError(name)
        return found[key]

    monkeypatch.setattr(versions, "version", version)


def test_a_backbone_the_installed_keras_hub_lacks_is_named_with_both_versions(monkeypatch):
    installed_as(monkeypatch, keras_hub="0.26.0", keras="3.13.2")  # Kaggle's GPU image
    assert versions.unbuildable("swin-tiny") == SWIN_ON_KAGGLE
    assert "swin-tiny" not in versions.buildable() and "dinov3-small" in versions.buildable()
    assert versions.unbuildable("small-cnn") == ""  # no keras-hub needed
    installed_as(monkeypatch, keras_hub="0.29.1", keras="3.8.0")
    assert versions.unbuildable("swin-tiny") == (
        "swin-tiny needs keras 3.15 or later; keras 3.8.0 is installed"
    )
    installed_as(monkeypatch, keras_hub=None)
    assert versions.unbuildable("efficientnet-b0") == (
        "efficientnet-b0 needs keras-hub 0.19.3 or later; keras-hub is not installed"
    )


def test_the_keras_hub_to_install_is_the_newest_with_the_backbone_that_runs_on_this_keras():
    assert versions.keras_hub_for("dinov3-small", "3.13.2") == "0.29.1"  # 0.30 needs 3.15
    assert versions.keras_hub_for("swin-tiny", "3.13.2") == ""  # its Swin needs Keras 3.15
    assert versions.keras_hub_for("swin-tiny", "3.15.1") == "0.32.0"
    assert versions.keras_hub_for("dinov3-small", "3.8.0") == "0.25.1"
    assert versions.keras_hub_for("swin-tiny", "3.8.0") == ""  # no release: Keras it is


def test_the_fix_is_said_for_where_it_runs(monkeypatch):
    installed_as(monkeypatch, keras_hub="0.22.2", keras="3.13.2")
    monkeypatch.delenv("KAGGLE_KERNEL_RUN_TYPE", raising=False)
    monkeypatch.delenv("KAGGLE_IS_COMPETITION_RERUN", raising=False)
    fix = 'pip install --no-deps "keras-hub==0.29.1"'
    assert versions.refusal("dinov3-small") == f"{DINOV3_ON_OLDER}: {fix}"
    monkeypatch.setenv("KAGGLE_KERNEL_RUN_TYPE", "Interactive")
    assert "first cells install keras-hub 0.29.1 with the internet on" in versions.refusal(
        "dinov3-small"
    )
    monkeypatch.setenv("KAGGLE_IS_COMPETITION_RERUN", "1")
    assert "this rerun is offline" in versions.refusal("dinov3-small")
    installed_as(monkeypatch, keras_hub="0.26.0", keras="3.13.2")  # Kaggle's GPU image
    monkeypatch.delenv("KAGGLE_KERNEL_RUN_TYPE")
    assert versions.refusal("swin-tiny") == NO_SWIN_ON_KAGGLE


@pytest.mark.parametrize("command", ["train", "doctor"])
def test_train_and_doctor_refuse_it_in_one_line_before_building_anything(
    command, monkeypatch, demo_dir, tmp_path, capsys
):
    installed_as(monkeypatch, keras_hub="0.26.0", keras="3.13.2")
    monkeypatch.delenv("KAGGLE_KERNEL_RUN_TYPE", raising=False)
    argv = f"{command} --preset demo --data-dir {demo_dir} --output-dir {tmp_path}/o"
    code = main([*argv.split(), "--backbone", "swin-tiny", "--image-size", "224"])
    out, err = capsys.readouterr()
    refused = NO_SWIN_ON_KAGGLE
    if command == "train":
        assert code == 2 and err.strip() == f"error: {refused}", out + err
    else:  # doctor lists it among its checks, once
        assert code == 1 and (out + err).count(refused) == 1, out + err
        assert f"packages: PROBLEM: {refused}" in out
    assert "could not load the keras-hub preset" not in out + err  # it blamed the folder
    assert not (tmp_path / "o").exists()


def test_kernel_refuses_a_backbone_no_keras_hub_trains_on_kaggles_image(tmp_path):
    """Kaggle's image (platforms/kaggle-gpu.txt) carries keras-hub 0.26.0 and Keras 3.13.2:
    no keras-hub with Swin trains on that Keras, so neither notebook is written; the other
    backbones need nothing installed, and their notebooks keep the internet off."""
    cfg = Config(backbone="swin-tiny", image_size=224)
    for name, inference in (("train", False), ("infer", True)):
        with pytest.raises(UserError, match="no keras-hub with swin-tiny runs on its Keras"):
            kernel.write_kernel(cfg, "gpu", "alice", str(tmp_path / name), inference=inference)
        assert not (tmp_path / name).exists()
    plain = kernel.write_kernel(Config(), "gpu", "alice", str(tmp_path / "plain"))
    assert json.loads((plain / "kernel-metadata.json").read_text())["enable_internet"] is False


def run_install_cell(cfg: Config, monkeypatch, wheels: str = "") -> list[list[str]]:
    """The training notebook's config cell and install cell, run here with pip's calls kept
    (pip is where it meets the network): the pip commands it ran. `wheels`: the dataset of
    wheels `kernel` attached (kaggle:datasets/OWNER/SLUG)."""
    run = start(cfg, on_accelerator=False, read=False)
    cells = notebook.cells(run, "gpu", None, wheels=wheels)
    (config_cell,) = [cell for cell in cells if cell.source.startswith("# The settings")]
    (install,) = [cell for cell in cells if cell.folded == notebook.FOLDED]
    ran: list[list[str]] = []
    monkeypatch.setattr(subprocess, "check_call", ran.append)
    names: dict = {}
    for cell in (config_cell, install):  # as Jupyter runs them: one namespace
        exec(cell.source, names)  # noqa: S102 - the notebook's own code
    return ran


def test_the_notebook_installs_only_the_keras_hub_the_image_lacks_and_says_so(monkeypatch, capsys):
    installed_as(monkeypatch, keras_hub="0.26.0", keras="3.13.2")  # Kaggle's GPU image
    assert run_install_cell(Config(), monkeypatch) == []  # EfficientNet-B0: nothing
    dinov3 = Config(backbone="dinov3-small", image_size=224)
    assert run_install_cell(dinov3, monkeypatch) == []
    swin = Config(backbone="swin-tiny", image_size=224)  # no Swin trains on Keras 3.13
    with pytest.raises(UserError, match="this image trains efficientnet-b0, .*dinov3-small"):
        run_install_cell(swin, monkeypatch)
    installed_as(monkeypatch, keras_hub="0.22.2", keras="3.13.2")  # an older keras-hub
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps"]
    assert run_install_cell(dinov3, monkeypatch) == [[*pip, "keras-hub==0.29.1"]]
    said = f"{DINOV3_ON_OLDER}: installing keras-hub 0.29.1 without its dependencies"
    assert said in capsys.readouterr().out
