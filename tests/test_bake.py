"""What a rendered project holds, for every choice the template offers."""

import ast
import json
import re
import tomllib

import pytest
from conftest import CHOICES

PACKAGE_FILES = [
    "__init__.py",
    "__main__.py",
    "startup_logs.py",
    "runtime/__init__.py",
    "runtime/accelerator.py",
    "runtime/augment.py",
    "runtime/backbones.py",
    "runtime/backend.py",
    "runtime/checkpoints.py",
    "runtime/config.py",
    "runtime/doctor.py",
    "runtime/efficientnet_padding.py",
    "runtime/evaluate.py",
    "runtime/files.py",
    "runtime/folds.py",
    "runtime/kaggle_inputs.py",
    "runtime/model.py",
    "runtime/paths.py",
    "runtime/plan.py",
    "runtime/plots.py",
    "runtime/predict.py",
    "runtime/predictions.py",
    "runtime/preflight.py",
    "runtime/preview.py",
    "runtime/processes.py",
    "runtime/rehearsal.py",
    "runtime/scoring.py",
    "runtime/submission.py",
    "runtime/tables.py",
    "runtime/thresholds.py",
    "runtime/train.py",
    "runtime/data/__init__.py",
    "runtime/data/competition_files.py",
    "runtime/data/images.py",
    "runtime/data/pipeline.py",
    "runtime/data/records.py",
    "runtime/data/scan.py",
    "runtime/data/source.py",
    "runtime/data/steps.py",
    "runtime/data/tfds_sets.py",
    "tools/__init__.py",
    "tools/bench_input.py",
    "tools/bench_train.py",
    "tools/demo.py",
    "tools/image_files.py",
    "tools/images_to_records.py",
    "tools/kaggle_api.py",
    "tools/kaggle_auth.py",
    "tools/kernel.py",
    "tools/notebook.py",
    "tools/notebook_cells.py",
    "tools/settings_cell.py",
    "tools/shards.py",
    "tools/step_timings.py",
]
TEST_FILES = [
    "conftest.py",
    "fake_data_proxy.py",
    "fake_kaggle.py",
    "jax_padding.py",
    "one_step.py",
    "presets.py",
    "process_share.py",
    "run_all_twice.py",
    "test_accelerator.py",
    "test_augment.py",
    "test_bad_inputs.py",
    "test_bad_records.py",
    "test_bench_input.py",
    "test_bench_train.py",
    "test_code_competition.py",
    "test_competitions.py",
    "test_config.py",
    "test_data.py",
    "test_efficientnet_padding.py",
    "test_folds.py",
    "test_help.py",
    "test_kaggle.py",
    "test_kernel.py",
    "test_model.py",
    "test_plan.py",
    "test_plots.py",
    "test_preflight.py",
    "test_readers.py",
    "test_records.py",
    "test_replicas.py",
    "test_resume.py",
    "test_scoring.py",
    "test_submission.py",
    "test_test_images.py",
    "test_tfds.py",
    "test_train.py",
]
TOP_FILES = [
    ".gitignore",
    "Makefile",
    "README.md",
    "docs/efficientnet-padding.md",
    "pyproject.toml",
    "requirements.txt",
]

# A vision transformer's image size must be a multiple of its patch: 224 is Kaggle's too.
PATCHES = {"dinov2-small": {"image_size": "224"}}
COMBINATIONS = [
    pytest.param({}, id="defaults"),
    *[
        pytest.param({"backbone": name, **PATCHES.get(name, {})}, id=name)
        for name in CHOICES["backbone"]
    ],
    pytest.param({"metric": "accuracy"}, id="accuracy"),
    pytest.param({"metric": "roc_auc"}, id="roc-auc"),
    pytest.param(
        {"competition": "plant-pathology-2021-fgvc8", "image_size": "224", "num_classes": "6"}
        | {"metric": "samples_f1"},
        id="other-competition-multi-label",
    ),
    pytest.param({"project_name": 'Bob\'s "100" \\ Flowers\\n'}, id="quotes-in-name"),
]
# Jinja left behind: a variable, a tag or a comment.
UNRENDERED = re.compile(r"\{\{\s*cookiecutter\.|\{%|\{#")


