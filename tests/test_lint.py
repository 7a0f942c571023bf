"""ruff passes on the template's own code and on rendered projects, as users will run it."""

import subprocess
import sys

import pytest
from conftest import TEMPLATE


def ruff(*args, cwd):
    command = [sys.executable, "-m", "ruff", *args]  # the venv's ruff, whatever PATH holds
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)


@pytest.mark.parametrize(
    "command", [["check", "."], ["format", "--check", "."]], ids=["check", "format"]
)
def test_template_code_passes_ruff(command):
    result = ruff(*command, "--no-cache", cwd=TEMPLATE)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    "answers",
    [
        pytest.param({}, id="defaults"),
        pytest.param(
            {
                "competition": "jigsaw-multilingual-toxic-comment-classification",
                "image_size": "1024",
            },
            id="long-slug",
        ),
        pytest.param({"backbone": "small-cnn", "num_classes": "100000"}, id="small-cnn"),
    ],
)
@pytest.mark.parametrize(
    "command", [["check", "."], ["format", "--check", "."]], ids=["check", "format"]
)
def test_rendered_project_passes_ruff(baker, answers, command):
    baked = baker(**answers)
    result = ruff(*command, "--no-cache", cwd=baked.path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_notebooks_visible_cells_are_code_ruff_checks(baker):
    """The notebook's visible cells are a Python file of the package that ruff reads, not one
    it leaves out."""
    listed = ruff("check", "--show-files", "--no-cache", cwd=baker().path)
    assert "tools/notebook_cells.py" in listed.stdout, listed.stdout + listed.stderr
