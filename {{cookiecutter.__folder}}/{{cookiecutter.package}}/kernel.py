"""`kernel`: the project as one Kaggle notebook, the same as one script, and the
kernel-metadata.json that `kaggle kernels push` reads.

The notebook carries the package's own code: hidden cells write each module next to it, and
the cells a competitor reads import the package and run the steps in order (config,
accelerator, doctor, data preview, training, evaluation, prediction). So what runs on Kaggle
is exactly what the tests run, with nothing to pip install and no code dataset to attach.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import re
from pathlib import Path

import nbformat

from . import backbones
from .config import (
    FILE_FIELDS,
    KAGGLE_INPUT,
    Config,
    UserError,
    field_path,
    knobs,
    named,
    resolve_data_dir,
    typed,
)
from .files import output_folder, write_json, written_whole

PACKAGE = Path(__file__).resolve().parent
PROJECT = {{ cookiecutter.project | tojson }}
TITLE = {{ cookiecutter.project_name | tojson }}
# What `kaggle kernels push` asks Kaggle for. TPU v5e-8 and T4 x2 are what the editor offers.
ACCELERATORS = {
    "tpu": {"enable_gpu": False, "enable_tpu": True, "machine_shape": "TpuV5E8"},
    "gpu": {"enable_gpu": True, "enable_tpu": False, "machine_shape": "NvidiaTeslaT4"},
    "cpu": {"enable_gpu": False, "enable_tpu": False},
}
# The script's stand-in for the notebook's %%writefile cells.
WRITE_MODULE = """from pathlib import Path


def write_module(path, source):
    Path(path).parent.mkdir(exist_ok=True)
    Path(path).write_text(source)"""
# The script's stand-in for the notebook's one-line errors (UserError._render_traceback_).
ONE_LINE_ERRORS = """import sys

from {package}.config import UserError


def one_line_errors(kind, error, traceback, python_hook=sys.excepthook):
    \"\"\"A problem the user can fix prints one line with the fix, no traceback.\"\"\"
    if issubclass(kind, UserError):
        print("error:", error, file=sys.stderr)
    else:
        python_hook(kind, error, traceback)


sys.excepthook = one_line_errors"""
HIDDEN = {"jupyter": {"source_hidden": True}, "_kg_hide-input": True, "_kg_hide-output": True}


@dataclasses.dataclass(frozen=True)
class Cell:
    kind: str  # "markdown", "code" or "module" (a file of the package, written by the cell)
    source: str
    path: str = ""  # for "module": where the cell writes it


def write_kernel(
    cfg: Config, accelerator: str = "tpu", user: str = "", output: str = "kernel", datasets=()
) -> Path:
    """Write the notebook, the script and kernel-metadata.json into `output`; returns it.
    `datasets` are Kaggle datasets (owner/slug) to attach beside the competition."""
    if accelerator not in ACCELERATORS:
        raise UserError(f"--accelerator {accelerator!r}: one of {', '.join(ACCELERATORS)}")
    user = user or configured_user()
    cfg, pushed = with_pushed_records(cfg)
    sources = dataset_sources(cfg, user, [*pushed, *datasets])
    folder = Path(output)
    output_folder(folder, "kernel --output")
    cells = notebook_cells(cfg, accelerator)
    with written_whole(folder / f"{PROJECT}.ipynb") as temporary:
        nbformat.write(as_notebook(cells), temporary)
    with written_whole(folder / f"{PROJECT}.py") as temporary:
        temporary.write_text(as_script(cells))
    write_json(folder / "kernel-metadata.json", metadata(cfg, accelerator, user, sources))
    return folder


def configured_user() -> str:
    """The username in the kaggle client's own configuration, without any network call."""
    from . import kaggle_api

    user = kaggle_api.configured_username()
    if not user:
        raise UserError(
            "no Kaggle username for the kernel's id: pass --kaggle-user NAME, or give the "
            f"kaggle client your credentials ({kaggle_api.CREDENTIALS_HELP})"
        )
    return user


def slug(text: str) -> str:
    """As Kaggle makes a kernel's slug from its title: lowercase words joined by '-'."""
    return "-".join(re.findall(r"[a-z0-9]+", text.lower()))


