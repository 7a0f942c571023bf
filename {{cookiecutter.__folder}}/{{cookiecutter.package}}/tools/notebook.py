"""The project as one notebook for a competitor to read, edit and run, and as one script.

The cells a competitor reads and edits are notebook_cells.py (jupytext's percent format; its
docstring says how cells are marked), in its order, top to bottom as Gorner's "Getting started
with 100+ flowers on TPU". This module adds what depends on the run: the title (what the
notebook installs, and when it needs the internet); the settings (the config cell: the fields
tuned most and every value given, by Config's sections, with a folded table of the rest); and
the folded cells that write the rest of the runtime beside the notebook, so it needs no code
dataset (folded in Jupyter, on Kaggle and in Colab: `#@title` first, `cellView: form`).
"""

from __future__ import annotations

import ast
import dataclasses
import json
import pprint
import re
from pathlib import Path

import nbformat

from ..runtime import config
from ..runtime.backbone_choices import BACKBONES, from_kaggle_models
from ..runtime.config import FILE_FIELDS, Config
from ..runtime.data.kinds import Data
from ..runtime.outputs import blend_record
from ..runtime.platform import versions
from ..runtime.stages.run import Run
from . import carried

PACKAGE = Path(__file__).resolve().parents[1]
PROJECT = {{ cookiecutter.project | tojson }}
TITLE = {{ cookiecutter.project_name | tojson }}
VISIBLE_CELLS = Path(__file__).with_name("notebook_cells.py")
IMAGE = PACKAGE.parent / "platforms" / "kaggle-gpu.txt"  # what Kaggle's image carries
# A percent-format cell's first line: `# %%`, a title, `[markdown]`.
HEADER = re.compile(r"^# %%(?: (\w+))?(?: \[(markdown)\])?$", re.MULTILINE)
# A cell in view that holds a module of the package: `# module PATH`.
FILE_CELL = re.compile(r"^# module (?P<path>\S+)", re.MULTILINE)
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
# The first folded cell, before it writes its modules: the modules whose code is a cell in view,
# imported as the notebook's own names; and a module the notebook does not carry imported as a
# stand-in that, used (the settings reached it after the notebook was written), says the fix.
SETUP = """import importlib.util
import os
import sys
import types

IN_VIEW = @IN_VIEW@  # the modules whose code is a cell in view


def write_module(path, source):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as file:
        file.write(source)


class InView(types.ModuleType):
    \"\"\"A module whose code is a cell in view: its names are the notebook's, as the cell last
    defined them, so every stage runs what the cells hold now.\"\"\"

    def __getattr__(self, name):
        if name not in vars(sys.modules["__main__"]):
            raise AttributeError(f"{self.__name__}.{name}: run the cell that defines it")
        return vars(sys.modules["__main__"])[name]


class NotCarried(types.ModuleType):
    \"\"\"A module of the package this notebook does not carry (its settings did not use it when
    it was written): used now, a setting changed since, it says what to do.\"\"\"

    def __getattr__(self, name):
        if name.startswith("__"):  # what Python's import machinery looks for
            raise AttributeError(name)
        from @PACKAGE@.runtime.errors import UserError

        raise UserError(
            f"this notebook carries the modules its settings used when it was written, and "
            f"not {self.__name__}, which the settings reach now: write the notebook again with "
            f"`kernel` and these settings (or set back the one changed since)"
        )


class Finder:
    \"\"\"Imports the modules in view as InView, and those this notebook does not carry as
    NotCarried: where Python's own finders find no file of the package's.\"\"\"

    def find_spec(self, name, path=None, target=None):
        others = (finder for finder in sys.meta_path if finder is not self)
        if name in IN_VIEW or (
            name.startswith("@PACKAGE@.") and not any(f.find_spec(name, path) for f in others)
        ):
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        return (InView if spec.name in IN_VIEW else NotCarried)(spec.name)

    def exec_module(self, module):
        pass


# First, before any file of a module in view; once, however often the cell runs.
sys.meta_path[:] = [Finder()] + [f for f in sys.meta_path if type(f).__name__ != "Finder"]"""
# The folded cells that write the runtime, by the package's rooms ("": its top modules).
FOLDED_ROOMS = {
    "settings, errors and the platform": ("", "platform"),
    "reading the data": ("data",),
    "the model's parts and what a run writes": ("learning", "outputs"),
    "the stages, from the checks to the submission": ("stages",),
}
# Where the data is: another folder of the same kind is read the same way, another kind of data
# (images for records) is another notebook, which `kernel` writes; the rest of what the settings
# cell offers may be set there, and what it reaches is carried.
DATA_PLACES = ("data_dir", *FILE_FIELDS, "test_csv")
# How a cell is folded, as its metadata says it to Jupyter, Colab (with `#@title` first) and
# Kaggle; the runtime's cells fold their output too (the install cell says what it installs).
FOLDED = {"jupyter": {"source_hidden": True}, "cellView": "form", "_kg_hide-input": True}
HIDDEN = {**FOLDED, "_kg_hide-output": True}
OUTPUT_FOLDED = {"jupyter": {"outputs_hidden": True}, "collapsed": True, "_kg_hide-output": True}
WHERE = {"tpu": "a TPU v5e-8", "gpu": "two T4 GPUs", "cpu": "the CPU"}


