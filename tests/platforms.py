"""The rendered project's tests on the packages each notebook platform carries (`make
test-platforms`), where `make test` runs them on the newest a fresh install resolves.

For each pin file in the rendered project's platforms/ (or those named: `python
tests/platforms.py kaggle-gpu`): a venv under build/platforms/NAME/ made with the Python the
file names, its pins installed with what the rendered suite needs in one resolver call, the pins
as constraints so that nothing upgrades them; then the model, notebook and code-competition
test modules run there, and the set's time is printed. On a set Colab carries, the notebook's
`install` cell runs first, as on Colab, but offline: it installs from wheels downloaded
beforehand. A test may skip only for want of an accelerator, or for a backbone the set's
keras-hub cannot build, and then that backbone's refusal must have passed.
"""

from __future__ import annotations

import glob
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

from cookiecutter.main import cookiecutter

TEMPLATE = Path(__file__).resolve().parents[1]
PLATFORMS = TEMPLATE / "{{cookiecutter.__folder}}" / "platforms"
BUILD = TEMPLATE / "build" / "platforms"
UV = Path(sys.prefix) / "bin" / "uv"  # the template's .venv has it (the Makefile installs it)
MODULES = ("tests/test_model.py", "tests/test_kernel.py", "tests/test_code_competition.py")
# The GPU set (Kaggle's GPU image's and Colab's GPU runtime's) runs the modules whole. To keep
# `make test-platforms` within its time, the TPU sets leave out the tests that take the same
# packages down another road: the notebook as a script, a TPU notebook's stop as a script, the
# rerun with the flat layout, and the blend's and the stack's notebooks (two trained runs and
# some four minutes each on 2 cores). The packages that differ there are met by the rest: the
# model module whole, the notebook in a real kernel, the code competition's training notebook
# and Kaggle's rerun of its inference notebook.
WHOLE = ("kaggle-gpu",)
LEFT_OUT = (
    "tests/test_kernel.py::test_the_script_runs_alone_offline_the_same_way",
    "tests/test_kernel.py::test_a_notebook_made_for_a_tpu_stops_in_its_first_cells_without_one[py]",
    "tests/test_code_competition.py::test_kaggles_rerun_of_the_inference_notebook_predicts_the_hidden_test_set[flat]",
    "tests/test_code_competition.py::test_a_blends_inference_notebook_predicts_every_run_on_the_hidden_test_set",
    "tests/test_code_competition.py::test_a_stacks_inference_notebook_fits_its_trees_again_and_predicts_the_hidden_test_set",
)
# Left out on every set: Kaggle's rerun installing keras-hub from a wheels dataset packs the
# installed keras-hub as the wheel the notebook asks for, the newest that runs on the installed
# Keras, which only the newest packages have installed (a set's older one is not it); what it
# tests is pip and the notebook's install cell, not the set's packages.
NEWEST_ONLY = (
    "tests/test_code_competition.py::test_a_keras_hub_the_image_lacks_comes_from_the_wheels_dataset_in_kaggles_rerun",
)
# The sets Colab's runtimes carry (its GPU runtime's is Kaggle's GPU image's): the notebook's
# `install` cell runs there before the tests, as it does on Colab.
ON_COLAB = ("colab-tpu", "kaggle-gpu")
# The two skips allowed: the rendered conftest's, and a backbone the keras-hub there lacks
# (the clause of versions.unbuildable, which the rendered conftest's `preset` gives).
NO_ACCELERATOR = "no TPU or GPU on this machine"
UNBUILDABLE = re.compile(r"(\S+) needs (keras-hub|keras) \S+ or later; ")
REFUSED = "test_a_backbone_the_installed_keras_hub_cannot_build_is_refused_in_one_line"
# As the rendered conftest's OFFLINE: a network namespace with only loopback.
OFFLINE = ["unshare", "-rn", "sh", "-c", 'ip link set lo up && exec "$@"', "sh"]
# The notebook's `install` cell, run in this interpreter: with --download FOLDER, each pip
# install it would run becomes a pip download into FOLDER. It decides it is on Colab by
# google.colab being importable: the runner puts a module of that name on PYTHONPATH.
COLAB_CELL = """
import importlib, subprocess, sys
package, *download = sys.argv[1:]
notebook = importlib.import_module(package + ".tools.notebook")
(source,) = [cell.source for name, cell in notebook.visible_cells() if name == "install"]
config = importlib.import_module(package + ".runtime.config")
built = [config.Config().backbone]  # what the settings cell gives a notebook of the defaults
if download:
    install = subprocess.check_call
    def fetch(command, **kwargs):
        at = command.index("install")
        wanted = [arg for arg in command[at + 1 :] if arg != "--quiet"]
        install([*command[:at], "download", "--quiet", "--dest", download[-1], *wanted])
    subprocess.check_call = fetch
cell = {"__name__": "__main__", "BACKBONES_BUILT": built, "WHEELS": ""}
exec(compile(source, "the notebook's install cell", "exec"), cell)
"""


