"""The Kaggle notebook's visible cells, in jupytext's percent format: `# %%` starts a code
cell, `# %% [markdown]` a markdown cell written as comments. `kernel` (notebook.py) reads
this file as text and makes the notebook from it; here it is code that ruff lints.

notebook.py puts the notebook's title first, and more by a cell's title (the word after `# %%`):
- `settings`: the settings table and the config cell; this file's stand-in: Config's defaults.
- `runtime`: the folded cells that write the package's runtime; `install`: the folded cell
  that installs what the machine lacks.
- `summary`: a cell of the training notebook whose output is folded (the model's layers).
- `training`: a cell of the training notebook only; `inference`: of every inference notebook
  (`kernel --inference`), `single` of the one that predicts with one run, `blend` of the one
  that blends several (`kernel --inference --blend blend.json`), `stack` of the one that
  stacks them (`--blend stack.json`); `predict`: of the training notebook and the one-run
  inference notebook. The rest are in every notebook.
A cell `# module PATH` is that module as a cell in view, run in the notebook's namespace, whose
names are the module's for the whole run (notebook.py's SETUP): a cell edited and run again is
what the cells below it use, with no restart and no Run All.

Nothing imports it: importing it would run every notebook's cells, one after the other.
"""

# %% settings
# What the cells in view define, in the notebook's namespace (here, for the linter).
from {{ cookiecutter.package }}.runtime.learning.model import build_model
from {{ cookiecutter.package }}.runtime.stages.train import folds, train

CONFIG = {}
ACCELERATOR = ""
BACKBONES_BUILT = [CONFIG.get("backbone", "small-cnn")]
WHEELS = ""  # kaggle:datasets/OWNER/SLUG, where `kernel` attached the wheels
BLEND = {}  # a blend's notebook only
STACK = {}  # a stack's notebook only

# %% [markdown]
# ## Accelerator check
#
# Before anything is installed, written or loaded: the machine has the accelerator this
# notebook was made for, or the run stops here (Kaggle can run a pushed TPU notebook on a CPU
# image). The accelerator cell below checks again, once Keras has found the devices.

# %%
import glob
import os

# The signs backend.py reads, read here before the package is written: a TPU VM's environment
# or devices (Kaggle's and Colab's TPU runtimes), an NVIDIA GPU's devices.
TPU_ENV = (
    "TPU_NAME", "KUBE_GOOGLE_CLOUD_TPU_ENDPOINTS", "COLAB_TPU_ADDR", "ISTPUVM",
    "TPU_PROCESS_ADDRESSES",
)  # fmt: skip
tpu = any(map(os.environ.get, TPU_ENV)) or glob.glob("/dev/accel*") or glob.glob("/dev/vfio/[0-9]*")
has = "tpu" if tpu else "gpu" if glob.glob("/dev/nvidia[0-9]*") else "cpu"
if ACCELERATOR and has != ACCELERATOR:
    raise SystemExit(
        f"error: this run needs a {ACCELERATOR.upper()} but would use the {has} (this machine "
        f"shows no {ACCELERATOR.upper()}); pick a {ACCELERATOR.upper()} accelerator in the "
        "notebook's settings (Kaggle: Settings > Accelerator) and run it again"
    )
print(f"accelerator: this machine shows {'the CPU alone' if has == 'cpu' else 'a ' + has.upper()}")

# %% [markdown]
# ## The project's code
#
# The folded cells write the modules of `{{ cookiecutter.package }}` this run uses beside the notebook (open one
# to read them), then install what this machine lacks, saying what: on Colab's TPU runtime
# `tensorflow-cpu` and keras-hub; where the image's keras-hub cannot build a backbone used here,
# the newest that builds it on the image's Keras. On Kaggle's images nothing is installed. An
# install needs the internet on, or the wheels `kaggle wheels` pushed, attached (`WHEELS`). The
# cells in view are the recipe: run one again after an edit, and the cells below it.

# %% runtime
# In the notebook, the folded cells here write the package's runtime beside it.

# %% install
# @title Install what this machine lacks (on Kaggle's images: nothing)
import importlib.util
import subprocess
import sys

from {{ cookiecutter.package }}.runtime.errors import UserError
from {{ cookiecutter.package }}.runtime.platform import paths, versions

pip = [sys.executable, "-m", "pip", "install", "--quiet"]
on_colab = importlib.util.find_spec("google") is not None and (
    importlib.util.find_spec("google.colab") is not None
)
if on_colab and importlib.util.find_spec("tensorflow") is None:
    print("Colab's TPU runtime has no TensorFlow: installing tensorflow-cpu")
    subprocess.check_call([*pip, "tensorflow-cpu"])