@dataclasses.dataclass(frozen=True)
class Cell:
    kind: str  # "markdown", "code" or "module" (a module of the package, as a cell in view)
    source: str
    path: str = ""  # for "module": its path under the package's parent
    # In view, or folded: HIDDEN (the runtime), FOLDED (the install cell), OUTPUT_FOLDED (its
    # source in view, its output one click away).
    folded: dict | None = None


# The notebooks a titled cell of notebook_cells.py is in (its docstring says what each is).
IN_NOTEBOOKS = {
    "": ("training", "inference", "blend", "stack"), "training": ("training",),
    "inference": ("inference", "blend", "stack"), "single": ("inference",),
    "predict": ("training", "inference"), "blend": ("blend",), "stack": ("stack",),
}  # fmt: skip


def cells(
    run: Run, accelerator: str, class_names: list[str] | None, inference: bool = False,
    blend: dict | None = None, wheels: str = "", reading: Run | None = None,
) -> list[Cell]:  # fmt: skip
    """The notebook's cells: training from the top to submission.csv, or with `inference` only the
    prediction, with the trained run another notebook left (code competitions), or with `blend`
    (blend.json or stack.json, each run's trained_dir added) with every run of a blend or a stack.
    `wheels`: the dataset of wheels (kaggle:datasets/OWNER/SLUG) the install cell installs from.
    `reading`: the run as the notebook will read its data (kernel's as_it_reads). A cell that
    does nothing with it is left out, with its heading; the hidden cells carry what the others
    reach with it (carried.py), or with any run of the blend."""
    reading, cfg = reading or run, run.cfg
    notebook = "inference" if inference else "training"
    if blend:
        notebook = "stack" if blend_record.is_stack(blend) else "blend"
    made = [Cell("markdown", title(cfg, accelerator, class_names, notebook, blend, wheels))]
    for name, cell in visible_cells():
        if name == "settings":
            table, source = settings_cells(run, accelerator, notebook, blend, wheels, reading)
            made += [Cell("markdown", "## Settings\n\n" + table), Cell("code", source)]
        elif name == "runtime":
            made.append(Cell("runtime", ""))  # the hidden cells, once the others are known
        elif name == "install":
            source = cell.source.replace("# @title", "#@title", 1)  # as Colab spells it
            made.append(Cell("code", source, folded=FOLDED))
        elif name == "summary":
            made += [] if inference else [dataclasses.replace(cell, folded=OUTPUT_FOLDED)]
        elif name not in IN_NOTEBOOKS:
            raise ValueError(f"{VISIBLE_CELLS.name}: a cell titled {name!r}; see its docstring")
        elif notebook in IN_NOTEBOOKS[name]:
            named = FILE_CELL.match(cell.source)  # `# module PATH`: that module, in view
            if named:
                cell = Cell("module", (PACKAGE.parent / named["path"]).read_text(), named["path"])
            made.append(cell)
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
    parts = HEADER.split(VISIBLE_CELLS.read_text())[1:]  # each cell's title, kind and text
    made = []
    for name, kind, text in zip(parts[::3], parts[1::3], parts[2::3], strict=True):
        if kind:
            text = "\n".join(line.removeprefix("#").removeprefix(" ") for line in text.split("\n"))
        made.append((name or "", Cell(kind or "code", text.strip())))
    return made


