"""`kernel` writes one notebook that runs alone, offline, as Kaggle runs it.

The notebook and the script are run in an empty folder (nothing of the project beside them)
by a real Jupyter kernel or Python, in a network namespace with only loopback, on the demo
competition laid out as Kaggle mounts a competition: /kaggle/input/<competition>/...
"""

import copy
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from builders import ids
from conftest import OFFLINE, PROJECT
from PIL import Image

from {{ cookiecutter.package }}.runtime import config
from {{ cookiecutter.package }}.runtime.backbone_choices import BACKBONES
from {{ cookiecutter.package }}.runtime.config import BACKENDS, PRECISIONS, Config, knobs
from {{ cookiecutter.package }}.runtime.errors import UserError
from {{ cookiecutter.package }}.runtime.learning import backbones
from {{ cookiecutter.package }}.runtime.learning.model import build_model
from {{ cookiecutter.package }}.runtime.platform import backend
from {{ cookiecutter.package }}.runtime.stages.run import start
from {{ cookiecutter.package }}.runtime.submission_shapes import SHAPES
from {{ cookiecutter.package }}.tools import carried as carrying
from {{ cookiecutter.package }}.tools import kernel
from {{ cookiecutter.package }}.tools import notebook as notebooks
from {{ cookiecutter.package }}.tools.demo import from_preset

PACKAGE = "{{ cookiecutter.package }}"
NAME = "{{ cookiecutter.project }}"
COMPETITION = "{{ cookiecutter.competition }}"
BACKBONE = "efficientnet-b0"  # a keras-hub preset (tests/presets.py makes a small one)
DIGITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
PICTURES = {"augmented_batch.png", "learning_rate.png", "curves.png", "confusion.png"}
PICTURES |= {"training_batch.png", "predictions.png"}  # validation images, answered
# What a cell in view holds, by what it defines: the data steps, the model, the training loop.
DATA_STEPS, MODEL, TRAINING_LOOP = "def as_label(", "def build_model(", "def train_fold("
# A second dense layer in the head, as a competitor would add it in the model cell.
HEAD = "    x = layers.Dropout(cfg.dropout)(x)\n"
WIDER_HEAD = HEAD + '    x = layers.Dense(32, activation="relu", name="hidden")(x)\n'
# Lines of the data cell and of the model cell; an edit prints a line above each.
IMAGE_STEP = "    return to_size(decoded(encoded), cfg.image_size)\n"
MODEL_INPUT = "    inputs = keras.Input("
# The training loop's callbacks; an edit adds one that prints at each epoch's end.
CALLBACKS = "            checkpoints.EveryEpoch(cfg, run.places, plan, history, accelerator.writes_files),\n"
EDITED_CALLBACK = (
    "            keras.callbacks.LambdaCallback(\n"
    "                on_epoch_end=lambda epoch, logs: print(f'edited loop: epoch {epoch + 1}')\n"
    "            ),\n"
)


@pytest.fixture(scope="module")
def kaggle(tmp_path_factory):
    """A Kaggle-like root: the demo competition under kaggle/input, and kaggle/working."""
    root = tmp_path_factory.mktemp("kaggle-root")
    from {{ cookiecutter.package }}.tools.demo import write_competition

    write_competition(root / "kaggle" / "input" / COMPETITION, size=32)
    return root


