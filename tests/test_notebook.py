"""The training notebook the template repository offers those who stay on Kaggle is the one a
fresh render writes: `make notebook` writes it again after a change."""

import sys

from conftest import TEMPLATE

OFFERED = TEMPLATE / "notebook" / "flower-classification.ipynb"


def test_the_offered_notebook_is_what_rendering_the_defaults_and_kernel_write(baker, tmp_path):
    baked = baker()
    written = tmp_path / "kernel"
    command = [sys.executable, "-m", "flower_classification", "kernel", "--kaggle-user", "you"]
    done = baked.run(*command, "--kernel-dir", str(written))
    assert done.returncode == 0, done.stdout + done.stderr
    fresh = (written / OFFERED.name).read_bytes()
    assert fresh == OFFERED.read_bytes(), f"{OFFERED} is not a fresh render's: run `make notebook`"
