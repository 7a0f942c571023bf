"""cookiecutter.json offers the backbones the project's own list holds, as that list describes
them: the list (runtime/backbone_choices.py) is where a backbone is added."""

import re
import runpy

from conftest import CHOICES, COOKIECUTTER_JSON, PROJECT_TEMPLATE, TEMPLATE

# Plain Python with no template tokens, so its source runs as it stands.
LIST = PROJECT_TEMPLATE / "{{cookiecutter.package}}" / "runtime" / "backbone_choices.py"
BACKBONES = runpy.run_path(str(LIST))["BACKBONES"]
PROMPTS = COOKIECUTTER_JSON["__prompts__"]["backbone"]


def test_the_backbone_answer_offers_each_backbone_of_the_list_in_its_order():
    assert CHOICES["backbone"] == list(BACKBONES)


def test_each_backbones_prompt_gives_its_name_size_and_patch_as_the_list_does():
    """Ensure a changed parameter count or a new vision transformer reaches the prompt."""
    for name, choice in BACKBONES.items():
        prompt = PROMPTS[name]
        assert prompt.lower().startswith(choice.title.lower() + ": "), name
        if choice.parameters is not None:
            assert f": {choice.parameters:.1f}M parameters" in prompt, name
        if choice.patch_size > 1:
            assert f"image size a multiple of {choice.patch_size}" in prompt, name


def test_the_answer_check_knows_each_patch_size_of_the_list():
    """The pre-generation hook refuses an image size a transformer's patches do not divide."""
    patches = {name: c.patch_size for name, c in BACKBONES.items() if c.patch_size > 1}
    assert COOKIECUTTER_JSON["_backbone_patch_size"] == patches


def test_the_answer_check_knows_each_size_range_of_the_list():
    """Swin's windows need 224 px and up; SigLIP's learned positions take 224 alone."""
    ranges = {
        name: [c.fixed_size or c.smallest_size, c.fixed_size or 1024]
        for name, c in BACKBONES.items()
        if c.fixed_size or c.smallest_size
    }
    assert COOKIECUTTER_JSON["_backbone_size_range"] == ranges


def test_the_projects_readme_tables_each_backbone_as_the_list_does():
    readme = (PROJECT_TEMPLATE / "docs" / "kaggle.md").read_text()
    section = readme.split("### Backbones", 1)[1].split("\n#", 1)[0]
    rows = re.findall(r"^\| `([a-z0-9][a-z0-9-]*)` \|(.*)\|(.*)\|$", section, re.MULTILINE)
    assert [name for name, _, _ in rows] == list(BACKBONES)
    for name, preset, parameters in rows:
        parameters = parameters.strip()
        choice = BACKBONES[name]
        assert (f"`{choice.handle}`" in preset) == bool(choice.handle), name
        assert parameters == ("" if choice.parameters is None else f"{choice.parameters:.1f}M")
        if choice.patch_size > 1:
            assert f"a multiple of {choice.patch_size}" in preset, name


def test_the_templates_readme_names_each_backbone():
    (row,) = [
        line for line in (TEMPLATE / "README.md").read_text().splitlines() if "| `backbone`" in line
    ]
    for name in BACKBONES:
        assert f"`{name}`" in row, name


def test_bench_trains_offline_architectures_are_of_backbones_of_the_list():
    """tools/architectures.py builds a backbone for bench train with no download: by a name the
    list holds, as a keras-hub class, which a test of the rendered project builds."""
    architectures = PROJECT_TEMPLATE / "{{cookiecutter.package}}" / "tools" / "architectures.py"
    built = runpy.run_path(str(architectures))["ARCHITECTURES"]
    assert set(built) <= set(BACKBONES) and "efficientnet-b0" in built
    assert all(name.endswith(("Backbone", "Encoder")) for name, _, _ in built.values())