for backbone in BACKBONES_BUILT:
    lacking = versions.unbuildable(backbone)
    if not lacking:
        continue
    keras = versions.installed("keras")
    hub = versions.keras_hub_for(backbone, keras) if keras else ""
    if not hub:
        raise UserError(f"{lacking}; this image trains {', '.join(versions.buildable())}")
    # --no-deps: keras-hub's tensorflow-text would pull a full TensorFlow, which fights JAX
    # for the TPU (jax-ml/jax#29989), and its newest releases a newer Keras.
    wanted = ["--no-deps", f"keras-hub=={hub}"]
    if WHEELS:  # pip reaches no index in a code competition's rerun: the wheels attached
        wheels = paths.local(WHEELS)
        print(f"{lacking}: installing keras-hub {hub} from the wheels in {wheels} ({WHEELS})")
        wanted = ["--no-index", "--find-links", wheels, *wanted]
        fix = (
            f"pip found no keras-hub {hub} it could install in {wheels} ({WHEELS}): push it "
            "with `kaggle wheels`, write the notebook again with `kernel` and push that"
        )
    else:
        print(f"{lacking}: installing keras-hub {hub} without its dependencies")
        fix = (
            f"pip could not install keras-hub {hub}: turn the internet on (Settings > "
            "Internet) and run the notebook from the top"
        )
    had_one = bool(versions.installed("keras-hub"))
    try:
        subprocess.check_call([*pip, *wanted])
        if not had_one and not WHEELS:  # what keras-hub needs that Colab's TPU runtime lacks
            subprocess.check_call([*pip, "kagglehub", "regex", "rich", "tokenizers"])
    except subprocess.CalledProcessError:
        raise UserError(f"{lacking}, and {fix}") from None
    importlib.invalidate_caches()  # what imports keras_hub next finds it

# %% [markdown]
# ## The run
#
# Before anything imports Keras: the accelerator decides the Keras backend (JAX on Kaggle's TPU
# image, whose TensorFlow is CPU-only). The run is built once, here, and every cell below
# takes it: its settings, where it reads and writes, the accelerator, and its data as read.

# %%
from {{ cookiecutter.package }}.runtime.config import Config
from {{ cookiecutter.package }}.runtime.platform import accelerator
from {{ cookiecutter.package }}.runtime.stages.run import start

# Every value of CONFIG given here; a trained run's model where trained_dir names one.
run = start(Config(**CONFIG), dict.fromkeys(CONFIG, "notebook"), trained=True)
accelerator.require(run.accelerator, ACCELERATOR)

# %% [markdown]
# ## Data steps
#
# How one record becomes an image and a label, for training, validation and test alike.

# %%
# module {{ cookiecutter.package }}/runtime/data/steps.py

# %% [markdown]
# ## Datasets
#
# Records to batches: read, decode (the data steps), the host's augmentations, batch and
# prefetch, with shapes XLA can compile; for validation and test, every record once, in
# order, its id beside it.

# %%
# module {{ cookiecutter.package }}/runtime/data/pipeline.py

# %% training [markdown]
# ## A training batch
#
# Images and their labels as the datasets above make them, the host's augmentations applied.

# %% training
from {{ cookiecutter.package }}.runtime.outputs.plots import show
from {{ cookiecutter.package }}.runtime.stages import preview

show(preview.augmented_batch(run, through_model=False))

# %% training [markdown]
# ## Model
#
# A pretrained backbone and a head, and the augmentations the model runs while it trains
# (MixUp or CutMix, the crop and the flip): what you edit in this cell is what trains,
# previews and predicts.

# %% training
# module {{ cookiecutter.package }}/runtime/learning/model.py

# %% training [markdown]
# ## The model's layers
#
# The model the model cell builds, layer by layer (folded: open the output to read it).

# %% summary
from {{ cookiecutter.package }}.runtime.learning import backbones

with run.accelerator.scope():
    built = build_model(run.cfg, backbones.load(run.cfg), run.accelerator.image_dtype)
built.summary()
del built  # train builds its own

# %% training [markdown]
# ## Recipe
#
# The learning-rate schedule, the loss, the metric and the optimizer, and `compile_model`,
# which puts them together: what you edit in this cell is what trains.

# %% training
# module {{ cookiecutter.package }}/runtime/learning/recipe.py

# %% training [markdown]
# ## Doctor
#
# Everything a run depends on, checked before any training.

# %% training
from {{ cookiecutter.package }}.runtime.errors import UserError
from {{ cookiecutter.package }}.runtime.stages.doctor import doctor

if doctor(run):
    raise UserError("fix the problems above, then run the cells from the settings again")

# %% training [markdown]
# ## What the model trains on
#
# A training batch as the model's layers pass it on (after the host's augmentations; then in
# the model MixUp or CutMix, with the labels they mix, where the run mixes, and the crop and
# flip the image size calls for), and the learning rate over the whole run.

# %% training
show(preview.augmented_batch(run))
show(preview.learning_rate(run))

