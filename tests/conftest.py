"""Bake the template through cookiecutter's API, as `cookiecutter` itself does, into tmp_path."""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest
from cookiecutter.main import cookiecutter

TEMPLATE = Path(__file__).resolve().parents[1]
PROJECT_TEMPLATE = TEMPLATE / "{{cookiecutter.__folder}}"  # the rendered project, unrendered
COOKIECUTTER_JSON = json.loads((TEMPLATE / "cookiecutter.json").read_text())
ANSWERS = [key for key in COOKIECUTTER_JSON if not key.startswith("_")]
# The answers offered as a list (`_extensions`, a list too, is cookiecutter's own setting).
CHOICES = {
    key: value
    for key, value in COOKIECUTTER_JSON.items()
    if isinstance(value, list) and not key.startswith("_")
}
# What decides whether the suite passes, printed first: a fresh install gets the newest.
TESTED_WITH = ("tensorflow-cpu", "keras", "keras-hub", "jax", "kaggle", "kagglesdk", "kagglehub")


def pytest_report_header(config):
    def of(package):
        try:
            return f"{package} {version(package)}"
        except PackageNotFoundError:
            return f"{package} absent"

    packages = [*TESTED_WITH, "cookiecutter"]
    return "versions: " + ", ".join([f"python {platform.python_version()}", *map(of, packages)])


def pytest_collection_modifyitems(config, items):
    """The rendered project's own suite first: it takes most of the time, and started first
    (with `--dist worksteal`) it leaves every other test to the other workers beside it."""
    items.sort(key=lambda item: item.name != "test_rendered_project_passes_its_own_tests")


@dataclasses.dataclass
class Baked:
    path: Path

    @property
    def package(self) -> Path:
        return next(p for p in self.path.iterdir() if (p / "__main__.py").is_file())

    def files(self) -> set[str]:
        return {p.relative_to(self.path).as_posix() for p in self.path.rglob("*") if p.is_file()}

    def read(self, name: str) -> str:
        return (self.path / name).read_text()

    def run(
        self, *command: str, timeout: int = 600, **more_env: str
    ) -> subprocess.CompletedProcess:
        env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONDONTWRITEBYTECODE": "1"}
        # As the rendered project's own suite compiles (its tests/conftest.py): the same
        # programs, less optimised, built in less CPU.
        env["XLA_FLAGS"] = f"{env.get('XLA_FLAGS', '')} --xla_backend_optimization_level=0"
        env |= more_env
        return subprocess.run(
            command,
            cwd=self.path,
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
            check=False,
        )


def bake(output_dir: Path, template: Path = TEMPLATE, **answers) -> Baked:
    """Render with these answers over the defaults (of this template, or a changed copy of
    it); a misspelt answer fails instead of being ignored."""
    unknown = sorted(set(answers) - set(ANSWERS))
    if unknown:
        raise KeyError(f"{unknown} are not template answers; they are {ANSWERS}")
    path = cookiecutter(
        str(template),
        no_input=True,
        extra_context=answers,
        output_dir=str(output_dir),
        default_config=True,
    )
    return Baked(Path(path))


@pytest.fixture
def baker(tmp_path):
    return lambda **answers: bake(tmp_path, **answers)


@pytest.fixture
def python() -> str:
    return sys.executable
