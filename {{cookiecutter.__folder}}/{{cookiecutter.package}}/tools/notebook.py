"""The project as one notebook for a competitor to read, edit and run, and as one script.

The cells a competitor reads and edits are notebook_cells.py, a Python file in jupytext's percent
format (its docstring says how its cells are marked), in its order, top to bottom as Martin
Gorner's "Getting started with 100+ flowers on TPU": the accelerator checked first, before
anything is installed or written; the settings; the install cell; the modules a competitor edits,
in view, each written where the package reads it (the data steps, the datasets, the model and its
recipe, the training loop; an inference notebook's prediction loop); then the checks, a look at
the data, training, evaluation and the submission. This module adds what depends on the run: the
title, which says what the notebook installs and when it needs the internet; the settings
(settings_cell.py); and the hidden cells that write the rest of the runtime beside the notebook,
so it needs no code dataset. The install cell installs only what the machine lacks (on Kaggle's
images, for the backbones they build, nothing). The tools that make the notebook stay out of it.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import nbformat

from ..runtime.backbone_choices import BACKBONES, from_kaggle_models
from ..runtime.config import FILE_FIELDS, Config
from ..runtime.outputs import blend_record
from ..runtime.platform import versions
from ..runtime.stages.run import Run
from . import carried
from .settings_cell import config_source, other_settings, settings

PACKAGE = Path(__file__).resolve().parents[1]
PROJECT = {{ cookiecutter.project | tojson }}
TITLE = {{ cookiecutter.project_name | tojson }}
VISIBLE_CELLS = Path(__file__).with_name("notebook_cells.py")
IMAGE = PACKAGE.parent / "platforms" / "kaggle-gpu.txt"  # what Kaggle's image carries
# A percent-format cell's first line: `# %%`, a title, `[markdown]`.
HEADER = re.compile(r"# %%(?: (?P<title>\w+))?(?: \[(?P<kind>markdown)\])?")
# A visible cell that holds a module of the package, named by the IPython magic that writes it.
FILE_CELL = re.compile(r"^# %%writefile (?P<path>\S+)", re.MULTILINE)
# The script's stand-in for the notebook's %%writefile cells.
WRITE_MODULE = """from pathlib import Path


def write_module(path, source):
    Path(path).write_text(source)"""
# The script's stand-in for the notebook's one-line errors (UserError._render_traceback_).
ONE_LINE_ERRORS = """import sys

from {package}.runtime.errors import UserError


def one_line_errors(kind, error, traceback, python_hook=sys.excepthook):
    \"\"\"A problem the user can fix prints one line with the fix, no traceback.\"\"\"
    if issubclass(kind, UserError):
        print("error:", error, file=sys.stderr)
    else:
        python_hook(kind, error, traceback)


sys.excepthook = one_line_errors"""
# The first hidden cell: the package's folders, and a module the notebook does not carry (the
# settings reached it after the notebook was written) said in one line with the fix.
PACKAGE_FOLDERS = """import os
import sys

for folder in FOLDERS:
    os.makedirs(folder, exist_ok=True)


class NotCarried:
    \"\"\"Finds a module of the package that this notebook does not carry, to say so.\"\"\"

    def find_spec(self, name, path=None, target=None):
        if not name.startswith("PACKAGE."):
            return None
        from PACKAGE.runtime.errors import UserError

        raise UserError(
            f"this notebook carries the modules its settings used when it was written, and "
            f"not {name}, which the settings reach now: write the notebook again with "
            f"`kernel` and these settings (or set back the one changed since)"
        )


sys.meta_path.append(NotCarried())  # after Python's own finders: only what they miss"""
# Where the data is: another folder of the same kind is read the same way, another kind of data
# (images for records) is another notebook, which `kernel` writes; the rest of what the settings
# cell offers may be set there, and what it reaches is carried.
DATA_PLACES = ("data_dir", *FILE_FIELDS, "test_csv")
# How a cell is folded, as its metadata says it to Jupyter and to Kaggle.
HIDDEN = {"jupyter": {"source_hidden": True}, "_kg_hide-input": True, "_kg_hide-output": True}
ON_KAGGLE_HIDDEN = {"_kg_hide-input": True}  # Kaggle reads it only; what installs stays in view
OUTPUT_FOLDED = {"jupyter": {"outputs_hidden": True}, "collapsed": True, "_kg_hide-output": True}
WHERE = {"tpu": "a TPU v5e-8", "gpu": "two T4 GPUs", "cpu": "the CPU"}


