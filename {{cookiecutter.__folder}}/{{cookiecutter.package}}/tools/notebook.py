"""The project as one notebook for a competitor to read, edit and run, and as one script.

Top to bottom as Martin Gorner's "Getting started with 100+ flowers on TPU": the settings
tuned most, the data steps, the accelerator, the checks, a look at the data, the model,
training, evaluation and the submission. The visible cells are what a competitor edits: the
settings, the data steps (written as the module the pipeline reads) and the model (passed to
train, evaluate and predict). Hidden cells write the rest of the runtime beside the notebook,
so nothing is installed; the tools that make the notebook stay out of it.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import nbformat

from ..runtime.backbone_choices import BACKBONES
from ..runtime.config import Config
from .settings_cell import config_source, other_settings

PACKAGE = Path(__file__).resolve().parents[1]
PROJECT = {{ cookiecutter.project | tojson }}
TITLE = {{ cookiecutter.project_name | tojson }}
# Shown as cells a competitor edits, not hidden: what they edit there is what runs.
DATA_STEPS = "runtime/data/steps.py"
MODEL = "runtime/model.py"
# The script's stand-in for the notebook's %%writefile cells.
WRITE_MODULE = """from pathlib import Path


def write_module(path, source):
    Path(path).write_text(source)"""
# The script's stand-in for the notebook's one-line errors (UserError._render_traceback_).
ONE_LINE_ERRORS = """import sys

from {package}.runtime.config import UserError


def one_line_errors(kind, error, traceback, python_hook=sys.excepthook):
    \"\"\"A problem the user can fix prints one line with the fix, no traceback.\"\"\"
    if issubclass(kind, UserError):
        print("error:", error, file=sys.stderr)
    else:
        python_hook(kind, error, traceback)


sys.excepthook = one_line_errors"""
HIDDEN = {"jupyter": {"source_hidden": True}, "_kg_hide-input": True, "_kg_hide-output": True}
WHERE = {"tpu": "a TPU v5e-8", "gpu": "two T4 GPUs", "cpu": "the CPU"}


@dataclasses.dataclass(frozen=True)
class Cell:
    kind: str  # "markdown", "code" or "module" (a file of the package, written by the cell)
    source: str
    path: str = ""  # for "module": where the cell writes it
    hidden: bool = True  # for "module": folded away, or shown for editing


def folders(package: str) -> list[str]:
    """The folders the module cells write into (%%writefile makes none)."""
    return sorted({str(Path(package, path).parent) for path in [*runtime_modules(), DATA_STEPS]})


def runtime_modules() -> list[str]:
    """What the notebook runs, as paths under the package: the runtime, without the two
    modules it shows (their cells are visible), and the package's __init__."""
    paths = ["__init__.py"] + sorted(
        path.relative_to(PACKAGE).as_posix() for path in (PACKAGE / "runtime").rglob("*.py")
    )
    return [path for path in paths if path not in (DATA_STEPS, MODEL)]


def cells(
    cfg: Config, accelerator: str, class_names: list[str] | None, inference: bool = False
) -> list[Cell]:
    """The notebook's cells: training from the top to submission.csv, or with `inference`
    only the prediction, with the trained run another notebook left (code competitions)."""
    package = PACKAGE.name
    imports = f"from {package}.runtime"
    head = title(cfg, accelerator, class_names, inference)
    steps = inference_steps(imports) if inference else training_steps(imports, package)
    return [
        Cell("markdown", head),
        Cell("markdown", "## Settings\n\n" + other_settings(cfg)),
        Cell("code", config_source(cfg, accelerator)),
        Cell(
            "markdown",
            f"## The project's code\n\nEach hidden cell writes one module of `{package}` "
            "(open one to read it); the data steps and the model are in view below. On Colab, "
            "whose TPU runtime has no TensorFlow and no keras-hub, the next cell installs "
            "`tensorflow-cpu` for the input pipeline and `keras-hub` for the backbone (Colab "
            "has internet; Kaggle has everything already, so nothing is ever installed there).",
        ),
        setup_cell(package),
        *[
            Cell("module", (PACKAGE / path).read_text(), f"{package}/{path}")
            for path in runtime_modules()
        ],
        Cell(
            "markdown",
            "## Data steps\n\nHow one record becomes an image and a label, for training, "
            "validation and test alike. This cell writes the module the input pipeline reads: "
            "edit it, then run the notebook from the top (a module loads once).",
        ),
        Cell("module", (PACKAGE / DATA_STEPS).read_text(), f"{package}/{DATA_STEPS}", False),
        Cell(
            "markdown",
            "## Accelerator\n\nFirst, before anything imports Keras: the accelerator decides "
            "the Keras backend (JAX on Kaggle's TPU image, whose TensorFlow is CPU-only).",
        ),
        Cell(
            "code",
            f"{imports} import accelerator\n"
            f"{imports}.config import from_settings\n"
            f"{imports}.paths import output_path\n"
            f"{imports}.plots import show\n\n"
            "cfg = from_settings(**CONFIG)\n"
            "found = accelerator.detect(cfg)\n"
            "accelerator.require(found, ACCELERATOR)",
        ),
        *steps,
    ]