def requirements(path: Path) -> list[str]:
    lines = (line.partition("#")[0].strip() for line in path.read_text().splitlines())
    return [line for line in lines if line]


def name_of(requirement: str) -> str:
    return re.match(r"[A-Za-z0-9._-]+", requirement).group().lower().replace("_", "-")


def interpreter(pins: Path) -> str:
    """The newest pyenv Python of the version the pin file's `# python: X.Y` line names."""
    (wanted,) = re.findall(r"^# python: (\d+\.\d+)$", pins.read_text(), re.MULTILINE)
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    found = sorted(
        glob.glob(str(root / "versions" / f"{wanted}.*" / "bin" / "python")),
        key=lambda path: [int(part) for part in Path(path).parts[-3].split(".")],
    )
    if not found:
        sys.exit(f"error: {pins.name} needs Python {wanted}: none in {root}/versions; "
                 f"install it (`pyenv install {wanted}`) or leave the set out")  # fmt: skip
    return found[-1]


def cpu() -> float:
    """CPU seconds of the processes this one started and waited for: on a shared machine, a
    set's cost where its wall time depends on the others."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def run(command: list, **kwargs) -> None:
    subprocess.run([str(part) for part in command], check=True, **kwargs)


def make_venv(name: str, pins: Path, folder: Path, project: Path) -> str:
    """The set's venv, made afresh unless one was made from the same files: what was done."""
    venv, made = folder / "venv", folder / "made-from.txt"
    dev = requirements(TEMPLATE / "requirements-dev.txt")
    inputs = pins.read_text() + "\n".join(dev) + COLAB_CELL * (name in ON_COLAB)
    if made.is_file() and made.read_text() == inputs:
        return "venv reused (made from the same files)"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    run([interpreter(pins), "-m", "venv", venv])
    pinned = requirements(pins)
    hub = [line for line in pinned if name_of(line) == "keras-hub"]
    # The set's TensorFlow is its pin or none (the install cell installs one); keras-hub goes in
    # without its dependencies, as the Makefile installs it (they would pull a TensorFlow).
    dev = [line for line in dev if name_of(line) != "tensorflow-cpu"]
    wanted = folder / "requirements.txt"
    wanted.write_text("\n".join([*(p for p in pinned if p not in hub), *dev]) + "\n")
    uv = [UV, "pip", "install", "--quiet", "--python", venv / "bin" / "python"]
    run([*uv, "--compile-bytecode", "-r", wanted, "-c", pins])
    if hub:
        run([*uv, "--compile-bytecode", "--no-deps", *hub])
    if name in ON_COLAB:
        colab_cell(venv, folder, project)
    made.write_text(inputs)
    return "venv made" + " and the install cell run" * (name in ON_COLAB)


def colab_cell(venv: Path, folder: Path, project: Path) -> None:
    """Runs the notebook's install cell in the venv as on Colab, but with no network: what it
    installs comes from wheels downloaded first, into folder/wheels."""
    stub = folder / "colab" / "google" / "colab"
    stub.mkdir(parents=True)
    (stub / "__init__.py").write_text(
        '"""Stands for Colab\'s own module: the cell looks for it."""\n'
    )
    wheels = folder / "wheels"
    package = next(p.name for p in project.iterdir() if (p / "__main__.py").is_file())
    env = {**os.environ, "PYTHONPATH": str(folder / "colab")}
    command = [venv / "bin" / "python", "-c", COLAB_CELL, package]
    run([*command, "--download", wheels], cwd=project, env=env)
    offline = env | {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels)}
    run([*OFFLINE, *command], cwd=project, env=offline)