def make_kernel(kaggle: Path, folder: Path, *flags: str) -> Path:
    """`python -m PACKAGE kernel` for the demo on this Kaggle-like root; returns the folder."""
    command = [sys.executable, "-m", PACKAGE, "kernel", "--preset", "demo", "--epochs", "2"]
    command += ["--data-dir", str(kaggle / "kaggle" / "input" / COMPETITION)]
    command += ["--output-dir", str(folder / "working"), "--kaggle-user", "alice"]
    command += ["--output", str(folder / "kernel"), *flags]
    done = subprocess.run(
        command, check=False, cwd=PROJECT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return folder / "kernel"


def alone(path: Path, folder: Path) -> Path:
    """The file copied into an empty folder: nothing of the project is importable beside it."""
    folder.mkdir()
    return Path(shutil.copy(path, folder))


def offline(*command, cwd: Path) -> subprocess.CompletedProcess:
    # As on a new machine: no log level set, so the notebook's own quiet start is what shows.
    unset = ("PYTHONPATH", "KERAS_BACKEND", "TF_CPP_MIN_LOG_LEVEL")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    return subprocess.run(
        [*OFFLINE, *command],
        check=False,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def execute(notebook: Path, *driver: str) -> subprocess.CompletedProcess:
    """Jupyter's own runner (nbclient) in a real kernel, saving the outputs in place; under
    `driver` (a command that runs the rest) if given."""
    jupyter = Path(sys.executable).with_name("jupyter")
    return offline(
        *driver, jupyter, "execute", "--inplace", "--timeout=600", notebook.name,
        cwd=notebook.parent,
    )  # fmt: skip


def errors(notebook: Path) -> list:
    executed = nbformat.read(notebook, as_version=4)
    outputs = [output for cell in executed.cells for output in cell.get("outputs", [])]
    return [output for output in outputs if output.output_type == "error"]


def text_of(notebook: Path) -> str:
    executed = nbformat.read(notebook, as_version=4)
    outputs = [output for cell in executed.cells for output in cell.get("outputs", [])]
    return "".join(output.get("text", "") for output in outputs)


# Where the attached model is mounted: a folder neither of Kaggle's layouts names, so that only
# the data proxy can say where it is, and the notebook's way to the proxy is run too.
MODEL_MOUNT = "model-mounted-elsewhere"


def as_kaggle_mounts(tmp_path: Path, preset: str) -> tuple[Path, Path]:
    """The preset mounted where only the data proxy knows, under a mount root of its own; the
    mounts file and request log of tests/fake_data_proxy.py."""
    handle = BACKBONES[BACKBONE].handle
    slug = MODEL_MOUNT
    shutil.copytree(preset, tmp_path / "models" / slug)
    mounts = tmp_path / "mounts.json"
    mounts.write_text(json.dumps({"root": str(tmp_path / "models"), "models": {handle: slug}}))
    return mounts, tmp_path / "proxy-log.json"


def in_view(notebook, holding: str):
    """The one cell in view whose code holds `holding` (a module in view: what it defines)."""
    (cell,) = [c for c in notebook.cells if holding in c.source and not folded(c)]
    return cell


def folded(cell) -> bool:
    return bool(cell.metadata.get("jupyter", {}).get("source_hidden"))


def said_by(cell) -> str:
    return "".join(output.get("text", "") for output in cell.get("outputs", []))


def pictures(cell) -> int:
    return sum("image/png" in output.get("data", {}) for output in cell.get("outputs", []))


@pytest.mark.slow
def test_the_notebook_runs_alone_offline_worked_a_cell_at_a_time_and_run_all_again(
    kaggle, tmp_path, preset
):
    """As Kaggle runs it: the notebook's variables set, the keras-hub backbone attached from
    Kaggle Models where neither mount layout has it, so kagglehub's own resolver asks a fake
    data proxy, then reads the mount. Then, as a competitor works it, in the same kernel
    (in_one_kernel.py): the data cell edited, and it and the cells below it down to the
    training cell run again; then the model cell likewise; the training run uses each edit.
    Last, every cell run again with the data steps, the model and the loop edited."""
    flags = ["--accelerator", "cpu", "--backbone", BACKBONE, "--weights", "imagenet"]
    folder = make_kernel(kaggle, tmp_path, *flags, "--steps-per-epoch", "4")  # 2 short epochs
    metadata = json.loads((folder / "kernel-metadata.json").read_text())
    assert metadata["model_sources"] == [BACKBONES[BACKBONE].handle]
    notebook = alone(folder / f"{NAME}.ipynb", tmp_path / "run")
    edited = nbformat.read(notebook, as_version=4)
    cell = in_view(edited, MODEL)
    cell.source = cell.source.replace(HEAD, WIDER_HEAD)
    nbformat.write(edited, notebook)
    cells = edited.cells
    training = cells.index(in_view(edited, "history = train(run)"))
    passes = [(notebook, 0, len(cells) - 1)]  # Run All, then a cell at a time
    for name, holding, line, printed in (
        ("data", DATA_STEPS, IMAGE_STEP, "edited data steps"),
        ("model", MODEL, MODEL_INPUT, "edited model"),
    ):
        worked = copy.deepcopy(edited)
        cell = in_view(worked, holding)
        assert line in cell.source
        cell.source = cell.source.replace(line, f"    print({printed!r})\n" + line)
        path = notebook.with_name(f"{name}.ipynb")
        nbformat.write(worked, path)
        passes.append((path, cells.index(in_view(edited, holding)), training))
    again = notebook.with_name("edited.ipynb")
    nbformat.write(edited_again(edited), again)
    passes.append((again, 0, len(cells) - 1))
    mounts, log = as_kaggle_mounts(tmp_path, preset(BACKBONE))
    proxy = [sys.executable, str(PROJECT / "tests" / "fake_data_proxy.py"), str(mounts), str(log)]
    driver = [sys.executable, str(PROJECT / "tests" / "in_one_kernel.py")]
    plan = [str(part) for one in passes for part in (one[0].name, *one[1:])]
    done = offline(*proxy, *driver, *plan, cwd=notebook.parent)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    owner, model, framework, variation, version = BACKBONES[BACKBONE].handle.split("/")
    asked = {"OwnerSlug": owner, "ModelSlug": model, "Framework": framework}
    asked |= {"InstanceSlug": variation, "VersionNumber": version}
    requests = json.loads(log.read_text())  # each command that builds the model asks once
    assert requests and all(request["json"] == {"modelRef": asked} for request in requests)

    working = tmp_path / "working"
    sample = kaggle / "kaggle" / "input" / COMPETITION / "sample_submission.csv"
    assert ids(working / "submission.csv") == ids(sample)  # row for row
    assert PICTURES <= {path.name for path in working.iterdir()}
    executed = nbformat.read(notebook, as_version=4)
    assert not errors(notebook) and not errors(again)
    # A batch is shown before the first cell that calls fit, the learning curves after it.
    fits = next(i for i, c in enumerate(executed.cells) if ".fit(" in c.source)
    assert sum(map(pictures, executed.cells[:fits])) >= 2  # the batch, before and in the model
    assert pictures(executed.cells[training]) >= 1  # the curves
    assert sum(map(pictures, executed.cells)) == 6  # and learning rate, confusion, predictions
    text = "".join(map(said_by, executed.cells))
    assert "problems: none, ready to train" in text and "Epoch 2/2" in text
    (summary,) = [cell for cell in executed.cells if "built.summary()" in cell.source]
    layers = "".join(output.get("data", {}).get("text/plain", "") for output in summary.outputs)
    assert "Total params: " in layers  # the model's layers, in a folded output
    startup = re.search(r"^[IWE]\d{4} |absl::InitializeLog|oneDNN", text, re.MULTILINE)
    assert not startup, text[:3000]  # TensorFlow's start-up lines stay out of the notebook
    cfg, _ = from_preset("demo", {"backbone": BACKBONE, "weights": preset(BACKBONE)})
    unedited = build_model(cfg, backbones.load(cfg))
    features = unedited.get_layer("pool").output.shape[-1]
    wider = (features * 32 + 32) + (32 * 10 + 10) - (features * 10 + 10)
    assert f"{unedited.count_params() + wider:,} parameters" in text  # the edited cell ran
    mounted = tmp_path / "models" / MODEL_MOUNT
    found = f"weights: {BACKBONE}, ImageNet weights of kaggle://{BACKBONES[BACKBONE].handle} at {mounted}"
    assert found in text  # doctor says which model it found, and where
    assert "precision    recall  f1-score" in text  # scikit-learn's per-class report
    assert re.search(r"^ +seven +\d", text, re.MULTILINE)  # its rows are the demo's class names
    said = Image.open(working / "predictions.png").text["Description"]
    assert "Validation images, predicted (" in said and any(n in said for n in DIGITS), said
    for picture in ("augmented_batch.png", "confusion.png"):  # titles and axes name them too
        said = Image.open(working / picture).text["Description"]
        assert sum(name in said.split(" | ") for name in DIGITS) >= 3, said
    runtime = notebook.parent / PACKAGE / "runtime"
    assert (runtime / "stages" / "fitting.py").is_file()  # it wrote its code
    assert not (runtime / "learning" / "model.py").exists()  # the model cell is the module

    assert "edited" not in text
    # A cell at a time: the training run used the data cell's edit, then the model cell's.
    data_pass = nbformat.read(notebook.with_name("data.ipynb"), as_version=4).cells
    assert "edited data steps" in said_by(data_pass[training])
    assert "edited model" not in said_by(data_pass[training])
    model_pass = nbformat.read(notebook.with_name("model.ipynb"), as_version=4).cells
    assert "edited model" in said_by(model_pass[training])
    # Run All again, with the data steps, the model and the loop edited.
    cells = nbformat.read(again, as_version=4).cells
    for call in ("history = train(run", "show(evaluate(run", "written = predict(run"):
        (cell,) = [c for c in cells if call in c.source]
        assert "edited data steps" in said_by(cell) and "edited model" in said_by(cell), call
    said = said_by(cells[training])
    assert "edited loop: epoch 3" in said and "Epoch 3/3" in said  # its callback, fit resumed


def edited_again(notebook):
    """The notebook with its data steps and its model edited, each to print a line, and its
    training loop given a callback that prints at each epoch's end; one epoch more, which
    the run resumes to train."""
    edited = copy.deepcopy(notebook)
    (settings,) = [c for c in edited.cells if c.source.startswith("# The settings")]
    assert "    epochs=2," in settings.source
    settings.source = settings.source.replace("    epochs=2,", "    epochs=3,")
    data, model = in_view(edited, DATA_STEPS), in_view(edited, MODEL)
    loop = in_view(edited, TRAINING_LOOP)
    assert IMAGE_STEP in data.source and MODEL_INPUT in model.source and CALLBACKS in loop.source
    data.source = data.source.replace(IMAGE_STEP, '    print("edited data steps")\n' + IMAGE_STEP)
    model.source = model.source.replace(MODEL_INPUT, '    print("edited model")\n' + MODEL_INPUT)
    loop.source = loop.source.replace(CALLBACKS, CALLBACKS + EDITED_CALLBACK)
    return edited


def modules_written(notebook) -> list[str]:
    """What the notebook's folded cells write, as paths under the package."""
    written = re.compile(rf"^write_module\('{PACKAGE}/([^']+)'", re.MULTILINE)
    return sorted(path for cell in notebook.cells for path in written.findall(cell.source))


@pytest.mark.slow
def test_the_script_runs_alone_offline_the_same_way(kaggle, tmp_path):
    # One short epoch: the notebook's run above trains two.
    flags = ["--accelerator", "cpu", "--epochs", "1", "--steps-per-epoch", "2"]
    folder = make_kernel(kaggle, tmp_path, *flags)
    script = alone(folder / f"{NAME}.py", tmp_path / "run")
    done = offline(sys.executable, script.name, cwd=script.parent)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    working = tmp_path / "working"
    sample = kaggle / "kaggle" / "input" / COMPETITION / "sample_submission.csv"
    assert ids(working / "submission.csv") == ids(sample)
    assert PICTURES <= {path.name for path in working.iterdir()}
    package = script.parent / PACKAGE
    written = sorted(p.relative_to(package).as_posix() for p in package.rglob("*.py"))
    assert written == modules_written(nbformat.read(folder / f"{NAME}.ipynb", as_version=4))
    assert not [name for name in written if name.startswith("tools/") or "__main__" in name]
    for name in written:  # each module written as it is in the package, to the byte
        assert (package / name).read_text() == (PROJECT / PACKAGE / name).read_text()


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["ipynb", "py"])
def test_a_notebook_made_for_a_tpu_stops_in_its_first_cells_without_one(kaggle, tmp_path, kind):
    """Kaggle can run a pushed TPU notebook on a CPU image: it must stop, not train for hours,
    with one line and no traceback, as a notebook and as a script."""
    folder = make_kernel(kaggle, tmp_path)  # --accelerator tpu, the default
    copied = alone(folder / f"{NAME}.{kind}", tmp_path / "run")
    done = (
        execute(copied)
        if kind == "ipynb"
        else offline(sys.executable, copied.name, cwd=copied.parent)
    )
    assert done.returncode != 0
    assert "error: this run needs a TPU but would use the cpu" in done.stderr
    assert "pick a TPU accelerator in the notebook's settings" in done.stderr
    assert "Traceback" not in done.stderr.split("CellExecutionError")[-1]
    assert not (tmp_path / "working").exists()  # stopped before doctor, training or output


def read(folder: Path):
    metadata = json.loads((folder / "kernel-metadata.json").read_text())
    return metadata, nbformat.read(folder / metadata["code_file"], as_version=4)


@pytest.mark.parametrize(
    ("accelerator", "asked"),
    [
        ("tpu", {"machine_shape": "TpuV5E8", "enable_tpu": True, "enable_gpu": False}),
        ("gpu", {"machine_shape": "NvidiaTeslaT4", "enable_tpu": False, "enable_gpu": True}),
        ("cpu", {"enable_tpu": False, "enable_gpu": False}),
    ],
)
def test_kernel_metadata_asks_kaggle_for_the_accelerator_with_internet_off(
    tmp_path, accelerator, asked
):
    folder = kernel.write_kernel(Config(), accelerator, "alice", str(tmp_path))
    metadata, notebook = read(folder)
    assert metadata["id"] == f"alice/{kernel.slug(NAME)}"
    assert kernel.slug(metadata["title"]) == kernel.slug(NAME)  # else Kaggle makes a new kernel
    assert {key: metadata.get(key) for key in ("machine_shape", *asked)} == {
        "machine_shape": None,
        **asked,
    }
    assert metadata["enable_internet"] is False and metadata["is_private"] is True
    assert metadata["competition_sources"] == [COMPETITION]
    assert (metadata["language"], metadata["kernel_type"]) == ("python", "notebook")
    assert "docker_image" not in metadata and "kaggle" not in notebook.metadata
    assert (folder / metadata["code_file"]).is_file() and (folder / f"{NAME}.py").is_file()


def test_the_notebook_reads_top_to_bottom_with_every_given_value_in_its_config_cell(tmp_path):
    cfg = Config(epochs=3, batch_size=64, weights="/kaggle/input/effnet/b0.h5")
    folder = kernel.write_kernel(cfg, "tpu", "alice", str(tmp_path))
    metadata, notebook = read(folder)
    shown = [c for c in notebook.cells if not folded(c)]
    hidden = [c for c in notebook.cells if folded(c)]
    # Folded in Jupyter, on Kaggle and in Colab: five cells at most, each saying what it does.
    assert 1 < len(hidden) <= 5 and all(c.cell_type == "code" for c in hidden)
    assert all(c.source.startswith("#@title ") for c in hidden)
    assert all(c.metadata["cellView"] == "form" and c.metadata["_kg_hide-input"] for c in hidden)
    assert not [c for c in shown if c.source.startswith("%%writefile")]
    *runtime, install = hidden
    assert "tensorflow-cpu" in install.source and "keras-hub" in install.source
    assert install.source.startswith("#@title Install what this machine lacks")
    assert all("write_module(" in c.source for c in runtime)  # before: it reads the registry
    assert shown[0].cell_type == "markdown" and shown[0].source.startswith("# ")
    assert "An EfficientNet-B0 image classifier" in shown[0].source
    settings, config_cell = shown[1].source, shown[2].source
    assert "    epochs=3," in config_cell and "    batch_size=64," in config_cell
    assert '    weights="/kaggle/input/effnet/b0.h5",' in config_cell
    assert "    dropout=0.2," in config_cell  # tuned often: shown with its default
    assert "    # Training\n" in config_cell  # grouped as Config groups its fields
    assert "seed=" not in config_cell and "| `seed` | `42` | random seed |" in settings
    # the competition's records
    reading = kernel.as_it_reads(start(cfg, on_accelerator=False, read=False), inference=False)
    offered = {field.name for field in notebooks.settings("training", reading.data)}
    for field in knobs():  # what the run uses: in the cell, or one click away with its default
        listed = f"    {field.name}=" in config_cell or f"| `{field.name}` |" in settings
        assert listed == (field.name in offered), field.name
    for field in ("coordinator", "num_processes", "process_id", "simulate_replicas"):
        assert field not in offered  # a notebook is one process: a setting it cannot use
    assert 'ACCELERATOR = "tpu"' in config_cell
    headings = [c.source.splitlines()[0] for c in shown if c.cell_type == "markdown"]
    assert headings[1:] == [  # the label audit and pseudo-labels need fold="all": left out
        "## Settings",
        "## Accelerator check",
        "## The project's code",
        "## The run",
        "## Data steps",
        "## Datasets",
        "## A training batch",
        "## Model",
        "## The model's layers",
        "## Recipe",
        "## Doctor",
        "## What the model trains on",
        "## Training loop",
        "## Training",
        "## Evaluation",
        "## Prediction",
    ]
    code = [c.source for c in shown if c.cell_type == "code"]
    for module, holding in {  # modules a competitor reads and edits, each a cell in view
        "data/steps.py": "def image(",
        "data/pipeline.py": "def for_training(",
        "learning/model.py": "def build_model(",
        "learning/recipe.py": "def compile_model(",
        "stages/train.py": "model.fit(",
    }.items():  # the module's code as it is, to the byte, its imports absolute
        assert (PROJECT / PACKAGE / "runtime" / module).read_text() in code, module
        assert holding in (PROJECT / PACKAGE / "runtime" / module).read_text()
    assert not [source for source in code if re.search(r"^from \.", source, re.MULTILINE)]
    assert [s for s in code if "history = train(run)" in s]
    assert [s for s in code if "preview.augmented_batch(run)" in s]
    assert [s for s in code if "if doctor(run):" in s]
    (summary,) = [c for c in shown if "built.summary()" in c.source]
    assert summary.metadata["jupyter"]["outputs_hidden"]  # the layers, one click away
    modules = modules_written(notebook)
    assert modules and not [path for path in modules if "tools/" in path or "__main__" in path]
    assert not {"runtime/data/steps.py", "runtime/learning/model.py"} & set(modules)
    assert all(not c.get("outputs") for c in notebook.cells if c.cell_type == "code")
    # Attached weights come from a dataset: it is attached, as the user's own.
    assert metadata["dataset_sources"] == ["alice/effnet"]


# A setting the notebook offers, and the modules only it reaches: carried in every training
# notebook, so that it works when set in the config cell.
OFFERED = {
    "pseudo-labels": (
        {"pseudo_labels": "kaggle:notebooks/alice/all/pseudo_labels.csv"},
        ["data/pseudo_labels.py"],
    ),
    "corrections": ({"drop_ids": "kaggle:datasets/alice/x/drop.csv"}, ["data/corrections.py"]),
    "mixing": ({"mixup": 0.2}, ["learning/mixing.py"]),
    "attention": ({"backbone": "dinov3-small", "image_size": 224}, ["learning/attention.py"]),
    "small cnn": ({"backbone": "small-cnn"}, ["learning/small_cnn.py"]),
}
# A setting no notebook of the default render offers (the competition's metric, its data's
# kind, several hosts), and the modules only it reaches: carried where it is set.
FEATURES = {
    "every fold": ({"fold": "all"}, ["stages/audit.py", "stages/pseudo.py"]),
    "multi-label": ({"multi_label": True, "metric": "samples_f1"}, ["learning/thresholds.py"]),
    "grades": ({"metric": "qwk", "num_classes": 5}, ["learning/grades.py"]),
    "values": ({"metric": "rmse", "num_classes": 1}, ["learning/regression.py"]),
    "values in a CSV": (
        {"metric": "rmse", "num_classes": 1, "train_csv": "labels.csv"},
        ["data/competition_files.py"],
    ),
    "metadata": ({"metadata_columns": "age"}, ["data/metadata.py"]),
    "images and a CSV": (
        {"train_csv": "labels.csv"},
        ["data/images.py", "data/competition_files.py"],
    ),
    "TFDS": ({"data_dir": "tfds:tf_flowers"}, ["data/tfds_sets.py"]),
    "several hosts": (
        {"num_processes": 2, "coordinator": "10.0.0.1:1234"},
        ["platform/processes.py"],
    ),
    "rehearsal": ({"simulate_replicas": 8}, ["platform/rehearsal.py"]),
}
# What the command line and the other stages use, and no notebook of the default render does.
NEVER = ["stages/ablate.py", "stages/blend.py", "stages/stack.py", "stages/score.py"]
# What only training uses: the notebook a code competition reruns carries none of it.
TRAINING = [
    "stages/train.py", "stages/fitting.py", "stages/training_checks.py", "stages/doctor.py",
    "stages/preview.py", "stages/evaluate.py", "stages/out_of_fold.py",
    "outputs/checkpoints.py", "outputs/plots.py", "learning/plan.py", "learning/recipe.py",
]  # fmt: skip


def carried(tmp_path: Path, name: str, cfg: Config, inference: bool = False) -> list[str]:
    folder = kernel.write_kernel(cfg, "", "alice", str(tmp_path / name), inference=inference)
    return carried_by(read(folder)[1])


def carried_by(notebook) -> list[str]:
    """The package's modules the notebook carries, as paths under it: those its folded cells
    write, and those that are cells in view."""
    shown = [cell.source for cell in notebook.cells if not folded(cell)]
    package = PROJECT / PACKAGE
    in_view = [p for p in package.rglob("*.py") if p.stat().st_size and p.read_text() in shown]
    return sorted(
        [*modules_written(notebook), *(p.relative_to(package).as_posix() for p in in_view)]
    )


def test_a_notebook_carries_the_modules_its_settings_use_and_no_other(tmp_path, monkeypatch):
    """Followed from its cells through the package's imports, for its config: the default
    render's notebooks carry none of the features it leaves off and its settings cell does not
    offer, but every feature a setting it offers reaches; the inference notebook nothing of
    training; and a notebook whose settings turn a feature on carries that feature."""
    monkeypatch.chdir(tmp_path)  # no data/ here: the competition's TFRecords, as Kaggle has them
    plain = carried(tmp_path, "plain", Config())
    every_feature = {path for _, paths in FEATURES.values() for path in paths}
    assert not [path for path in plain if path.removeprefix("runtime/") in every_feature]
    offered = {f"runtime/{path}" for _, paths in OFFERED.values() for path in paths}
    assert offered <= set(plain)
    assert not [path for path in plain if path.removeprefix("runtime/") in NEVER]
    assert "runtime/data/records.py" in plain and "runtime/stages/train.py" in plain
    rerun = carried(tmp_path, "rerun", Config(), inference=True)
    assert set(rerun) < set(plain)
    assert not [path for path in rerun if path.removeprefix("runtime/") in TRAINING]
    for name, (changes, reaches) in {**FEATURES, **OFFERED}.items():
        notebook = carried(tmp_path, name.replace(" ", "-"), Config(**changes))
        assert {f"runtime/{path}" for path in reaches} <= set(notebook), name


def test_a_blends_notebook_carries_what_the_backbone_of_each_of_its_runs_reaches():
    """Each run of a blend is rebuilt with its own backbone: a transformer's attention module
    and the small CNN's are carried where one run needs them, though the project's own
    backbone needs neither."""
    runs = [
        {"name": "vit", "backbone": "dinov3-small", "image_size": 224, "tta": "none"},
        {"name": "cnn", "backbone": "small-cnn", "image_size": 64, "tta": "flip"},
    ]
    runs = [{**run, "weight": 0.5, "cv": 0.9} for run in runs]
    blend = {"metric": "macro_f1", "blend_cv": 0.9, "runs": runs}
    run = start(Config(), on_accelerator=False, read=False)
    carrying = "\n".join(c.source for c in notebooks.cells(run, "gpu", None, True, blend=blend))
    for path in ("learning/attention.py", "learning/small_cnn.py", "stages/blend.py"):
        assert f"write_module('{PACKAGE}/runtime/{path}'" in carrying, path
    alone = "\n".join(cell.source for cell in notebooks.cells(run, "gpu", None, inference=True))
    assert f"'{PACKAGE}/runtime/learning/attention.py'" not in alone


def test_the_title_names_the_classes_when_they_are_known(tmp_path):
    demo = start(*from_preset("demo"), on_accelerator=False, read=False)
    folder = kernel.write_kernel(demo, "cpu", "alice", str(tmp_path))
    title = read(folder)[1].cells[0].source
    assert "A small CNN image classifier for the Kaggle competition" in title
    assert "10 classes (zero, one, two, three, four, five, six, seven, ...)" in title


def test_a_short_project_name_still_makes_a_slug_kaggle_takes(tmp_path, monkeypatch):
    monkeypatch.setattr(kernel, "PROJECT", "cv")
    monkeypatch.setattr(kernel, "TITLE", "CV")
    metadata, _ = read(kernel.write_kernel(Config(), "tpu", "alice", str(tmp_path)))
    assert metadata["id"] == "alice/cv-notebook" and metadata["title"] == "Cv Notebook"


def test_an_unknown_accelerator_is_refused():
    with pytest.raises(UserError, match="--accelerator 'tpu-v3': one of tpu, gpu, cpu"):
        kernel.write_kernel(Config(), "tpu-v3", "alice", "unused")


def test_names_kaggle_cannot_have_and_a_folder_holding_another_kernel_are_refused(tmp_path):
    """Refused before anything is written, each naming the flag and what to give instead."""
    for user in ("Alice", "al ice", "al/ice"):
        with pytest.raises(UserError, match=f"--kaggle-user {re.escape(repr(user))}: not a Kaggle"):
            kernel.write_kernel(Config(), "tpu", user, str(tmp_path / "mine"))
    with pytest.raises(UserError, match="--dataset 'flower-records': not OWNER/SLUG as the "):
        kernel.write_kernel(Config(), "tpu", "alice", str(tmp_path / "mine"), ["flower-records"])
    assert not (tmp_path / "mine").exists()
    theirs = kernel.write_kernel(Config(), "tpu", "bob", str(tmp_path / "theirs"))
    held = {path.name: path.read_bytes() for path in theirs.iterdir()}
    with pytest.raises(UserError, match=r"theirs holds another kernel \(bob/.*, in kernel-metada"):
        kernel.write_kernel(Config(epochs=3), "tpu", "alice", str(theirs))
    assert {path.name: path.read_bytes() for path in theirs.iterdir()} == held
    kernel.write_kernel(Config(epochs=3), "tpu", "bob", str(theirs))  # its own: written again
    assert read(theirs)[0]["id"].startswith("bob/")


def test_folders_that_exist_only_on_this_machine_are_named_with_what_to_do(tmp_path, capsys):
    """Fine for running the notebook here, wrong on Kaggle: kernel says so and goes on."""
    cfg = Config(data_dir=str(tmp_path / "records"), output_dir="out")
    kernel.write_kernel(cfg, "tpu", "alice", str(tmp_path / "kernel"))
    said = capsys.readouterr().out
    local = f"warning: Config.data_dir / --data-dir '{tmp_path / 'records'}' is a folder on "
    assert local in said and "push your records first with `kaggle dataset`" in said
    assert "warning: Config.output_dir / --output-dir 'out' is not under /kaggle/working" in said
    kernel.write_kernel(Config(), "tpu", "alice", str(tmp_path / "plain"))
    assert "warning" not in capsys.readouterr().out  # the defaults are Kaggle's own folders


def test_label_files_another_notebook_wrote_attach_it_and_local_ones_are_named(tmp_path, capsys):
    """A next run trained on the pseudo-labels a fold-all notebook left in its output: the
    training notebook attaches that notebook, which Kaggle mounts only then; a file of label
    corrections on this machine is named with what to give instead."""
    pseudo = "kaggle:notebooks/alice/flowers-all/pseudo_labels.csv"
    cfg = Config(pseudo_labels=pseudo, drop_ids=str(tmp_path / "drop.csv"))
    folder = kernel.write_kernel(cfg, "tpu", "alice", str(tmp_path / "kernel"))
    metadata, notebook = read(folder)
    assert metadata["kernel_sources"] == ["alice/flowers-all"]
    (config_cell,) = [c.source for c in notebook.cells if c.source.startswith("# The settings")]
    assert f'    pseudo_labels="{pseudo}",' in config_cell
    said = capsys.readouterr().out
    assert (
        f"warning: Config.drop_ids / --drop-ids '{tmp_path / 'drop.csv'}' is a file on this "
        "machine, which a notebook on Kaggle cannot read: give the notebook that wrote it, as "
        "kaggle:notebooks/OWNER/SLUG/drop.csv"
    ) in said
    assert "pseudo_labels" not in said  # read from the attached notebook's output


def trials(field, value) -> list:
    """Values a competitor could set a field to: each choice of a registry, else values that
    turn each way the tests a run makes of it."""
    choices = {
        "backbone": list(BACKBONES),
        "fold": ["", "all", "1"],
        "submission": ["auto", *SHAPES],
        "precision": list(PRECISIONS),
        "backend": ["", *BACKENDS],
    }
    if field.name in choices:
        return choices[field.name]
    kind = config.types()[field.name]
    if kind in (bool, config.Switch):
        return [True, False]
    if kind in (int, float):
        return [kind(0), kind(1), kind(2), value * 2 + 1]
    return ["", "x", value]


@pytest.mark.parametrize("inference", [False, True], ids=["training", "inference"])
def test_every_setting_the_settings_cell_offers_works_when_set_there(tmp_path, inference):
    """The notebook carries what a run reaches with any value of any field its settings cell
    offers (the cell and the table of the rest), so a setting changed there runs; what it
    cannot run with (several hosts, another metric) it does not offer. Where the data is
    (notebook.DATA_PLACES) is the notebook's own: another kind of data is another notebook."""
    folder = kernel.write_kernel(Config(), "tpu", "alice", str(tmp_path), inference=inference)
    _, notebook = read(folder)
    written = {f"{PACKAGE}/{path}" for path in carried_by(notebook)}
    cells = [c.source for c in notebook.cells if c.cell_type == "code" and not folded(c)]
    reading = kernel.as_it_reads(start(Config(), on_accelerator=False, read=False), inference)
    kind = "inference" if inference else "training"
    offered = notebooks.settings(kind, reading.data)
    assert offered and not {field.name for field in offered} & {"num_processes", "metric"}
    for field in offered:
        if field.name in notebooks.DATA_PLACES:
            continue
        for value in trials(field, getattr(reading.cfg, field.name)):
            cfg = copy.copy(reading.cfg)
            setattr(cfg, field.name, value)
            changed = dataclasses.replace(reading, cfg=cfg)
            lacking = set(carrying.modules(changed, cells)) - written
            assert not lacking, (field.name, value, lacking)


def test_the_accelerator_check_runs_before_anything_is_installed_written_or_trained(tmp_path):
    """Kaggle can run a TPU notebook on a CPU image: the check stops it in its first code cells,
    before the install cell, before any cell writes a module, and before training; it reads
    the signs backend.py reads."""
    folder = kernel.write_kernel(Config(), "tpu", "alice", str(tmp_path))
    code = [c.source for c in read(folder)[1].cells if c.cell_type == "code"]
    (check,) = [index for index, source in enumerate(code) if "raise SystemExit(" in source]
    assert check <= 1  # after the settings cell, which it reads
    install = [index for index, source in enumerate(code) if "pip" in source]
    written = [index for index, source in enumerate(code) if "write_module(" in source]
    trains = [index for index, source in enumerate(code) if "train(run)" in source]
    assert install and written and trains
    assert check < min(install + written + trains)
    signs = [*backend.TPU_ENV, *backend.TPU_DEVICE_FILES, *backend.GPU_DEVICE_FILES]
    assert all(f'"{sign}"' in code[check] for sign in signs)


def test_a_module_in_view_is_the_notebooks_own_and_one_not_carried_is_named(tmp_path):
    """The folded cells, run alone: a module whose code is a cell in view imports as the
    notebook's names (before its cell runs, one it lacks is named with what to run); a module
    the notebook does not carry imports, and used (the settings reach it after the notebook was
    written) is refused in one line that says to write the notebook again."""
    folder = kernel.write_kernel(Config(), "cpu", "alice", str(tmp_path / "kernel"))
    runtime = [c.source for c in read(folder)[1].cells if folded(c) and "write_module(" in c.source]
    trial = f"""
from {PACKAGE}.runtime.learning import model
def build_model():
    return "the cell's"
print(model.build_model())
del build_model
try:
    model.build_model
except AttributeError as error:
    print(error)
from {PACKAGE}.runtime.data import tfds_sets
tfds_sets.read
"""
    script = tmp_path / "run" / "folded.py"
    script.parent.mkdir()
    script.write_text("\n\n".join([*runtime, trial]))
    done = offline(sys.executable, script.name, cwd=script.parent)
    assert done.stdout.splitlines()[-2:] == [
        "the cell's",
        f"{PACKAGE}.runtime.learning.model.build_model: run the cell that defines it",
    ]
    assert f"not {PACKAGE}.runtime.data.tfds_sets, which the settings reach now" in done.stderr
    assert "write the notebook again with `kernel`" in done.stderr