def training_steps(imports: str, package: str) -> list[Cell]:
    return [
        Cell(
            "markdown",
            "## Doctor\n\nEverything a run depends on, checked before any training. The "
            "cells after it check again, in a moment: each split is read once a session.",
        ),
        Cell(
            "code",
            f"{imports}.config import UserError\n{imports}.doctor import doctor\n\n"
            "if doctor(cfg, found):\n"
            '    raise UserError("fix the problems above, then run the notebook again")',
        ),
        Cell(
            "markdown",
            "## Data preview\n\nA training batch as the model sees it, and the learning rate "
            "over the whole run.",
        ),
        Cell(
            "code",
            f"{imports} import preview\n\n"
            "show(preview.augmented_batch(cfg, found))\n"
            "show(preview.learning_rate(cfg, found))",
        ),
        Cell("markdown", "## Model\n\n" + docstring(MODEL)),
        Cell("code", model_source(package)),
        Cell(
            "markdown",
            "## Training\n\nA checkpoint after every epoch: run the cell again after an "
            "interruption and it resumes from the last finished epoch. With records in "
            'folds, `fold` validates and the others train (`fold="all"`: each in turn, '
            "then the out-of-fold score); each fold's run has its own folder and curves.",
        ),
        Cell(
            "code",
            f"{imports}.folds import runs\n{imports}.train import train\n\n"
            "history = train(cfg, found, build_model, compile_model)\n"
            "for run in runs(cfg):\n"
            '    show(output_path(run, "curves.png"))',
        ),
        Cell(
            "markdown",
            "## Evaluation\n\nPer-class scores on the validation records, and where the "
            "model confuses one class with another.",
        ),
        Cell(
            "code",
            f"{imports}.evaluate import evaluate\n\nshow(evaluate(cfg, found, build_model))",
        ),
        Cell(
            "markdown",
            "## Prediction\n\n`submission.csv`, row for row in the sample submission's order.",
        ),
        Cell(
            "code",
            f"import pandas as pd\n\n{imports}.predict import predict\n\n"
            "submission = predict(cfg, found, build_model)\n"
            "pd.read_csv(submission).head()",
        ),
    ]


def inference_steps(imports: str) -> list[Cell]:
    return [
        Cell("markdown", "## Model\n\n" + docstring(MODEL)),
        Cell("code", model_source(PACKAGE.name)),
        Cell(
            "markdown",
            "## Prediction\n\nEvery image the competition's test folder holds as this "
            "notebook runs (the hidden test set, when Kaggle reruns it to score it), with "
            "every trained fold model, row for row in the sample submission's order. The "
            "speed and the time the whole folder will take are printed after a few batches.",
        ),
        Cell(
            "code",
            f"import pandas as pd\n\n{imports}.predict import predict\n\n"
            "submission = predict(cfg, found, build_model)\n"
            "pd.read_csv(submission).head()",
        ),
    ]


