"""A metric is named once, in the rendered project's runtime/scoring.py: renamed there,
the template's metric answer and its check, the project's --metric and the settings of the
notebook it writes all follow, and nothing else holds the old name."""

import json
import shutil
import sys

import pytest
from conftest import PROJECT_TEMPLATE, TEMPLATE, bake
from cookiecutter.exceptions import FailedHookException

SCORING = ("{{cookiecutter.package}}", "runtime", "scoring.py")
OLD, NEW = "macro_f1", "f1_of_each_class"


@pytest.fixture
def renamed(tmp_path):
    """A copy of the template whose scoring.py calls macro F1 by another name."""
    copy = tmp_path / "template"
    ignored = shutil.ignore_patterns(".venv", "build", ".git", "*_cache", "__pycache__")
    shutil.copytree(TEMPLATE, copy, ignore=ignored)
    scoring = copy.joinpath(PROJECT_TEMPLATE.name, *SCORING)
    text = scoring.read_text()
    assert text.count(f'"{OLD}"') == 1  # its entry in METRICS, and no other
    scoring.write_text(text.replace(f'"{OLD}"', f'"{NEW}"'))
    return copy


def test_a_metric_renamed_in_scoring_is_renamed_for_the_answer_the_flag_and_the_notebook(
    renamed, tmp_path, capfd
):
    with pytest.raises(FailedHookException):  # the answer's check knows the new name only
        bake(tmp_path / "old", renamed, metric=OLD)
    assert f"answer metric={OLD!r} must be one of" in capfd.readouterr().err
    baked = bake(tmp_path / "new", renamed)  # the default: the first metric, renamed
    assert f'metric: str = knob("{NEW}"' in baked.read(f"{baked.package.name}/runtime/config.py")
    package = baked.package.name
    helped = baked.run(sys.executable, "-m", package, "train", "--help-all")
    assert helped.returncode == 0 and NEW in helped.stdout and OLD not in helped.stdout
    refused = baked.run(sys.executable, "-m", package, "doctor", "--metric", OLD)
    assert refused.returncode != 0 and f"one of {NEW}, " in refused.stderr
    written = tmp_path / "kernel"
    done = baked.run(sys.executable, "-m", package, "kernel", "--kaggle-user", "you",
                     "--kernel-dir", str(written))  # fmt: skip
    assert done.returncode == 0, done.stderr
    notebook = json.loads((written / f"{baked.path.name}.ipynb").read_text())
    cells = ["".join(cell["source"]) for cell in notebook["cells"]]
    # The metric is the answer's: the notebook's settings leave it out, and its config has it.
    assert any(f'metric: str = knob("{NEW}"' in cell for cell in cells)
    assert not any(OLD in cell for cell in cells[:3])