# %% training [markdown]
# ## Training loop
#
# For each fold: its datasets, the model built in the accelerator's scope and compiled,
# `fit` with its callbacks, then the fold's out-of-fold predictions (`valid.csv`). A
# checkpoint after every epoch: run the cells again after an interruption and it resumes
# from the last finished epoch.

# %% training
# module {{ cookiecutter.package }}/runtime/stages/train.py

# %% training [markdown]
# ## Training
#
# The training loop above, run: with data in folds, `fold` validates (fold 0 where it is
# empty) and the others train; records that carry no folds (Kaggle's own) train on their train
# files and validate on their val files, unless `fold` asks for one, which pools them into
# `folds` folds first. `fold="all"`: each fold in turn, then the out-of-fold score; each fold's
# run has its own folder and learning curves (the loss and the metric per epoch).

# %% training
history = train(run)
for fold in folds.runs(run):
    show(fold.places.output / "curves.png")

# %% single [markdown]
# ## Prediction loop
#
# For each trained fold model: the test dataset, the model rebuilt in the accelerator's scope
# with the run's weights (model.py, folded above, as the training notebook built it), and its
# probabilities (with `tta`, averaged with those of the flipped or turned images); then their
# average, written as `submission.csv` in the sample submission's columns and order. Every
# test id and every model's weights are checked before the first model loads.

# %% single
# module {{ cookiecutter.package }}/runtime/stages/predict.py

# %% training [markdown]
# ## Evaluation
#
# Per-class scores on the validation records, where the model confuses one class with
# another, and validation images with the class it answered (the true one in red where wrong).

# %% training
from {{ cookiecutter.package }}.runtime.stages.evaluate import evaluate

show(evaluate(run))

# %% training [markdown]
# ## Label audit
#
# With `fold="all"`: the training labels most likely wrong, judged by the fold models that
# never trained on each image, the most suspicious first, and pictures of the first. Train
# again with `drop_ids` (or `relabel`) set to `likely_wrong.csv`, its first rows (as many as
# it counts suspects), or to a CSV of the rows you agree with.

# %% training
if run.cfg.fold == "all":
    from {{ cookiecutter.package }}.runtime.stages.audit import audit_run

    audit = audit_run(run, str(run.places.output))
    if (run.places.output / "label_audit.png").is_file():
        show(run.places.output / "label_audit.png")

# %% training [markdown]
# ## Prediction
#
# `submission.csv`, row for row in the sample submission's order.

# %% single [markdown]
# ## Prediction
#
# Every image the competition's test folder holds as this notebook runs (the hidden test set,
# when Kaggle reruns it to score it), with every trained fold model, row for row in the sample
# submission's order. The speed and the time the whole folder will take are printed after a
# few batches.

# %% predict
import pandas as pd

# The prediction loop: its cell's, where it is in view.
from {{ cookiecutter.package }}.runtime.stages.predict import predict

written = predict(run)
pd.read_csv(written).head()

# %% training [markdown]
# ## Pseudo-labels
#
# With `fold="all"`: each fold model's test predictions, kept as soft labels for a next run
# (this notebook's output attached, `pseudo_labels` set to its `pseudo_labels.csv`). Each
# fold of that run trains on its own fold model's rows alone, so its out-of-fold score is
# made without them.

# %% training
if run.cfg.fold == "all":
    from {{ cookiecutter.package }}.runtime.stages.pseudo import pseudo_labels

    pseudo = pseudo_labels(str(run.places.output), min_confidence=0.0)

# %% blend [markdown]
# ## Prediction, blended
#
# Every image the competition's test folder holds as this notebook runs (the hidden test set,
# when Kaggle reruns it to score it), predicted by each run in turn with all its fold models,
# then the runs' probabilities weighed as `BLEND` says, row for row in the sample submission's
# order. Each run's speed is printed after a few batches, and after each run the minutes the
# whole blend will take.

# %% blend
import pandas as pd

from {{ cookiecutter.package }}.runtime.stages.blend import predict_blend

written = predict_blend(run, BLEND)
pd.read_csv(written).head()

# %% stack [markdown]
# ## Prediction, stacked
#
# Every image the competition's test folder holds as this notebook runs (the hidden test set,
# when Kaggle reruns it to score it), predicted by each run in turn with all its fold models.
# Then the stack's trees are fitted again on what they were fitted on, each run's out-of-fold
# probabilities (its training notebook's `oof.csv`) and the metadata columns of the
# competition's training table, and predict from the runs' test probabilities and each test
# image's metadata, row for row in the sample submission's order. The refitted trees' CV is
# printed beside the one `stack` measured: the same, unless the files or scikit-learn differ.

# %% stack
import pandas as pd

from {{ cookiecutter.package }}.runtime.stages.stack import predict_stack

written = predict_stack(run, STACK)
pd.read_csv(written).head()
