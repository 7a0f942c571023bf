"""Shared fixtures: one small demo competition per test session, and a one-step config."""

import dataclasses

import pytest

from {{ cookiecutter.package }}.config import PRESETS, Config


@pytest.fixture(scope="session")
def demo_dir(tmp_path_factory):
    from {{ cookiecutter.package }}.demo import write_competition

    folder = tmp_path_factory.mktemp("demo")
    write_competition(folder, size=32)
    return folder


@pytest.fixture
def demo_cfg(demo_dir, tmp_path):
    """The demo preset cut to one tiny epoch, writing into this test's own folder."""
    cfg = Config(**PRESETS["demo"])
    return dataclasses.replace(
        cfg,
        data_dir=str(demo_dir),
        output_dir=str(tmp_path / "output"),
        epochs=1,
        steps_per_epoch=2,
    )