@dataclasses.dataclass(frozen=True)
class Cell:
    kind: str  # "markdown", "code" or "module" (a file of the package, written by the cell)
    source: str
    path: str = ""  # for "module": where the cell writes it
    # In view, or folded: HIDDEN (the runtime), ON_KAGGLE_HIDDEN (the install cell's code),
    # OUTPUT_FOLDED (its source in view, its output one click away).
    folded: dict | None = None


# The notebooks a titled cell of notebook_cells.py is in (its docstring says what each is).
IN_NOTEBOOKS = {
    "": ("training", "inference", "blend", "stack"),
    "training": ("training",),
    "inference": ("inference", "blend", "stack"),
    "single": ("inference",),
    "predict": ("training", "inference"),
    "blend": ("blend",),
    "stack": ("stack",),
}


def cells(
    run: Run, accelerator: str, class_names: list[str] | None, inference: bool = False,
    blend: dict | None = None, wheels: str = "", reading: Run | None = None,
) -> list[Cell]:  # fmt: skip
    """The notebook's cells: training from the top to submission.csv, or with `inference` only the
    prediction, with the trained run another notebook left (code competitions), or with `blend`
    (blend.json or stack.json, each run's trained_dir added) with every run of a blend or a stack.
    `wheels`: the attached dataset of wheels (kaggle:datasets/OWNER/SLUG) the install cell installs
    what the image lacks from, offline. `reading`: the run as the notebook will read its data
    (kernel's as_it_reads; `run` where not given). A cell that does nothing with it is left out,
    with its heading; the hidden cells carry what the others reach with it (carried.py), or with
    any run of the blend (its backbone, image size and flips)."""
    reading, cfg = reading or run, run.cfg
    notebook = "inference" if inference else "training"
    if blend:
        notebook = "stack" if blend_record.is_stack(blend) else "blend"
    made = [Cell("markdown", title(cfg, accelerator, class_names, notebook, blend, wheels))]
    for name, cell in visible_cells():
        if name == "settings":
            table = other_settings(run, notebook, reading)
            made.append(Cell("markdown", "## Settings\n\n" + table))
            built = [run["backbone"] for run in blend["runs"]] if blend else [cfg.backbone]
            source = config_source(run, accelerator, notebook, blend, built, wheels, reading)
            made.append(Cell("code", source))
        elif name == "runtime":
            made.append(Cell("runtime", ""))  # the hidden cells, once the others are known
        elif name == "install":
            made.append(dataclasses.replace(cell, folded=ON_KAGGLE_HIDDEN))
        elif name == "summary":
            made += [] if inference else [dataclasses.replace(cell, folded=OUTPUT_FOLDED)]
        elif name not in IN_NOTEBOOKS:
            raise ValueError(f"{VISIBLE_CELLS.name}: a cell titled {name!r}; see its docstring")
        elif notebook in IN_NOTEBOOKS[name]:
            made.append(with_file(cell))
    idle = [cell.kind == "code" and carried.does_nothing(cell.source, reading) for cell in made]
    idle.append(False)
    made = [  # a cell that does nothing, and the heading above it, are left out
        cell
        for index, cell in enumerate(made)
        if not idle[index] and not (cell.kind == "markdown" and idle[index + 1])
    ]
    shown = [cell.source for cell in made if cell.kind in ("code", "module")]
    # A blend's or a stack's runs each build their own backbone: what any of them reaches.
    runs = [
        dataclasses.replace(
            reading,
            cfg=dataclasses.replace(
                reading.cfg, **{key: blended[key] for key in blend_record.PREDICTED_WITH}
            ),
        )
        for blended in (blend or {}).get("runs", [])
    ]
    offered = {field.name for field in settings(notebook, reading.data)} - set(DATA_PLACES)
    modules = {path for each in runs or [reading] for path in carried.modules(each, shown, offered)}
    hidden = runtime_cells(sorted(modules), {cell.path for cell in made})
    at = next(index for index, cell in enumerate(made) if cell.kind == "runtime")
    return made[:at] + hidden + made[at + 1 :]


def visible_cells() -> list[tuple[str, Cell]]:
    """notebook_cells.py's cells, each with its title: a markdown cell's comment marks taken
    off, a code cell as it is. What comes before the first cell (the docstring) is none."""
    read: list[tuple[str, str, list[str]]] = []
    for line in VISIBLE_CELLS.read_text().splitlines():
        header = HEADER.fullmatch(line)
        if header:
            read.append((header["title"] or "", header["kind"] or "code", []))
        elif read and read[-1][1] == "markdown":
            read[-1][2].append(line.removeprefix("#").removeprefix(" "))
        elif read:
            read[-1][2].append(line)
    return [(name, Cell(kind, "\n".join(lines).strip())) for name, kind, lines in read]


