"""The Kaggle notebook's visible cells, in jupytext's percent format: `# %%` starts a code
cell, `# %% [markdown]` a markdown cell written as comments. `kernel` (notebook.py) reads
this file as text and makes the notebook from it; here it is code that ruff lints.

notebook.py puts the notebook's title first, and more by a cell's title (the word after `# %%`):
- `settings`: the settings table and the config cell; this file's stand-in: Config's defaults.
- `runtime`: the hidden cells that write the package's runtime beside the notebook.
- `install`: the cell that installs what the machine lacks (after the runtime: it reads
  the backbones' registry), its code folded away on Kaggle.
- `summary`: a cell of the training notebook whose output is folded (the model's layers).
- `training`: a cell of the training notebook only; `inference`: of every inference notebook
  (`kernel --inference`), `single` of the one that predicts with one run, `blend` of the one
  that blends several (`kernel --inference --blend blend.json`), `stack` of the one that
  stacks them (`--blend stack.json`); `predict`: of the training notebook and the one-run
  inference notebook. The rest are in every notebook.
And a cell whose first line is `# %%writefile PATH` (IPython's magic, as jupytext writes it)
is, in the notebook, a cell in view holding that module of the package, which it writes where
the package reads it: the data steps, the datasets, the model and its recipe, the training
loop, the prediction loop. The cells that use them load them again first (importlib.reload),
so an edit takes effect when the notebook runs again, with no kernel restart.

Nothing imports it: importing it would run every notebook's cells, one after the other.
"""

# %% settings
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
# Each hidden cell writes one module of `{{ cookiecutter.package }}` that this notebook's run uses (open
# one to read it); the data steps, the datasets and the model are in view below, with the
# training loop in a training notebook and the prediction loop in one that predicts with one
# trained run. The install cell installs only what this machine lacks, before anything
# imports it, and says what it installs: on Colab's TPU runtime, which has no TensorFlow and
# no keras-hub, `tensorflow-cpu` for the input pipeline and keras-hub; and where the image's
# keras-hub cannot build a backbone this notebook uses, the newest keras-hub that builds it
# and runs on the image's Keras (never upgraded: its TensorFlow and JAX are built for it).
# On Kaggle's images (keras-hub 0.26 on Keras 3.13) every backbone but Swin-T builds, so
# nothing is installed there; Swin-T needs Keras 3.15, and no keras-hub for Keras 3.13 can
# train it, so this cell stops, naming the backbones the image trains. An install needs the
# internet on, or the wheels `kaggle wheels` pushed as a dataset, attached (`WHEELS`): then
# it installs from them, offline.

# %% runtime
# In the notebook, the hidden cells here write the package's runtime beside it.

# %% install
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
    if WHEELS:  # pip reaches no index in a code competition's rerun: the wheels attached
        wheels = paths.local(WHEELS)
        print(f"{lacking}: installing keras-hub {hub} from the wheels in {wheels} ({WHEELS})")
        offline = ["--no-index", "--find-links", wheels, "--no-deps", f"keras-hub=={hub}"]
        try:
            subprocess.check_call([*pip, *offline])
        except subprocess.CalledProcessError:
            raise UserError(
                f"{lacking}, and pip found no keras-hub {hub} it could install in {wheels} "
                f"({WHEELS}): push it with `kaggle wheels`, write the notebook again with "
                "`kernel` and push that"
            ) from None
        importlib.invalidate_caches()  # what imports keras_hub next finds it
        continue
    # --no-deps: keras-hub's tensorflow-text would pull a full TensorFlow, which fights JAX
    # for the TPU (jax-ml/jax#29989), and its newest releases a newer Keras.
    print(f"{lacking}: installing keras-hub {hub} without its dependencies")
    had_one = bool(versions.installed("keras-hub"))
    try:
        subprocess.check_call([*pip, "--no-deps", f"keras-hub=={hub}"])
        if not had_one:  # what keras-hub needs that Colab's TPU runtime lacks
            subprocess.check_call([*pip, "kagglehub", "regex", "rich", "tokenizers"])
    except subprocess.CalledProcessError:
        raise UserError(
            f"{lacking}, and pip could not install keras-hub {hub}: turn the internet on "
            "(Settings > Internet) and run the notebook from the top"
        ) from None
    importlib.invalidate_caches()

# %% [markdown]
# ## Data steps
#
# How one record becomes an image and a label, for training, validation and test alike. This
# cell writes the module the datasets read: edit it, then run the notebook from the top.

# %%
# %%writefile {{ cookiecutter.package }}/runtime/data/steps.py

# %% [markdown]
# ## Datasets
#
# Records to batches: read, decode (the data steps), the host's augmentations, batch and
# prefetch, with shapes XLA can compile; for validation and test, every record once, in
# order, its id beside it.