def metadata(cfg: Config, accelerator: str, user: str, datasets: list[str]) -> dict:
    name = slug(PROJECT)
    if len(name) < 5:  # Kaggle refuses shorter kernel slugs
        name += "-notebook"
    # Kaggle derives the slug from the title: a title that slugifies elsewhere makes a new kernel.
    title = TITLE if slug(TITLE) == name else name.replace("-", " ").title()
    return {
        "id": f"{user}/{name}",
        "title": title,
        "code_file": f"{PROJECT}.ipynb",
        "language": "python",
        "kernel_type": "notebook",
        "is_private": True,
        # The client's default is true; competitions run offline, TFDS sets download.
        "enable_internet": cfg.data_dir.startswith("tfds:"),
        **ACCELERATORS[accelerator],
        "competition_sources": [cfg.competition],
        "dataset_sources": datasets,
        "kernel_sources": [],
        "model_sources": model_sources(cfg),
    }


def model_sources(cfg: Config) -> list[str]:
    """The backbone's keras-hub preset on Kaggle Models, attached so that it loads with the
    internet off; its config.json is the architecture, so it is needed with weights none too.
    A preset folder given in Config.weights comes from a dataset instead (dataset_sources)."""
    return [backbones.handle(cfg)] if backbones.from_kaggle_models(cfg) else []


def with_pushed_records(cfg: Config) -> tuple[Config, list[str]]:
    """A records folder pushed with `kaggle dataset` is read from Kaggle's input in the
    notebook, and the competition's sample submission from the competition's folder there."""
    from .kaggle_api import pushed_dataset

    folder = resolve_data_dir(cfg)[0]
    ref = "" if "://" in folder or folder.startswith("tfds:") else pushed_dataset(folder)
    if not ref:
        return cfg, []
    where = f"{KAGGLE_INPUT}/{ref.split('/')[1]}"
    print(f"attaching the dataset {ref} (pushed from {folder}): the notebook reads {where}")
    sample = cfg.sample_submission
    if sample and not sample.startswith("/") and "://" not in sample:
        sample = f"{KAGGLE_INPUT}/{cfg.competition}/{sample}"
    return dataclasses.replace(cfg, data_dir=where, sample_submission=sample), [ref]


def dataset_sources(cfg: Config, user: str, datasets) -> list[str]:
    """The datasets to attach: those given, and one for each Config path under Kaggle's input
    folder that is not the competition's (an attached weights file, say), as the user's own."""
    attached = list(datasets)
    for field in knobs():
        value = getattr(cfg, field.name)
        if not isinstance(value, str) or not value.startswith(f"{KAGGLE_INPUT}/"):
            continue
        name = Path(value).relative_to(KAGGLE_INPUT).parts[0]
        if name != cfg.competition and not any(d.split("/")[-1] == name for d in attached):
            attached.append(f"{user}/{name}")
            print(
                f"attaching the dataset {user}/{name} for {named(field.name)} (another owner's? "
                "pass --dataset OWNER/SLUG)"
            )
    return attached


def config_source(cfg: Config, accelerator: str) -> str:
    """The config cell: every value that differs from the defaults, then the rest as comments."""
    defaults = Config()
    given, rest = [], []
    for field in knobs():
        value = getattr(cfg, field.name)
        if field.name in FILE_FIELDS and value and not typed(cfg, field.name):
            value = field_path(cfg, field.name)  # a preset's file, in its data folder
        line = f"{field.name}={python_literal(value)},"
        if value != getattr(defaults, field.name):
            given.append(f"    {line}")
        else:
            rest.append(f"    # {line}  # {field.metadata['help']}")
    required = "" if accelerator == "cpu" else accelerator
    return "\n".join(
        [
            "# Every knob of this run: the values the notebook was made with, then the other",
            "# fields of Config with their defaults. The accelerator cell checks them all.",
            "CONFIG = dict(",
            *given,
            *rest,
            ")",
            "# The notebook stops in its first cells if Kaggle gives it another accelerator.",
            f"ACCELERATOR = {python_literal(required)}",
        ]
    )


def python_literal(value) -> str:
    return json.dumps(value) if isinstance(value, str) else repr(value)


