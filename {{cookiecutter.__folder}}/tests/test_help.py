"""`--help` of every command answers without loading TensorFlow: quickly, and without
TensorFlow's start-up lines."""

import subprocess
import sys

from {{ cookiecutter.package }}.__main__ import COMMANDS, owner

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
