"""The notebook platforms' pin files, which `make test-platforms` (tests/platforms.py) installs."""

import re

import platforms
import pytest
from conftest import PROJECT_TEMPLATE

PINS = sorted((PROJECT_TEMPLATE / "platforms").glob("*.txt"))


@pytest.mark.parametrize("pins", PINS, ids=lambda path: path.stem)
def test_each_set_names_its_python_and_one_version_of_each_package(pins):
    """A set is what a platform carries: each package at the version read there."""
    assert re.search(r"^# python: 3\.\d+$", pins.read_text(), re.MULTILINE), pins.name
    for line in platforms.requirements(pins):
        assert re.fullmatch(r"[A-Za-z0-9._-]+==\d[\d.]*", line), f"{pins.name}: {line}"


def test_a_python_pyenv_lacks_stops_the_set_saying_what_to_install(tmp_path, monkeypatch):
    pins = tmp_path / "old.txt"
    pins.write_text("# python: 3.4\nkeras==3.0.0\n")
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path))
    with pytest.raises(SystemExit, match=r"old.txt needs Python 3.4: .*`pyenv install 3.4`"):
        platforms.interpreter(pins)