# %%
# %%writefile {{ cookiecutter.package }}/runtime/data/pipeline.py

# %% training [markdown]
# ## Model and recipe
#
# A pretrained backbone and a head, the augmentations, the loss, the optimizer and the
# learning-rate schedule: what you edit in this cell is what trains, previews and predicts.

# %% inference [markdown]
# ## Model
#
# The model a trained run is rebuilt with: its backbone, image size and classes come from
# the run's `model.json`, its weights from `model.weights.h5`. Edit it as the training
# notebook's model cell was edited, or the trained weights will not fit.

# %%
# %%writefile {{ cookiecutter.package }}/runtime/learning/model.py

# %% training [markdown]
# ## Training loop
#
# For each fold: its datasets, the model built in the accelerator's scope and compiled,
# `fit` with its callbacks, then the fold's out-of-fold predictions (`valid.csv`). A
# checkpoint after every epoch: run the notebook again after an interruption and it resumes
# from the last finished epoch.

# %% training
# %%writefile {{ cookiecutter.package }}/runtime/stages/train.py

# %% single [markdown]
# ## Prediction loop
#
# For each trained fold model: the test dataset, the model rebuilt in the accelerator's scope
# with the run's weights, and its probabilities (with `tta`, averaged with those of the
# flipped images); then their average, written as `submission.csv` in the sample
# submission's columns and order. Every test id and every model's weights are checked before
# the first model loads.

# %% single
# %%writefile {{ cookiecutter.package }}/runtime/stages/predict.py

# %% [markdown]
# ## Accelerator
#
# First, before anything imports Keras: the accelerator decides the Keras backend (JAX on
# Kaggle's TPU image, whose TensorFlow is CPU-only). Then the modules the cells above wrote
# load, as they are now.

# %%
import importlib

from {{ cookiecutter.package }}.runtime.config import Config
from {{ cookiecutter.package }}.runtime.platform import accelerator
from {{ cookiecutter.package }}.runtime.stages.run import start

# The run, built once: its settings (every value of CONFIG given here), where it reads and
# writes, the accelerator, a trained run's model where trained_dir names one, and its data.
run = start(Config(**CONFIG), dict.fromkeys(CONFIG, "notebook"), trained=True)
accelerator.require(run.accelerator, ACCELERATOR)

from {{ cookiecutter.package }}.runtime.data import pipeline, steps
from {{ cookiecutter.package }}.runtime.learning import model

# A module loads once a session: run the notebook again and every command reads the modules
# as the cells above write them now, not as they were first imported.
for module in (steps, pipeline, model):
    importlib.reload(module)

# %% training [markdown]
# ## Doctor
#
# Everything a run depends on, checked before any training. The cells after it check again, in
# a moment: each split is read once a session.

# %% training
from {{ cookiecutter.package }}.runtime.errors import UserError
from {{ cookiecutter.package }}.runtime.stages.doctor import doctor

if doctor(run):
    raise UserError("fix the problems above, then run the notebook again")

# %% training [markdown]
# ## The model's layers
#
# The model the model cell builds, layer by layer (folded: open the output to read it).

# %% summary
from {{ cookiecutter.package }}.runtime.learning import backbones

with run.accelerator.scope():
    built = model.build_model(run.cfg, backbones.load(run.cfg), run.accelerator.image_dtype)
built.summary()
del built  # train builds its own

# %% training [markdown]
# ## Data preview
#
# A training batch as the model's layers pass it on (after RandAugment on the host, where
# asked for; then in the model MixUp or CutMix, with the labels they mix, where the run mixes,
# and the crop and flip the image size calls for), and the learning rate over the whole run.

# %% training
from {{ cookiecutter.package }}.runtime.outputs.plots import show
from {{ cookiecutter.package }}.runtime.stages import preview

show(preview.augmented_batch(run))
show(preview.learning_rate(run))

# %% training [markdown]
# ## Training
#
# The training loop above, run: with data in folds, `fold` validates (fold 0 where it is
# empty) and the others train; records that carry no folds (Kaggle's own) train on their train
# files and validate on their val files, unless `fold` asks for one, which pools them into
# `folds` folds first. `fold="all"`: each fold in turn, then the out-of-fold score; each fold's
# run has its own folder and curves.

# %% training
from {{ cookiecutter.package }}.runtime.stages import folds, train

importlib.reload(train)  # as its cell wrote it
history = train.train(run)
for fold in folds.runs(run):
    show(fold.places.output / "curves.png")

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

from {{ cookiecutter.package }}.runtime.stages import predict

importlib.reload(predict)  # as its cell wrote it: in view in the inference notebook, else hidden
submission = predict.predict(run)
pd.read_csv(submission).head()

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

submission = predict_blend(run, BLEND)
pd.read_csv(submission).head()

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

submission = predict_stack(run, STACK)
pd.read_csv(submission).head()