def title(
    cfg: Config, accelerator: str, class_names: list[str] | None, inference: bool = False
) -> str:
    from ..runtime import backbones  # Keras: `kernel --help` needs none

    name = BACKBONES[cfg.backbone].title
    article = "An" if name[0] in "AEIOU" else "A"
    weights = " with ImageNet weights" if backbones.from_kaggle_models(cfg) else ""
    classes = f"{cfg.num_classes} classes"
    if class_names:
        shown = ", ".join(class_names[:8]) + (", ..." if len(class_names) > 8 else "")
        classes += f" ({shown})"
    competition = (
        f"the Kaggle competition [{cfg.competition}]"
        f"(https://www.kaggle.com/competitions/{cfg.competition})"
    )
    if inference:
        return (
            f"# {TITLE} inference\n\n"
            f"Predicts the test images of {competition} with the {name} the training "
            f"notebook trained (its output, `{cfg.trained_dir}`), on {WHERE[accelerator]}, "
            "and writes `submission.csv`. Submit this notebook: Kaggle reruns it with the "
            "hidden test set in place of the public one.\n\n"
            "**Run all.** It trains nothing, installs nothing and needs no internet."
        )
    return (
        f"# {TITLE}\n\n"
        f"{article} {name} image classifier{weights} for {competition}, "
        f"{classes}, trained on {WHERE[accelerator]}; it writes `submission.csv`.\n\n"
        "**Run all.** The settings come first; the data steps and the model are in view to "
        "edit; the accelerator cell stops the run at once if the accelerator is missing. "
        "Nothing is installed and nothing needs the internet."
    )


def docstring(path: str) -> str:
    """A module's docstring, as the markdown above its cell."""
    return ast.get_docstring(ast.parse((PACKAGE / path).read_text())) or ""


def model_source(package: str) -> str:
    """model.py as the notebook's model cell: without its docstring (the markdown above
    says it), its imports from the package spelled out."""
    text = (PACKAGE / MODEL).read_text()
    tree = ast.parse(text)
    body = text.splitlines()[tree.body[0].end_lineno :]
    return "\n".join(body).strip().replace("from .", f"from {package}.runtime.") + "\n"


def setup_cell(package: str) -> Cell:
    return Cell(
        "code",
        "\n".join(
            [
                "import importlib.util",
                "import os",
                "import subprocess",
                "import sys",
                "from importlib.metadata import version",
                "",
                'on_colab = importlib.util.find_spec("google") is not None and (',
                '    importlib.util.find_spec("google.colab") is not None',
                ")",
                'if on_colab and importlib.util.find_spec("tensorflow") is None:',
                '    print("Colab\'s TPU runtime has no TensorFlow: installing tensorflow-cpu")',
                "    subprocess.check_call(",
                '        [sys.executable, "-m", "pip", "install", "--quiet", "tensorflow-cpu"]',
                "    )",
                'if on_colab and importlib.util.find_spec("keras_hub") is None:',
                "    # --no-deps: keras-hub's tensorflow-text would pull a full TensorFlow, which",
                "    # fights JAX for the TPU (jax-ml/jax#29989). keras-hub 0.30 and later need",
                "    # Keras 3.15; Colab's TPU runtime may carry an older Keras.",
                '    keras = tuple(int(part) for part in version("keras").split(".")[:2])',
                '    hub = "keras-hub" if keras >= (3, 15) else "keras-hub<0.30"',
                '    print(f"Colab has no keras-hub: installing {hub} without its dependencies")',
                '    pip = [sys.executable, "-m", "pip", "install", "--quiet"]',
                '    subprocess.check_call([*pip, "--no-deps", hub])',
                '    subprocess.check_call([*pip, "kagglehub", "regex", "rich", "tokenizers"])',
                f"for folder in {folders(package)!r}:",
                "    os.makedirs(folder, exist_ok=True)",
            ]
        ),
    )


def as_notebook(cells: list[Cell]) -> nbformat.NotebookNode:
    """Outputs cleared, and no `metadata.kaggle`: a pinned docker image can send a TPU
    notebook to a CPU image (Kaggle/kaggle-cli#1197)."""
    made = []
    for cell in cells:
        if cell.kind == "markdown":
            made.append(nbformat.v4.new_markdown_cell(cell.source))
        elif cell.kind == "code":
            made.append(nbformat.v4.new_code_cell(cell.source))
        else:
            source = f"%%writefile {cell.path}\n{cell.source}"
            metadata = dict(HIDDEN) if cell.hidden else {}
            made.append(nbformat.v4.new_code_cell(source, metadata=metadata))
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