def with_file(cell: Cell) -> Cell:
    """A cell as the notebook holds it: a `# %%writefile PATH` cell writes that module of the
    package, in view."""
    named = FILE_CELL.match(cell.source)
    if not named:
        return cell
    return Cell("module", (PACKAGE.parent / named["path"]).read_text(), named["path"])


def runtime_cells(modules: list[str], shown: set[str]) -> list[Cell]:
    """The hidden cells: the package's folders (%%writefile makes none), then each module
    carried (paths under the package's folder) that no cell in view holds."""
    folders = sorted({str(Path(path).parent) for path in modules})
    source = PACKAGE_FOLDERS.replace("FOLDERS", repr(folders)).replace("PACKAGE", PACKAGE.name)
    return [
        Cell("code", source, folded=HIDDEN),
        *[
            Cell("module", (PACKAGE.parent / path).read_text(), path, folded=HIDDEN)
            for path in modules
            if path not in shown
        ],
    ]


def image_packages() -> dict[str, str]:
    """The versions Kaggle's image carries, as platforms/kaggle-gpu.txt records them (its TPU
    image carries the same Keras and keras-hub)."""
    return dict(re.findall(r"^([\w-]+)==(\S+)$", IMAGE.read_text(), re.MULTILINE))


def image_python() -> str:
    """The Python of Kaggle's image ("3.12"), as the pin file's `# python: X.Y` names it."""
    return re.search(r"^# python: (\S+)$", IMAGE.read_text(), re.MULTILINE).group(1)


def title(
    cfg: Config, accelerator: str, class_names: list[str] | None, notebook: str = "training",
    blend: dict | None = None, wheels: str = "",
) -> str:  # fmt: skip
    name = BACKBONES[cfg.backbone].title
    article = "An" if name[0] in "AEIOU" else "A"
    weights = " with ImageNet weights" if from_kaggle_models(cfg) else ""
    classes = f"{cfg.num_classes} classes"
    if class_names:
        shown = ", ".join(class_names[:8]) + (", ..." if len(class_names) > 8 else "")
        classes += f" ({shown})"
    competition = (
        f"the Kaggle competition [{cfg.competition}]"
        f"(https://www.kaggle.com/competitions/{cfg.competition})"
    )
    if notebook == "stack":
        runs = ", ".join(
            f"{run['name']} ({run['backbone']}, {run['image_size']} px)" for run in blend["runs"]
        )
        columns = ", ".join(blend["metadata_columns"])
        return (
            f"# {TITLE} inference: a stack of {len(blend['runs'])} "
            f"run{'s' if len(blend['runs']) > 1 else ''}\n\n"
            f"Predicts the test images of {competition} with each run its training notebook "
            f"trained ({runs}), each at its own image size and with its own test-time flips, "
            f"on {WHERE[accelerator]}. Then gradient-boosted trees, fitted again as `stack` "
            "fitted them on the runs' out-of-fold predictions"
            + (f" and the metadata ({columns})" if columns else "")
            + f" (CV {blend['metric']} {blend['stack_cv']:.4f}), write `submission.csv` from "
            "the runs' probabilities. Submit this notebook: Kaggle reruns it with the hidden "
            "test set in place of the public one.\n\n"
            "**Run all.** It trains no network, installs nothing and needs no internet."
        )
    if notebook == "blend":
        runs = ", ".join(
            f"{run['name']} ({run['backbone']}, {run['image_size']} px, weight {run['weight']:.2f})"
            for run in blend["runs"]
        )
        return (
            f"# {TITLE} inference: a blend of {len(blend['runs'])} runs\n\n"
            f"Predicts the test images of {competition} with each run its training notebook "
            f"trained ({runs}), each at its own image size and with its own test-time flips, "
            f"on {WHERE[accelerator]}, and writes `submission.csv` of their probabilities "
            f"weighed as `blend` fitted them on the runs' out-of-fold predictions (CV "
            f"{blend['metric']} {blend['blend_cv']:.4f}). Submit this notebook: Kaggle reruns "
            "it with the hidden test set in place of the public one.\n\n"
            "**Run all.** " + offline(wheels)
        )
    if notebook == "inference":
        return (
            f"# {TITLE} inference\n\n"
            f"Predicts the test images of {competition} with the model the training notebook "
            f"trained (its output, `{cfg.trained_dir}`: the backbone, image size and classes "
            f"come from the run's `model.json`), on {WHERE[accelerator]}, and writes "
            "`submission.csv`. Submit this notebook: Kaggle reruns it with the hidden test set "
            "in place of the public one.\n\n"
            "**Run all.** " + offline(wheels)
        )
    return (
        f"# {TITLE}\n\n"
        f"{article} {name} image classifier{weights} for {competition}, "
        f"{classes}, trained on {WHERE[accelerator]}; it writes `submission.csv`.\n\n"
        "**Run all.** The settings come first, then the accelerator check, which stops the run "
        "at once on a machine without the accelerator it was made for; the data steps and the "
        "model are in view to edit. " + installs(cfg, wheels)
    )