def runtime_cells(modules: list[str], shown: set[str]) -> list[Cell]:
    """The folded cells that write each module carried (paths under the package's folder) that
    no cell in view holds, by FOLDED_ROOMS; the first sets the package up (SETUP)."""
    in_view = sorted(path.removesuffix(".py").replace("/", ".") for path in shown if path)
    setup = SETUP.replace("@IN_VIEW@", repr(in_view)).replace("@PACKAGE@", PACKAGE.name)
    rooms = {
        title: [path for path in modules if path not in shown and room(path) in held]
        for title, held in FOLDED_ROOMS.items()
    }
    rooms = {title: paths for title, paths in rooms.items() if paths}
    made = []
    for number, (title_, paths) in enumerate(rooms.items(), 1):
        head = f"#@title The project's code, {number} of {len(rooms)}: {title_}"
        writes = [f"write_module({path!r}, {string_literal(source(path))})" for path in paths]
        body = [setup] if number == 1 else []
        made.append(Cell("code", "\n\n".join([head, *body, *writes]), folded=HIDDEN))
    made[0] = dataclasses.replace(made[0], source=made[0].source.replace("\n\n", "\n", 1))
    return made


def room(path: str) -> str:
    """The room of the package a module's path is in ("": the package's and runtime's own)."""
    parts = path.split("/")
    return parts[2] if len(parts) > 3 else ""


def source(path: str) -> str:
    return (PACKAGE.parent / path).read_text()


def of(kind: str):
    return lambda data: data.reads(kind)


# What a field is used for, where only some runs use it: as the notebook reads its data. The fold
# is picked where the data is in folds, or is records that carry none (pooled into folds).
USED = {
    **dict.fromkeys(("train_files", "valid_files", "test_files"), of("records")),
    **dict.fromkeys(("train_images", "group_column", "window"), of("images")),
    **dict.fromkeys(("test_csv", "metadata_columns"), lambda data: data.uses_metadata),
    "fold": lambda data: (
        data.folds > 1 or (data.trains_from == "records" and data.manifest is None)
    ),
}
# No notebook offers these: a notebook is one process on one machine, and replicas rehearsed
# on the CPU are a laptop's (`--simulate-replicas`); the metric and whether an image has several
# labels are the competition's, and what scores and answers for them is carried as it is
# (`kernel --metric` writes a notebook for another).
NOT_IN_NOTEBOOKS = (
    "simulate_replicas", "coordinator", "coordinator_timeout", "num_processes", "process_id",
    "metric", "multi_label",
)  # fmt: skip


def settings(notebook: str = "training", data: Data | None = None) -> list:
    """The fields the notebook offers: those its run uses (USED, of its `data` as the notebook
    reads it; None: not read, any). The inference notebooks leave out what only
    training reads, the folds, and what predict takes from the trained run (the model, the
    classes, the metric, and the weights: its own): a value there would count as given, and
    refuse a run trained with another. A blend's notebook leaves out the trained run and its
    flips too: BLEND gives each run's; a stack's, as a blend's, but for the training table."""
    from_the_run = (*config.fields_with("trained", "model"), "weights")
    folds = ("fold", "folds", "fold_seed")
    left_out = {
        "training": NOT_IN_NOTEBOOKS,
        "inference": (
            *NOT_IN_NOTEBOOKS,
            *config.TRAINING_ONLY,
            *config.TRAINING_DATA,
            *from_the_run,
            *folds,
        ),
    }
    left_out["blend"] = (*left_out["inference"], "trained_dir", "tta")
    # A stack's trees are fitted again on the training table's metadata: it reads train_csv.
    left_out["stack"] = tuple(name for name in left_out["blend"] if name != "train_csv")
    return [
        field
        for fields in config.sections().values()
        for field in fields
        if field.name not in left_out[notebook]
        and (data is None or USED.get(field.name, lambda data: True)(data))
    ]


