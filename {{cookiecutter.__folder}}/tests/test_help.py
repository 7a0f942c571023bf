"""`--help` of every command answers without loading TensorFlow (quickly, and without
TensorFlow's start-up lines), and offers what the command reads, grouped as Config is."""

import contextlib
import io
import re
import subprocess
import sys

import pytest

from {{ cookiecutter.package }}.__main__ import COMMANDS, main, owner, parser, reads
from {{ cookiecutter.package }}.runtime import config
from {{ cookiecutter.package }}.runtime.errors import flag
from {{ cookiecutter.package }}.tools.kaggle_api import ACTIONS

pytestmark = pytest.mark.quick  # one unit alone: make test-quick runs it

# Each command's --help in one fresh interpreter, then what it loaded: TensorFlow, Keras or JAX
# on the first command that loads one.
HELP_OF_EVERY_COMMAND = """
import contextlib, io, sys
from {{ cookiecutter.package }}.__main__ import COMMANDS, main


for name in COMMANDS:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
        main([name, "--help"])
    loaded = sorted({"tensorflow", "keras", "jax"} & set(sys.modules))
    if loaded:
        sys.exit(f"{name} --help loaded {', '.join(loaded)}")
"""


def test_help_of_every_command_loads_no_tensorflow():
    """Ensure that `--help` of each command imports neither TensorFlow, Keras nor JAX."""
    result = subprocess.run(
        [sys.executable, "-c", HELP_OF_EVERY_COMMAND],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stderr == ""  # no TensorFlow lines, no warnings


def test_commands_whose_help_imports_nothing_of_their_module_declare_no_options():
    """A command marked every_flag has its module left out of --help: an option added there
    would silently not exist."""
    for name in [name for name, command in COMMANDS.items() if command.every_flag]:
        module = owner(name)
        assert not hasattr(module, "arguments") and not hasattr(module, "CONFIG_FIELDS"), name


def help_of(*words: str, every: bool = False) -> str:
    with contextlib.redirect_stdout(io.StringIO()) as said, contextlib.suppress(SystemExit):
        main([*words, "--help-all" if every else "--help"])
    return said.getvalue()


def test_train_help_fits_a_screen_and_help_all_reaches_every_setting(monkeypatch):
    """A newcomer looking for one setting read 129 lines of `train --help`; the rarely set
    (Config's `rare`: the records' features, where and how it runs) wait behind --help-all."""
    monkeypatch.setenv("COLUMNS", "80")  # a terminal's default width
    shown, every = help_of("train"), help_of("train", every=True)
    assert len(shown.splitlines()) <= 90, shown
    assert "--help-all" in shown and "--help-all" not in every
    rare = [field for field in config.knobs() if field.metadata["rare"]]
    assert rare and f"this help with {len(rare)} rarely set fields too" in shown
    for field in config.knobs():
        if reads("train", field.name):
            assert offers(shown, field.name) != field.metadata["rare"], field.name
            assert offers(every, field.name), field.name


def offers(help_text: str, field: str) -> bool:
    """Whether the help lists the field's flag (--fold is not --fold-seed)."""
    return bool(re.search(rf"^  {re.escape(flag(field))}[ ,\n]", help_text, re.MULTILINE))


def test_each_command_offers_the_settings_it_reads_grouped_as_the_notebook_groups_them():
    predicting, training = help_of("predict"), help_of("train")
    assert "--tta" in predicting and "--epochs" not in predicting
    assert "--crop-area" not in predicting and "--mixup" not in predicting
    assert "--epochs" in training and "--mixup" in training and "--tta" not in training
    assert "--test-files" not in training and "--trained-dir" not in training
    assert "--epochs" in help_of("doctor") and "--tta" in help_of("doctor")  # checks them all
    for title in ("The competition and its files:", "The model:", "The recipe:"):
        assert f"\n{title}\n" in training
    assert training.splitlines()[0] == "usage: python -m {{ cookiecutter.package }} train [options]"
    assert help_of("kaggle").splitlines()[0].endswith(" kaggle ACTION [options]")


def test_kaggle_help_says_each_action_on_a_line_of_its_own():
    said = help_of("kaggle").split("actions:\n")[1].splitlines()
    assert [line.split()[0] for line in said] == list(ACTIONS)


def test_no_default_shown_contradicts_the_help_beside_it():
    """A field whose help says what an unset or empty value means shows no other default."""
    for name in COMMANDS:
        commands = parser(name)._subparsers._group_actions[0].choices
        for action in commands[name]._actions:
            assert (action.help or "").count("default:") <= 1, (name, action.help)
            assert "(default: )" not in (action.help or ""), (name, action.help)


def test_every_command_writing_a_folder_takes_output_dir_and_still_its_old_flag(tmp_path):
    for name in ("records", "kernel", "demo-data"):
        assert "--output-dir" in help_of(name) or "--kernel-dir" in help_of(name), name
    assert main(["demo-data", "--output", str(tmp_path / "old")]) == 0  # as scripts wrote it
    assert main(["demo-data", "--output-dir", str(tmp_path / "new")]) == 0
    assert sorted(p.name for p in (tmp_path / "old").iterdir()) == sorted(
        p.name for p in (tmp_path / "new").iterdir()
    )