def test_combinations_cover_every_choice():
    covered = {(key, params.values[0].get(key)) for params in COMBINATIONS for key in CHOICES}
    for key, choices in CHOICES.items():
        assert {(key, choice) for choice in choices[1:]} <= covered, key


def expected_files(package: str) -> set[str]:
    return {
        *TOP_FILES,
        *(f"{package}/{name}" for name in PACKAGE_FILES),
        *(f"tests/{name}" for name in TEST_FILES),
    }


def test_defaults_render_exactly_these_files(baker):
    baked = baker()
    assert baked.path.name == "flower-classification"
    assert baked.files() == expected_files("flower_classification")


@pytest.mark.parametrize("answers", COMBINATIONS)
def test_every_combination_renders_the_same_clean_parseable_files(baker, answers):
    baked = baker(**answers)
    assert baked.files() == expected_files(baked.package.name)
    for name in baked.files():
        text = baked.read(name)
        assert not UNRENDERED.search(text), f"unrendered Jinja in {name}"
        if name.endswith(".py"):
            ast.parse(text, filename=name)
    pyproject = tomllib.loads(baked.read("pyproject.toml"))
    assert pyproject["project"]["name"] == baked.path.name


@pytest.mark.parametrize("answers", COMBINATIONS)
def test_config_defaults_are_the_answers(baker, python, answers):
    """The rendered Config starts from the answers: backbone, metric, size, classes, files."""
    baked = baker(**answers)
    script = (
        f"from {baked.package.name}.runtime.config import Config; import json, dataclasses; "
        "print(json.dumps(dataclasses.asdict(Config())))"
    )
    result = baked.run(python, "-c", script)
    assert result.returncode == 0, result.stderr
    cfg = json.loads(result.stdout)
    assert cfg["backbone"] == answers.get("backbone", "efficientnet-b0")
    assert cfg["metric"] == answers.get("metric", "macro_f1")
    assert cfg["image_size"] == int(answers.get("image_size", 512))
    assert cfg["num_classes"] == int(answers.get("num_classes", 104))
    assert cfg["weights"] == ("none" if cfg["backbone"] == "small-cnn" else "imagenet")
    competition = answers.get("competition", "tpu-getting-started")
    assert cfg["competition"] == competition
    if competition == "tpu-getting-started":  # Kaggle's flowers data has one folder per size
        size = cfg["image_size"] if cfg["image_size"] in (192, 224, 331) else 512
        assert cfg["train_files"] == f"tfrecords-jpeg-{size}x{size}/train/*.tfrec"
    else:
        assert cfg["train_files"] == "train/*.tfrec"


def test_the_flowers_folder_follows_the_image_size(baker, python):
    baked = baker(image_size="331")
    assert '"tfrecords-jpeg-331x331/val/*.tfrec"' in baked.read(
        "flower_classification/runtime/config.py"
    )


def test_a_project_name_with_quotes_and_backslashes_stays_text(baker):
    """Ensure quotes, backslashes and escapes in project_name reach the README as typed."""
    name = 'Bob\'s "100" \\ Flowers\\n'
    baked = baker(project_name=name)
    assert baked.path.name == "bob-s-100-flowers-n"
    assert baked.read("README.md").startswith(f"# {name}\n")


def test_the_readme_tree_lists_every_package_module(baker):
    baked = baker()
    readme = baked.read("README.md")
    for path in PACKAGE_FILES[1:]:
        if not path.endswith("__init__.py"):
            name = path.rsplit("/", 1)[-1]
            assert re.search(rf"{re.escape(name)}\s+<- ", readme), path


def test_next_steps_are_printed_after_rendering(baker, capfd):
    baker(competition="cassava-leaf-disease-classification")
    out = capfd.readouterr().out
    assert "cd flower-classification" in out and "make demo" in out
    assert "/kaggle/input/cassava-leaf-disease-classification" in out
