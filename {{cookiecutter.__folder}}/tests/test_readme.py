"""The README's three recipes run as written: the offline one on the demo competition, the
two Kaggle ones against the fake Kaggle (tests/fake_kaggle.py, with the real kaggle client);
and each name its "what to change where" table points at is where it says."""

import re
import shlex
import shutil
from pathlib import Path

import pytest
from conftest import PROJECT
from test_kaggle import COMPETITION, against_fake_kaggle, calls

from {{ cookiecutter.package }}.__main__ import main

PACKAGE = "{{ cookiecutter.package }}"
README = (PROJECT / "README.md").read_text()


def recipe(heading: str) -> list[list[str]]:
    """The command lines of the code block under `heading`, as this package's arguments:
    `python -m PACKAGE` taken off, comments dropped, `a && b` two lines; make and source
    lines (the environment) left to the test."""
    block = README.split(f"## {heading}\n", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    lines = []
    for line in block.splitlines():
        for command in line.split("  #")[0].split("&&"):
            words = shlex.split(command)
            if words[:3] == ["python", "-m", PACKAGE]:
                lines.append(words[3:])
            else:
                assert words[0] in ("make", "source"), line  # nothing else is left out
    return lines


def test_the_first_screen_is_the_three_recipes():
    headings = re.findall(r"^## (.*)$", README, re.MULTILINE)
    assert headings[:3] == [
        "1. Try it offline, on the CPU",
        "2. A classic competition, trained on Kaggle's TPU",
        "3. A code competition",
    ]
    assert len(README.split("## What to change where")[0].splitlines()) < 60
    assert "Submissions to this competition must be made" in README  # how to tell one
    assert "source .venv/bin/activate" in README  # which Python


@pytest.mark.slow
def test_the_offline_recipe_runs_as_written(demo_dir, trained_demo, tmp_path, monkeypatch):
    """After make demo (here: its data, and the trained weights of a run cut to two steps;
    not its checkpoint, which doctor would rightly call another run's), each command."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "demo").symlink_to(demo_dir)
    unfinished = shutil.ignore_patterns("checkpoints")
    shutil.copytree(trained_demo, tmp_path / "output" / "demo", ignore=unfinished)
    monkeypatch.chdir(tmp_path)
    commands = recipe("1. Try it offline, on the CPU")
    assert [words[0] for words in commands] == ["doctor", "preview", "evaluate", "kernel"]
    for words in commands:
        assert main(words) == 0, words
    assert (tmp_path / "output" / "demo" / "confusion.png").is_file()
    assert (tmp_path / "kernel" / "{{ cookiecutter.project }}.ipynb").is_file()


def test_the_classic_recipe_runs_as_written_against_kaggle(tmp_path):
    commands = recipe("2. A classic competition, trained on Kaggle's TPU")
    result = against_fake_kaggle(tmp_path, commands)
    for step in result["steps"]:
        assert step["code"] == 0, step
    (upload,) = [request for request in result["requests"] if request["method"] == "PUT"]
    assert upload["text"] == (tmp_path / "output" / "submission.csv").read_text()
    (sent,) = calls(result, "CreateSubmission")
    assert sent["json"]["competitionName"] == COMPETITION


def test_the_code_competition_recipe_runs_as_written_against_kaggle(tmp_path):
    commands = recipe("3. A code competition")
    result = against_fake_kaggle(tmp_path, commands)
    for step in result["steps"]:
        assert step["code"] == 0, step
    pushed = [call["json"]["slug"] for call in calls(result, "SaveKernel")]
    slug = "alice/{{ cookiecutter.project }}"
    assert pushed == [slug, f"{slug}-inference"]
    (sent,) = calls(result, "CreateCodeSubmission")
    assert sent["json"]["kernelSlug"] == "{{ cookiecutter.project }}-inference"
    assert not [request for request in result["requests"] if request["method"] == "PUT"]


def test_each_name_the_change_table_points_at_is_in_its_file():
    table = README.split("## What to change where", 1)[1].split("\n## ", 1)[0]
    for row in re.findall(r"^\| (?!to change|---)(.*) \|$", table, re.MULTILINE):
        _, where, what = row.split(" | ")
        files = [
            next(PROJECT.glob(f"{PACKAGE}/**/{Path(path).name}"))
            for path in re.findall(r"`([\w/. ]+\.py)`", where)
        ]
        source = "".join(path.read_text() for path in files)
        for name in re.findall(r"`(\w+)`", what):  # a function, a class or a table
            assert re.search(rf"^(def |class )?{name}\b", source, re.MULTILINE), (row, name)