def value(run: Run, name: str):
    """A field's value as the notebook sets it: a preset's file as the path it names (in the
    notebook every value is given, and a given path is used as it is). Defaults stay as they
    are: the notebook looks them up in its own data folder, Kaggle's input."""
    cfg = run.cfg
    preset = name in FILE_FIELDS and config.given(cfg, run.sources, name).startswith("preset")
    if preset and getattr(cfg, name):
        return run.places.file(name)
    return getattr(cfg, name)


def python_literal(value) -> str:
    return json.dumps(value) if isinstance(value, str) else repr(value)


def settings_cells(
    run: Run, accelerator: str, notebook: str, blend: dict | None, wheels: str, reading: Run
) -> tuple[str, str]:
    """The table of every other field with its default, one click away, and the config cell: the
    fields tuned most and every value this notebook was made with that is not a default, by
    Config's sections, of what `settings` offers for the data as `reading` reads it; in a blend's
    notebook, the blend's runs and weights after them. The install cell reads the backbones
    built: CONFIG's, or an inference notebook's trained runs'."""
    defaults, offered = Config(), settings(notebook, reading.data)
    built = [each["backbone"] for each in blend["runs"]] if blend else [run.cfg.backbone]
    shown = {
        field.name
        for field in offered
        if field.metadata["tuned"] or value(run, field.name) != getattr(defaults, field.name)
    }
    names = {field.name for field in offered}
    rows = []
    lines = [
        "# The settings of this run, by Config's sections: those tuned most, and every value",
        "# the notebook was made with. Every other field is listed above, with its default:",
        "# add it here to change it. The accelerator cell checks them all.",
        "CONFIG = dict(",
    ]
    for title_, fields in config.sections().items():
        chosen = [field for field in fields if field.name in shown]
        rest = [field for field in fields if field.name in names - shown]
        lines += [f"    # {title_}"] if chosen else []
        for field in chosen:
            literal = python_literal(value(run, field.name))
            lines.append(f"    {field.name}={literal},  # {field.metadata['help']}")
        rows += [f"| **{title_}** | | |"] if rest else []
        rows += [
            f"| `{field.name}` | `{python_literal(value(run, field.name))}` | "
            f"{field.metadata['help'].replace('|', '/')} |"
            for field in rest
        ]
    table = (
        "The next cell holds the settings tuned most. Every other field of `Config`, with "
        "its default, is one click away: add any of them to `CONFIG` to change it.\n\n"
        "<details><summary>Every other setting</summary>\n\n"
        "| field | default | what it does |\n|---|---|---|\n" + "\n".join(rows) + "\n\n</details>"
    )
    lines += [
        ")",
        "# The notebook stops in its first cells if Kaggle gives it another accelerator.",
        f"ACCELERATOR = {python_literal('' if accelerator == 'cpu' else accelerator)}",
        "# The backbones it builds: the install cell checks that keras-hub has them.",
        "BACKBONES_BUILT = "
        + ('[CONFIG["backbone"]]' if notebook == "training" else python_literal(built)),
        "# Where the install cell finds what the image lacks, offline (`kaggle wheels`).",
        f"WHEELS = {python_literal(wheels)}",
    ]
    if blend and blend_record.is_stack(blend):
        lines += [
            "# The runs this notebook stacks, each predicted from its training notebook's output",
            "# (trained_dir) with its own flips; the trees are fitted again on their out-of-fold",
            "# predictions and these metadata columns, as `stack` fitted them (cv: each run's).",
            "STACK = " + pprint.pformat(blend, sort_dicts=False, width=95),
        ]
    elif blend:
        lines += [
            "# The runs this notebook blends, each predicted from its training notebook's output",
            "# (trained_dir) with its own flips, weighed as `blend` fitted them on the runs'",
            "# out-of-fold predictions (cv: each run's, and the blend's).",
            "BLEND = " + pprint.pformat(blend, sort_dicts=False, width=95),
        ]
    return table, "\n".join(lines)


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
    competition = (
        f"the Kaggle competition [{cfg.competition}]"
        f"(https://www.kaggle.com/competitions/{cfg.competition})"
    )
    predicts = f"Predicts the test images of {competition} with"
    submit = (
        " Submit this notebook: Kaggle reruns it with the hidden test set in place of the public "
        "one.\n\n**Run all.** "
    )
    offline = (
        f"It trains nothing and needs no internet: it installs what Kaggle's image lacks from the "
        f"wheels of `{wheels}`."
        if wheels
        else "It trains nothing; on Kaggle's images it installs nothing and needs no internet."
    )
    if blend:
        runs = blend["runs"]
        listed = ", ".join(
            f"{run['name']} ({run['backbone']}, {run['image_size']} px"
            + (f", weight {run['weight']:.2f})" if notebook == "blend" else ")")
            for run in runs
        )
        each = (
            f"{predicts} each run its training notebook trained ({listed}), each at its own "
            f"image size and with its own test-time flips, on {WHERE[accelerator]}"
        )
    if notebook == "stack":
        columns = ", ".join(blend["metadata_columns"])
        return (
            f"# {TITLE} inference: a stack of {len(runs)} run{'s' if len(runs) > 1 else ''}\n\n"
            f"{each}. Then gradient-boosted trees, fitted again as `stack` fitted them on the "
            "runs' out-of-fold predictions"
            + (f" and the metadata ({columns})" if columns else "")
            + f" (CV {blend['metric']} {blend['stack_cv']:.4f}), write `submission.csv` from the "
            f"runs' probabilities.{submit}It trains no network, installs nothing and needs no "
            "internet."
        )
    if notebook == "blend":
        return (
            f"# {TITLE} inference: a blend of {len(runs)} runs\n\n{each}, and writes "
            "`submission.csv` of their probabilities weighed as `blend` fitted them on the runs' "
            f"out-of-fold predictions (CV {blend['metric']} {blend['blend_cv']:.4f}).{submit}"
            + offline
        )
    if notebook == "inference":
        return (
            f"# {TITLE} inference\n\n{predicts} the model the training notebook trained (its "
            f"output, `{cfg.trained_dir}`: the backbone, image size and classes come from the "
            f"run's `model.json`), on {WHERE[accelerator]}, and writes `submission.csv`.{submit}"
            + offline
        )
    name = BACKBONES[cfg.backbone].title
    weights = " with ImageNet weights" if from_kaggle_models(cfg) else ""
    classes = f"{cfg.num_classes} classes"
    if class_names:
        shown = ", ".join(class_names[:8]) + (", ..." if len(class_names) > 8 else "")
        classes += f" ({shown})"
    return (
        f"# {TITLE}\n\n{'An' if name[0] in 'AEIOU' else 'A'} {name} image classifier{weights} "
        f"for {competition}, {classes}, trained on {WHERE[accelerator]}; it writes "
        "`submission.csv`.\n\n**Run all.** The settings come first, then the accelerator check, "
        "which stops the run at once on a machine without the accelerator it was made for; the "
        "data steps and the model are in view to edit. " + installs(cfg, wheels)
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
        folded = dict(cell.folded or {})
        made.append(nbformat.v4.new_code_cell(cell.source, metadata=folded, id=f"cell-{index}"))
    notebook = nbformat.v4.new_notebook(cells=made)
    notebook.metadata = {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"},
    }
    nbformat.validate(notebook)
    return notebook


def as_script(cells: list[Cell]) -> str:
    """The same steps as one Python file: markdown as comments, a module in view as its code
    (its `from __future__` import first in the file, where Python takes it)."""
    future = "from __future__ import annotations"
    parts = [f"# {PROJECT}.py: the notebook {PROJECT}.ipynb as one script.", future]
    last_runtime = max(i for i, cell in enumerate(cells) if cell.folded == HIDDEN)
    for index, cell in enumerate(cells):
        if cell.kind == "markdown":
            parts.append("\n".join(f"# {line}".rstrip() for line in cell.source.splitlines()))
        elif cell.kind == "module":
            parts.append(cell.source.replace(future + "\n", "").strip())
        else:
            parts.append(cell.source)
        if index == last_runtime:
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
