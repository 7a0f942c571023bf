"""Bad answers stop rendering with a message that names them, and leave nothing on disk."""

import json
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import bake
from cookiecutter.exceptions import FailedHookException
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from slugify import slugify

BAD_ANSWERS = [
    pytest.param("project_name", "", id="empty-name"),
    pytest.param("project_name", "two\nlines", id="name-with-newline"),
    pytest.param("project", "my flowers", id="project-with-space"),
    pytest.param("project", "../escape", id="project-outside-output"),
    pytest.param("project", "a/b", id="project-nested"),  # no empty a/ left behind
    pytest.param("project", "-flowers", id="project-leading-dash"),
    pytest.param("package", "Flowers", id="package-uppercase"),
    pytest.param("package", "1flowers", id="package-leading-digit"),
    pytest.param("package", "flower-classification", id="package-with-dash"),
    pytest.param("package", "class", id="package-keyword"),
    pytest.param("package", "json", id="package-shadows-stdlib"),
    pytest.param("package", "keras", id="package-shadows-keras"),
    pytest.param("package", 'x"""; import sys; sys.exit(0) #', id="package-injection"),
    pytest.param("competition", "Flower Classification", id="competition-not-slug"),
    pytest.param("competition", "tpu--getting-started", id="competition-double-dash"),
    pytest.param("image_size", "16", id="image-size-small"),
    pytest.param("image_size", "2048", id="image-size-large"),
    pytest.param("image_size", "512.0", id="image-size-float"),
    pytest.param("image_size", "big", id="image-size-text"),
    pytest.param("num_classes", "1", id="one-class"),
    pytest.param("num_classes", "-5", id="negative-classes"),
    pytest.param("metric", "pauc", id="pauc-of-104-classes"),  # a binary target's metric
    pytest.param("metric", "rsme", id="metric-misspelt"),
]


@pytest.mark.parametrize("answer, value", BAD_ANSWERS)
def test_a_bad_answer_is_named_and_nothing_is_left(tmp_path, capfd, answer, value):
    output = tmp_path / "output"
    output.mkdir()
    with pytest.raises(FailedHookException):
        bake(output, **{answer: value})
    err = capfd.readouterr().err
    assert f"ERROR: answer {answer}={value!r}" in err
    assert "for example" in err and "nothing was generated" in err
    assert list(output.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["output"]


def test_all_bad_answers_are_reported_at_once(tmp_path, capfd):
    with pytest.raises(FailedHookException):
        bake(tmp_path, package="Flowers", image_size="8", num_classes="0")
    err = capfd.readouterr().err
    for answer in ("package", "image_size", "num_classes"):
        assert f"answer {answer}=" in err
    assert "3 answer(s) need fixing" in err
    assert list(tmp_path.iterdir()) == []


def test_a_metric_of_values_counts_its_targets_from_one(tmp_path, capfd):
    """Ensure metric=rmse renders with num_classes=1 (one target to regress), and that 0 is
    refused naming the least it takes, where a metric of classes takes 2."""
    assert bake(tmp_path / "one", metric="rmse", num_classes="1").path.is_dir()
    with pytest.raises(FailedHookException):
        bake(tmp_path / "none", metric="rmse", num_classes="0")
    assert "answer num_classes='0' must be a whole number of at least 1" in capfd.readouterr().err


def test_an_unknown_choice_is_refused_before_anything_is_written(tmp_path):
    with pytest.raises(ValueError, match="vgg16 provided for choice variable backbone"):
        bake(tmp_path, backbone="vgg16")
    assert list(tmp_path.iterdir()) == []


def test_a_misspelt_answer_is_refused_by_the_test_helper(tmp_path):
    with pytest.raises(KeyError, match="'imagesize'"):
        bake(tmp_path, imagesize="224")


def test_a_vision_transformer_needs_an_image_size_its_patches_divide(tmp_path, capfd):
    """Ensure dinov2-small (patches of 14 pixels) with the flowers' 512 stops with a size that fits."""
    with pytest.raises(FailedHookException):
        bake(tmp_path, backbone="dinov2-small")  # image_size stays 512
    err = capfd.readouterr().err
    assert "answer image_size='512' must be a multiple of 14 for backbone=dinov2-small" in err
    assert "for example image_size=504" in err
    assert list(tmp_path.iterdir()) == []


# The project's name as people write it: emoji, accents, right-to-left scripts, quotes,
# backslashes, very long. Jinja's own syntax is left out: cookiecutter renders an answer as a
# template before any hook sees it.
NAMES = st.text(
    st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="{}%#"),
    min_size=1,
    max_size=80,
)
# Both notebooks, their scripts and kernel-metadata.json, written by the rendered project.
KERNELS = """
import json, sys
import nbformat
from {package}.runtime.config import Config
from {package}.tools import kernel
for inference in (False, True):
    folder = kernel.write_kernel(Config(), "tpu", "alice", f"kernel-{{inference}}", inference=inference)
    described = json.loads((folder / "kernel-metadata.json").read_text(encoding="utf-8"))
    notebook = nbformat.read(folder / described["code_file"], as_version=4)
    nbformat.validate(notebook)
    script = (folder / described["code_file"]).with_suffix(".py").read_text(encoding="utf-8")
    print(json.dumps([described["id"], described["title"], notebook.cells[0].source, script]))
"""


# Each example renders a project and runs it once: few, each a few seconds.
@settings(
    max_examples=5,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],  # capfd: read per example
)
@example(name="🍃 Leaf")
@example(name='Café crème: "les fleurs" d\'été')
@example(name="تصنيف الزهور")  # right to left
@example(name="a\\b " + "very long name " * 6)
@given(name=NAMES)
def test_any_project_name_survives_both_notebooks_or_is_refused_naming_it(name, capfd):
    """Before, "🍃 Leaf" rendered, and `kernel` stopped in a UnicodeEncodeError: the title
    reached the notebook as two lone surrogates (Jinja's tojson escaped the emoji)."""
    with tempfile.TemporaryDirectory() as tmp:
        try:
            baked = bake(Path(tmp), project_name=name)
        except FailedHookException:  # refused, naming the answer or what it made
            said = capfd.readouterr().err
            assert f"answer project_name={name!r}" in said or f"from project_name={name!r}" in said
            return
        code = KERNELS.format(package=baked.package.name)
        done = baked.run(sys.executable, "-c", code, timeout=120)
        assert done.returncode == 0, done.stderr[-3000:]
        for line in done.stdout.splitlines():
            kernel_id, title, first_cell, script = json.loads(line)
            assert first_cell.startswith(f"# {name}"), first_cell[:200]
            assert f"# # {name}".rstrip() in script  # the markdown, as the script's comments
            # What the kaggle client checks before a push: a title it can slugify to the id.
            assert len(title) >= 5 and slugify(title) == kernel_id.split("/")[1], title