def notebook_cells(cfg: Config, accelerator: str) -> list[Cell]:
    package = PACKAGE.name
    modules = sorted(PACKAGE.glob("*.py"))
    where = {"tpu": "a TPU v5e-8", "gpu": "two T4 GPUs", "cpu": "the CPU"}[accelerator]
    return [
        Cell(
            "markdown",
            f"# {TITLE}\n\n"
            f"A `{cfg.backbone}` image classifier for the Kaggle competition "
            f"[{cfg.competition}](https://www.kaggle.com/competitions/{cfg.competition}), "
            f"trained on {where}; it writes `submission.csv`.\n\n"
            "**Run all.** The next cell holds every setting. The hidden cells after it write "
            f"the project's code (the `{package}` package, {len(modules)} modules) next to "
            "this notebook: nothing is installed and nothing needs the internet. The "
            "accelerator cell stops the run at once if the accelerator is missing.",
        ),
        Cell("code", config_source(cfg, accelerator)),
        Cell(
            "markdown",
            f"## The project's code\n\nEach hidden cell writes one module of `{package}`; "
            "open one to read it. On Colab, whose TPU runtime has no TensorFlow and no "
            "keras-hub, the next cell installs `tensorflow-cpu` for the input pipeline and "
            "`keras-hub` for the backbone (Colab has internet; Kaggle has everything already, "
            "so nothing is ever installed there).",
        ),
        setup_cell(package),
        *[Cell("module", path.read_text(), f"{package}/{path.name}") for path in modules],
        Cell(
            "markdown",
            "## Accelerator\n\nFirst, before anything imports Keras: the accelerator decides "
            "the Keras backend (JAX on Kaggle's TPU image, whose TensorFlow is CPU-only).",
        ),
        Cell(
            "code",
            f"from {package} import accelerator\n"
            f"from {package}.config import Config, output_path\n"
            f"from {package}.plots import show\n\n"
            "cfg = Config(**CONFIG)\n"
            "found = accelerator.detect(cfg)\n"
            "accelerator.require(found, ACCELERATOR)",
        ),
        Cell(
            "markdown",
            "## Doctor\n\nEverything a run depends on, checked before any training.",
        ),
        Cell(
            "code",
            f"from {package}.config import UserError\nfrom {package}.doctor import doctor\n\n"
            "if doctor(cfg, found):  # the same checks train and predict run first\n"
            '    raise UserError("fix the problems above, then run the notebook again")',
        ),
        Cell(
            "markdown",
            "## Data preview\n\nA training batch as the model sees it, and the learning rate "
            "over the whole run.",
        ),
        Cell(
            "code",
            f"from {package} import preview\n\n"
            "show(preview.augmented_batch(cfg, found))\n"
            "show(preview.learning_rate(cfg, found))",
        ),
        Cell(
            "markdown",
            "## Training\n\nA checkpoint after every epoch: run the cell again after an "
            "interruption and it resumes from the last finished epoch. With records in "
            'folds, `fold` validates and the others train (`fold="all"`: each in turn, '
            "then the out-of-fold score); each fold's run has its own folder and curves.",
        ),
        Cell(
            "code",
            f"from {package}.folds import runs\nfrom {package}.train import train\n\n"
            "history = train(cfg, found)\n"
            "for run in runs(cfg):  # with records in folds, each fold's run\n"
            '    show(output_path(run, "curves.png"))',
        ),
        Cell(
            "markdown",
            "## Evaluation\n\nPer-class scores on the validation records, and where the "
            "model confuses one class with another.",
        ),
        Cell(
            "code",
            f"from {package}.evaluate import evaluate\n\nshow(evaluate(cfg, found))",
        ),
        Cell(
            "markdown",
            "## Prediction\n\n`submission.csv`, row for row in the sample submission's order.",
        ),
        Cell(
            "code",
            f"import pandas as pd\n\nfrom {package}.predict import predict\n\n"
            "submission = predict(cfg, found)\n"
            "pd.read_csv(submission).head()",
        ),
    ]


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
                f"os.makedirs({python_literal(package)}, exist_ok=True)",
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
            made.append(nbformat.v4.new_code_cell(source, metadata=dict(HIDDEN)))
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