def offline(wheels: str) -> str:
    """What an inference notebook needs, as its title says it."""
    if not wheels:
        return "It trains nothing; on Kaggle's images it installs nothing and needs no internet."
    return (
        "It trains nothing and needs no internet: it installs what Kaggle's image lacks from "
        f"the wheels of `{wheels}`."
    )


def installs(cfg: Config, wheels: str = "") -> str:
    """What the training notebook installs, and when it needs the internet, as its title says:
    what the install cell installs on Kaggle's images and on Colab's TPU runtime, and the
    TensorFlow Datasets set it downloads."""
    lacking = versions.unbuildable(cfg.backbone, image_packages())
    hub = versions.keras_hub_for(cfg.backbone, image_packages().get("keras", "0"))
    where = "offline" if wheels else "with the internet on (Settings > Internet)"
    said = (
        f"On Kaggle's images, {lacking}: the install cell installs keras-hub {hub} "
        + (f"from the wheels of `{wheels}`, " if wheels else "with pip, ")
        + f"{where}."
        if lacking
        else "On Kaggle's images it installs nothing."
    )
    if cfg.data_dir.startswith("tfds:"):
        said += (
            f" It downloads the TensorFlow Datasets set `{cfg.data_dir[5:]}`, with the internet on."
        )
    elif not lacking or wheels:
        said += " It needs no internet."
    packages = (
        "tensorflow-cpu and keras-hub" if BACKBONES[cfg.backbone].handle else "tensorflow-cpu"
    )
    return (
        f"{said} On Colab's TPU runtime, which has neither TensorFlow nor keras-hub, the install "
        f"cell installs {packages} with pip (Colab's runtime is online)."
    )


def as_notebook(cells: list[Cell]) -> nbformat.NotebookNode:
    """Outputs cleared, and no `metadata.kaggle`: a pinned docker image can send a TPU
    notebook to a CPU image (Kaggle/kaggle-cli#1197). Each cell's id is its place, so the
    same settings write the same notebook, byte for byte."""
    made = []
    for index, cell in enumerate(cells):
        if cell.kind == "markdown":
            made.append(nbformat.v4.new_markdown_cell(cell.source, id=f"cell-{index}"))
            continue
        source = f"%%writefile {cell.path}\n{cell.source}" if cell.kind == "module" else cell.source
        folded = dict(cell.folded or {})
        made.append(nbformat.v4.new_code_cell(source, metadata=folded, id=f"cell-{index}"))
    notebook = nbformat.v4.new_notebook(cells=made)
    notebook.metadata = {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"},
    }
    nbformat.validate(notebook)
    return notebook


def as_script(cells: list[Cell]) -> str:
    """The same steps as one Python file: markdown as comments, each module as a string."""
    parts = [f"# {PROJECT}.py: the notebook {PROJECT}.ipynb as one script.", WRITE_MODULE]
    last_module = max(i for i, cell in enumerate(cells) if cell.kind == "module")
    for index, cell in enumerate(cells):
        if cell.kind == "markdown":
            parts.append("\n".join(f"# {line}".rstrip() for line in cell.source.splitlines()))
        elif cell.kind == "code":
            parts.append(cell.source)
        else:
            parts.append(f"write_module({cell.path!r}, {string_literal(cell.source)})")
        if index == last_module:
            parts.append(ONE_LINE_ERRORS.format(package=PACKAGE.name))
    return "\n\n".join(parts) + "\n"


def string_literal(text: str) -> str:
    """A Python literal of `text` that reads like the file: a raw triple-quoted string where
    that spells it exactly, else repr."""
    for quote in ("'''", '"""'):
        candidate = f"r{quote}{text}{quote}"
        try:
            if ast.literal_eval(candidate) == text:
                return candidate
        except SyntaxError:
            continue
    return repr(text)
