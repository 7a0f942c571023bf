"""What a rendered project holds, for every choice the template offers."""

import ast
import json
import re
import tomllib

import pytest
from conftest import CHOICES, COOKIECUTTER_JSON, PROJECT_TEMPLATE

# A vision transformer's image size must be a multiple of its patch: 16 patches (224 for
# patches of 14, one of Kaggle's sizes), or the smallest its windows or positions take.
SIZED = {
    name: {"image_size": str(COOKIECUTTER_JSON["_backbone_size_range"].get(name, [16 * patch])[0])}
    for name, patch in COOKIECUTTER_JSON["_backbone_patch_size"].items()
}
COMBINATIONS = [
    pytest.param({}, id="defaults"),
    *[
        pytest.param({"backbone": name, **SIZED.get(name, {})}, id=name)
        for name in CHOICES["backbone"]
    ],
    pytest.param({"metric": "accuracy"}, id="accuracy"),
    pytest.param({"metric": "roc_auc"}, id="roc-auc"),
    pytest.param(
        {"competition": "plant-pathology-2021-fgvc8", "image_size": "224", "num_classes": "6"}
        | {"metric": "samples_f1"},
        id="other-competition-multi-label",
    ),
    pytest.param(
        {"competition": "isic-2024-challenge", "num_classes": "2", "metric": "pauc"},
        id="binary-pauc",
    ),
    pytest.param({"metric": "log_loss"}, id="log-loss"),
    pytest.param({"num_classes": "5", "metric": "qwk"}, id="grades-qwk"),
    pytest.param({"metric": "map_at_k"}, id="map-at-k"),
    pytest.param(
        {"competition": "petfinder-pawpularity-score", "num_classes": "1", "metric": "rmse"},
        id="regression-rmse",
    ),
    pytest.param({"num_classes": "6", "metric": "kl_divergence"}, id="shares-kl-divergence"),
    pytest.param({"project_name": 'Bob\'s "100" \\ Flowers\\n'}, id="quotes-in-name"),
]
# Jinja left behind: a variable, a tag or a comment.
UNRENDERED = re.compile(r"\{\{\s*cookiecutter\.|\{%|\{#")


def test_combinations_cover_every_choice():
    covered = {(key, params.values[0].get(key)) for params in COMBINATIONS for key in CHOICES}
    for key, choices in CHOICES.items():
        assert {(key, choice) for choice in choices[1:]} <= covered, key


def template_files(package: str) -> set[str]:
    """Each file of the project's template, named as rendering names it."""
    return {
        path.relative_to(PROJECT_TEMPLATE).as_posix().replace("{{cookiecutter.package}}", package)
        for path in PROJECT_TEMPLATE.rglob("*")
        if path.is_file()
    }


def test_defaults_render_every_template_file_and_nothing_else(baker):
    baked = baker()
    assert baked.path.name == "flower-classification"
    assert baked.files() == template_files("flower_classification")
    assert {"flower_classification/__main__.py", "tests/conftest.py", "README.md"} <= baked.files()


@pytest.mark.parametrize("answers", COMBINATIONS)
def test_every_combination_renders_the_same_clean_parseable_files(baker, answers):
    baked = baker(**answers)
    assert baked.files() == template_files(baked.package.name)
    for name in baked.files():
        text = baked.read(name)
        assert not UNRENDERED.search(text), f"unrendered Jinja in {name}"
        if name.endswith(".py"):
            ast.parse(text, filename=name)
    pyproject = tomllib.loads(baked.read("pyproject.toml"))
    assert pyproject["project"]["name"] == baked.path.name


def printed(baked, python: str, expression: str) -> str:
    """What `expression` prints in the rendered project, with Config and the line train
    prints about the recipe (recipe_line)."""
    package = baked.package.name
    # recipe_line's module loads TensorFlow (7 s); Config alone loads in a fifth of a second.
    fitting = f"from {package}.runtime.stages.fitting import recipe_line; "
    script = (
        "import json, dataclasses; "
        f"from {package}.runtime.config import Config; "
        f"{fitting if 'recipe_line' in expression else ''}print({expression})"
    )
    result = baked.run(python, "-c", script)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("answers", COMBINATIONS)
def test_config_defaults_are_the_answers(baker, python, answers):
    """The rendered Config starts from the answers: backbone, metric, size, classes, files."""
    baked = baker(**answers)
    cfg = json.loads(printed(baked, python, "json.dumps(dataclasses.asdict(Config()))"))
    assert cfg["backbone"] == answers.get("backbone", "efficientnet-b0")
    assert cfg["metric"] == answers.get("metric", "macro_f1")
    assert cfg["image_size"] == int(answers.get("image_size", 512))
    assert cfg["num_classes"] == int(answers.get("num_classes", 104))
    assert cfg["weights"] == "auto"  # ImageNet's where the backbone has them, else none
    competition = answers.get("competition", "tpu-getting-started")
    assert cfg["competition"] == competition
    if competition == "tpu-getting-started":  # Kaggle's flowers data has one folder per size
        size = cfg["image_size"] if cfg["image_size"] in (192, 224, 331) else 512
        assert cfg["train_files"] == f"tfrecords-jpeg-{size}x{size}/train/*.tfrec"
    else:
        assert cfg["train_files"] == "train/*.tfrec"


@pytest.mark.parametrize(
    "answers, said",
    [
        (
            {},
            (
                "flip auto: on at 512 px (photos: the recipes it follows all flip them, "
                "docs/recipe.md; --no-flip turns it off)"
            ),
        ),
        (
            {"image_size": "32", "backbone": "small-cnn"},
            "flip auto: off at 32 px (below 128 px, measured in docs/recipe.md; --flip flips)",
        ),
    ],
    ids=["defaults", "32-px"],
)
def test_a_render_says_what_auto_flips_chose_at_its_size(baker, python, answers, said):
    """The default render (512 px, EfficientNet-B0) flips, and says why before it trains; a
    32 px render does not, and says that. The lines are those train prints first."""
    baked = baker(**answers)
    assert said in printed(baked, python, "recipe_line(Config())").splitlines()


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
    readme = baked.read("docs/layout.md")
    for path in baked.package.rglob("*.py"):
        if path.name != "__init__.py":
            assert re.search(rf"{re.escape(path.name)}\s+<- ", readme), path


def test_next_steps_are_printed_after_rendering(baker, capfd):
    baker(competition="cassava-leaf-disease-classification")
    out = capfd.readouterr().out
    assert "cd flower-classification" in out and "make demo" in out
    assert "for the Kaggle competition cassava-leaf-disease-classification" in out
    assert "a code competition" in out and "README.md has the three recipes" in out