def test(name: str, venv: Path, project: Path) -> list[str]:
    """The modules' run on the set: what went wrong (nothing: it passed)."""
    workers = len(os.sched_getaffinity(0)) + 1
    command = [venv / "bin" / "python", "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider"]
    command += ["-n", workers, "--dist", "loadfile", "--no-loadscope-reorder", "--durations=20"]
    command += MODULES
    left_out = NEWEST_ONLY + (LEFT_OUT if name not in WHOLE else ())
    command += [f"--deselect={test}" for test in left_out]
    env = {**os.environ, "PATH": f"{venv / 'bin'}:{os.environ['PATH']}"}
    env |= {"TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONDONTWRITEBYTECODE": "1"}
    for variable in ("PYTHONPATH", "VIRTUAL_ENV", "KERAS_BACKEND"):
        env.pop(variable, None)
    command = [str(part) for part in command]
    result = subprocess.run(
        command, check=False, cwd=project, env=env, capture_output=True, text=True
    )
    (BUILD / f"{name}.log").write_text(result.stdout + result.stderr)
    problems = []
    if result.returncode != 0:
        failures = result.stdout.partition("= FAILURES =")[2].partition("= PASSES =")[0]
        problems.append(failures[-6000:] + result.stdout[-1500:] + result.stderr[-1500:])
    # pytest-xdist's summary counts no deselected tests: ask pytest
    listed = [*command[:3], "--collect-only", "-q", *MODULES]  # python -m pytest
    found = subprocess.run(listed, check=False, cwd=project, env=env, capture_output=True)
    missing = [test for test in left_out if test not in found.stdout.decode().split()]
    ran = re.findall(r"^(?:PASSED|FAILED|ERROR) (\S+)", result.stdout, re.MULTILINE)
    if missing or set(left_out) & set(ran):
        problems.append(f"LEFT_OUT or NEWEST_ONLY names tests not there ({missing}) or that ran")
    passed = set(re.findall(r"^PASSED (\S+)", result.stdout, re.MULTILINE))
    for reason in re.findall(r"^SKIPPED \[\d+\] (.+)$", result.stdout, re.MULTILINE):
        lacking = UNBUILDABLE.search(reason)
        if reason.endswith(NO_ACCELERATOR):
            continue
        if not lacking:
            problems.append(f"a skip of another kind: {reason}")
        elif not any(REFUSED in test and f"[{lacking[1]}]" in test for test in passed):
            problems.append(f"{lacking[1]} skipped, and no test of its refusal passed: {reason}")
    return problems


def timed(step, *args):
    """step(*args), its wall and CPU seconds."""
    wall, used = time.monotonic(), cpu()
    done = step(*args)
    return done, f"{time.monotonic() - wall:.0f} s (CPU {cpu() - used:.0f} s)"


def main(names: list[str]) -> int:
    sets = {path.stem: path for path in sorted(PLATFORMS.glob("*.txt"))}
    unknown = sorted(set(names) - set(sets))
    if unknown:
        sys.exit(f"error: no platforms/{unknown[0]}.txt; the sets are {', '.join(sets)}")
    failed = []
    for name in names or sets:
        folder, rendered = BUILD / name, BUILD / "render" / name
        shutil.rmtree(rendered, ignore_errors=True)
        project = Path(
            cookiecutter(
                str(TEMPLATE), no_input=True, output_dir=str(rendered), default_config=True
            )
        )
        made, installing = timed(make_venv, name, sets[name], folder, project)
        print(f"{name}: {made} in {installing}", flush=True)
        problems, testing = timed(test, name, folder / "venv", project)
        verdict = "FAILED" if problems else "passed"
        log = f"build/platforms/{name}.log"
        ran = ", ".join(MODULES) + ("" if name in WHOLE else f" less {len(LEFT_OUT)} tests")
        print(f"{name}: tests {verdict} in {testing}: {ran} ({log})", flush=True)
        for problem in problems:
            print(problem, flush=True)
        failed += [name] if problems else []
    if failed:
        print(f"failed on: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
