"""A code competition as Kaggle runs it: the training notebook trains from the competition's
own images and CSV where Kaggle mounts them, and the inference notebook, rerun with the
hidden test set in place of the public one, writes every row of the sample it finds then.

Each notebook runs alone in an empty folder, in a real Jupyter kernel, offline, with the
inputs mounted read-only as Kaggle mounts them: by kind (/kaggle/input/competitions/<slug>,
notebooks/<owner>/<slug>, models/...) beside a fake data proxy, and in the older flat layout
(/kaggle/input/<slug>) with no proxy answering. The rerun meets a proxy that fails, and none;
one that never answers meets kagglehub's own resolver in the suite's process, with the time
limit that ends the wait (a request the rerun made would be logged by either proxy first).
"""

import dataclasses
import json
import re
import shutil
import sys
import time
from importlib.metadata import version
from pathlib import Path

import fake_data_proxy
import nbformat
import numpy as np
import pandas as pd
import pytest
from builders import competition, image, python_without, wheel_of_installed, write_csv
from conftest import PROJECT
from test_blend import fetched
from test_kaggle import against_fake_kaggle, calls
from test_kernel import alone, errors, offline, text_of

from {{ cookiecutter.package }}.__main__ import main
from {{ cookiecutter.package }}.runtime.backbone_choices import BACKBONES
from {{ cookiecutter.package }}.runtime.config import Config
from {{ cookiecutter.package }}.runtime.errors import UserError
from {{ cookiecutter.package }}.runtime.platform import kaggle_inputs, paths, versions
from {{ cookiecutter.package }}.runtime.stages.run import start
from {{ cookiecutter.package }}.tools import notebook as notebooks
from {{ cookiecutter.package }}.tools.kaggle_api import described

NAME = "{{ cookiecutter.project }}"
PACKAGE = "{{ cookiecutter.package }}"
SLUG = "cassava-leaf-disease-classification"
USER = "alice"
BACKBONE = "efficientnet-b0"  # a keras-hub preset (tests/presets.py makes a small one)
QUICK = [
    "--backbone", BACKBONE, "--weights", "imagenet", "--image-size", "32", "--epochs", "1",
    "--steps-per-epoch", "2", "--batch-size", "8", "--accelerator", "cpu",
]  # fmt: skip
# Each notebook sees its inputs read-only, as on Kaggle.
READ_ONLY = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'
# The prediction loop's cell, in view in the inference notebook; an edit prints a line as it
# averages each fold model's probabilities.
PREDICTION_LOOP = "def predict(run: Run | Config) -> Path:"  # the prediction loop, a cell in view
AVERAGED = "        averaged, ids = averaged + probabilities / len(runs), keys\n"
EDITED_LOOP = AVERAGED + '        print(f"edited loop: fold {fold.cfg.fold} averaged")\n'
# `jupyter execute`, as its script runs it, on any python that has nbclient.
JUPYTER_EXECUTE = "import sys; from nbclient.cli import main; sys.exit(main())"


def kernel(tmp_path: Path, *flags: str) -> Path:
    """`kernel ...` on the laptop, as the command line runs it (`main`, in this process: a
    notebook written needs no interpreter of its own); returns the folder it wrote."""
    assert main(["kernel", "--competition", SLUG, *QUICK, "--kaggle-user", USER, *flags]) == 0
    return Path(flags[flags.index("--output") + 1])


def run_on_kaggle(notebook: Path, root: Path, mounts: dict, log: Path, python=sys.executable):
    """The notebook in a real kernel of `python`, offline, `root` mounted read-only at the
    mount root."""
    mounts_file = notebook.parent.parent / f"{notebook.parent.name}-mounts.json"
    mounts_file.write_text(json.dumps({"root": str(root), **mounts}))
    proxy = [sys.executable, str(PROJECT / "tests" / "fake_data_proxy.py"), str(mounts_file)]
    execute = [python, "-c", JUPYTER_EXECUTE]  # the kernel runs on the python that runs it
    return offline(
        "unshare", "-m", "sh", "-c", READ_ONLY, "sh", str(root),
        *proxy, str(log), *execute, "--inplace", "--timeout=600", notebook.name,
        cwd=notebook.parent,
    )  # fmt: skip


def hidden_test_set(competition_folder: Path, count: int) -> pd.DataFrame:
    """test_images/ and sample_submission.csv swapped for `count` images it has never seen,
    the sample in no sorted order; returns the sample."""
    shutil.rmtree(competition_folder / "test_images")
    (competition_folder / "test_images").mkdir()
    rng = np.random.default_rng(1)
    names = [f"{900000 + number * 13}.jpg" for number in range(count)]
    for number, name in enumerate(names):
        classes = [["healthy", "rust", "scab"][number % 3]]
        image(competition_folder / "test_images" / name, classes, rng)
    order = [names[index] for index in rng.permutation(count)]
    sample = competition_folder / "sample_submission.csv"
    write_csv(sample, ["image_id", "label"], [(name, 0) for name in order])
    return pd.read_csv(sample, dtype=str)


def settings_changed(notebook: Path, **values) -> None:
    """The notebook's settings cell with these values, as a user edits it on Kaggle."""
    edited = nbformat.read(notebook, as_version=4)
    (cell,) = [cell for cell in edited.cells if cell.source.startswith("# The settings")]
    for name, value in values.items():
        line = next(line for line in cell.source.splitlines() if line.startswith(f"    {name}="))
        cell.source = cell.source.replace(line, f"    {name}={value!r},")
    nbformat.write(edited, notebook)


def rerun(tmp_path, notebook: Path, root: Path, mounts: dict, proxy) -> tuple[pd.DataFrame, str]:
    """Kaggle's scoring rerun of the inference notebook, with the data proxy behaving as
    `proxy` says (fake_data_proxy.py): the submission it wrote, and what it said. It must ask
    the proxy nothing."""
    name = f"rerun-{proxy}".lower()
    run = alone(notebook, tmp_path / name)
    log = tmp_path / f"{name}-log.json"
    submission = tmp_path / "rerun" / "submission.csv"
    started = time.monotonic()
    done = run_on_kaggle(run, root, {**mounts, "proxy": proxy, "rerun": True}, log)
    seconds = time.monotonic() - started
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    assert not errors(run)
    said = text_of(run)
    assert f"kaggle:notebooks/{USER}/{NAME}: " in said and "mount layout)" in said
    assert "images/s here; the 120 test images by each of 2 models take about" in said
    assert "\ndevices: 1 CPU\nversions: python " in said
    assert json.loads(log.read_text()) == [], f"the rerun asked the data proxy ({proxy})"
    written = pd.read_csv(submission, dtype=str)
    print(f"rerun, proxy {proxy}: {len(written)} rows in {seconds:.1f} s, no proxy request")
    return written, said


@dataclasses.dataclass(frozen=True)
class Trained:
    """The training notebook's run on Kaggle: what it was given, said and wrote."""

    data: Path  # the competition as it was attached (copy it to change it)
    said: str  # the notebook's output
    asked: list  # what it asked the data proxy
    working: Path  # /kaggle/working after the run: the notebook's output


@pytest.fixture(scope="module")
def trained_on_kaggle(tmp_path_factory, preset) -> Trained:
    """The training notebook as Kaggle runs it, once for the module: in the mount layout by
    kind (/kaggle/input/competitions/<slug>, models/...) beside a data proxy that answers,
    only the competition and the backbone attached, its image size changed on Kaggle in the
    settings cell (inference must follow the trained run), every fold of 2 trained."""
    tmp = tmp_path_factory.mktemp("trained-on-kaggle")
    root = tmp / "input"  # what Kaggle mounts at /kaggle/input
    labels = [name for name in ("0", "1", "2") for _ in range(12)]
    data = competition(
        root / "competitions" / SLUG, labels, ["image_id", "label"], ["image_id", "label"]
    )
    handle = BACKBONES[BACKBONE].handle
    shutil.copytree(preset(BACKBONE), root / "models" / handle)
    mounts = {
        "proxy": True,  # answering as Kaggle's does
        "competitions": {SLUG: f"competitions/{SLUG}"},
        "models": {handle: f"models/{handle}"},
    }
    flags = ["--fold", "all", "--folds", "2"]  # and the cells a fold-all run adds
    training = kernel(
        tmp, *flags, "--output", str(tmp / "kernel"), "--output-dir", str(tmp / "working")
    )
    metadata = json.loads((training / "kernel-metadata.json").read_text())
    assert metadata["competition_sources"] == [SLUG] and metadata["dataset_sources"] == []
    notebook = alone(training / f"{NAME}.ipynb", tmp / "train-run")
    settings_changed(notebook, image_size=40)
    log = tmp / "train-log.json"
    done = run_on_kaggle(notebook, root, mounts, log)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    assert not errors(notebook)
    return Trained(data, text_of(notebook), json.loads(log.read_text()), tmp / "working")


@pytest.mark.slow
def test_the_training_notebook_finds_its_inputs_mounted_by_kind_and_writes_what_inference_needs(
    trained_on_kaggle,
):
    """Inputs are found in the mount layout before any data proxy is asked."""
    trained = trained_on_kaggle
    how = "found in Kaggle's by kind mount layout"
    assert f"kaggle:competitions/{SLUG}: {trained.data} ({how})" in trained.said
    assert "problems: none, ready to train" in trained.said
    assert "\ndevices: 1 CPU\nversions: python " in trained.said  # what ran, said first
    assert trained.asked == []  # mounted where Kaggle mounts: nothing to ask
    public = pd.read_csv(trained.data / "sample_submission.csv", dtype=str)
    written = pd.read_csv(trained.working / "submission.csv", dtype=str)
    assert written["image_id"].tolist() == public["image_id"].tolist()
    for left in ("model.weights.h5", "model.json", "folds.csv", "backbone/config.json"):
        for fold in ("fold0", "fold1"):
            assert (trained.working / fold / left).is_file(), left  # what inference needs
    # fold="all": the out-of-fold table, then the label audit's and the pseudo-labels' cells.
    audited = ("label_audit.csv", "likely_wrong.csv")
    for left in ("oof.csv", *audited, "pseudo_labels.csv"):
        assert (trained.working / left).is_file(), left
    # Two short folds leave suspects on some package sets and none on others: a picture of
    # the suspects where there are some, and the audit saying so where there are none.
    pictured = (trained.working / "label_audit.png").is_file()
    assert pictured or "no suspects to picture" in trained.said
    assert "of 36 training images" in trained.said and "fold 1's model: 9 of 9" in trained.said


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["by kind", "flat"])
def test_kaggles_rerun_of_the_inference_notebook_predicts_the_hidden_test_set(
    trained_on_kaggle, tmp_path, layout
):
    """Kaggle's scoring rerun: the training notebook's output mounted, the hidden test set in
    place, in either mount layout. It asks the data proxy nothing, whether the proxy fails
    every request (by kind) or is not there (flat), and needs the test images, the sample and
    the trained run, not the training files; it follows the run's own image size."""
    by_kind = layout == "by kind"
    root = tmp_path / "input"
    where = {
        "competitions": f"competitions/{SLUG}" if by_kind else SLUG,
        "notebooks": f"notebooks/{USER}/{NAME}" if by_kind else NAME,
    }
    data = Path(shutil.copytree(trained_on_kaggle.data, root / where["competitions"]))
    shutil.copytree(trained_on_kaggle.working, root / where["notebooks"])
    hidden = hidden_test_set(data, 120)
    (data / "train.csv").unlink()
    shutil.rmtree(data / "train_images")
    mounts = {
        "competitions": {SLUG: where["competitions"]},
        "notebooks": {f"{USER}/{NAME}": where["notebooks"]},
    }
    flags = ["--inference", "--output", str(tmp_path / "kernel-inference")]
    inference = kernel(tmp_path, *flags, "--output-dir", str(tmp_path / "rerun"))
    notebook = inference / f"{NAME}.ipynb"
    cells = nbformat.read(notebook, as_version=4).cells
    (config_cell,) = [c.source for c in cells if c.source.startswith("# The settings")]
    assert "    trained_dir=" in config_cell and "    tta=" in config_cell  # what it reads
    for field in ("backbone", "image_size", "weights", "epochs", "crop_area", "fold", "folds"):
        assert f"    {field}=" not in config_cell, field  # from the trained run, or training's
    edited = nbformat.read(notebook, as_version=4)  # its prediction loop, edited in its cell
    (loop,) = [cell for cell in edited.cells if PREDICTION_LOOP in cell.source]
    assert AVERAGED in loop.source and not loop.metadata.get("_kg_hide-input")  # in view
    shown = [cell.source for cell in edited.cells if not cell.metadata.get("_kg_hide-input")]
    assert not [source for source in shown if ".fit(" in source]  # it trains nothing
    loop.source = loop.source.replace(AVERAGED, EDITED_LOOP)
    nbformat.write(edited, notebook)
    written, said = rerun(tmp_path, notebook, root, mounts, "error" if by_kind else False)
    assert "edited loop: fold 0 averaged\n" in said and "edited loop: fold 1 averaged\n" in said
    assert f"kaggle:competitions/{SLUG}: {data} (found in Kaggle's {layout} mount layout)" in said
    assert written.columns.tolist() == ["image_id", "label"]
    assert written["image_id"].tolist() == hidden["image_id"].tolist()  # every row, in order
    assert set(written["label"]) <= {"0", "1", "2"}
    if by_kind:
        return
    # The command line's predict, on the same trained run and test set, writes the same.
    trained = ["--trained-dir", str(root / where["notebooks"]), "--data-dir", str(data)]
    command_line = tmp_path / "command-line"
    assert (
        main(["predict", "--competition", SLUG, *trained, "--output-dir", str(command_line)]) == 0
    )
    assert pd.read_csv(command_line / "submission.csv", dtype=str).equals(written)
    probabilities = [
        pd.read_csv(folder / "test_probabilities.csv")
        for folder in (command_line, tmp_path / "rerun")
    ]
    assert probabilities[0].columns.equals(probabilities[1].columns)
    assert np.allclose(probabilities[0].iloc[:, 1:], probabilities[1].iloc[:, 1:], atol=1e-5)


@pytest.mark.slow
def test_a_keras_hub_the_image_lacks_comes_from_the_wheels_dataset_in_kaggles_rerun(
    trained_on_kaggle, tmp_path
):
    """An image without keras-hub (Colab's TPU runtime is one): `kaggle wheels` downloads the
    keras-hub the backbone needs with real pip, whose index is a local folder (the network's
    edge), and pushes it as a private dataset with the real client; `kernel --inference`
    attaches it and keeps the internet off. Kaggle's scoring rerun, on a Python whose
    site-packages is this one's without keras-hub, installs it from the dataset mounted
    read-only with pip --no-index before anything imports it, and writes the submission."""
    hub = version("keras-hub")  # the wheel packed from this one: the newest packages' only
    assert versions.keras_hub_for(BACKBONE, version("keras")) == hub, "the suite's own set"
    index = tmp_path / "index"  # what pip's index serves
    wheel = wheel_of_installed("keras-hub", index)
    image = {**notebooks.image_packages(), "keras": version("keras")}
    del image["keras-hub"]
    dataset = f"{USER}/{PACKAGE.replace('_', '-')}-wheels"
    rerun = tmp_path / "rerun"  # the notebook's /kaggle/working
    inference = ["--inference", "--output", "kernel-inference", "--output-dir", str(rerun)]
    result = against_fake_kaggle(
        tmp_path,
        [
            ["kaggle", "wheels", "--backbone", BACKBONE],
            ["kernel", "--competition", SLUG, *QUICK, *inference],
        ],
        image=image,
        env={"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(index)},
    )
    pushed, made = result["steps"]
    assert pushed["code"] == 0 and made["code"] == 0, result["steps"]
    lacking = f"{BACKBONE} needs keras-hub {BACKBONES[BACKBONE].keras_hub} or later"
    assert f"{lacking}; keras-hub is not installed: downloaded keras-hub=={hub} " in pushed["out"]
    assert f"pushed wheels/ ({wheel.name}) as the private Kaggle dataset {dataset}" in pushed["out"]
    (create,) = calls(result, "DatasetApiService/CreateDataset")
    assert create["json"]["isPrivate"] is True
    uploaded = sorted(r["json"]["name"] for r in calls(result, "BlobApiService/StartBlobUpload"))
    assert uploaded == sorted([wheel.name, "requirements.txt"])
    assert (tmp_path / "wheels" / wheel.name).read_bytes() == wheel.read_bytes()
    metadata = json.loads((tmp_path / "kernel-inference" / "kernel-metadata.json").read_text())
    assert metadata["dataset_sources"] == [dataset] and metadata["enable_internet"] is False

    root = tmp_path / "input"  # by kind: the wheels as Kaggle mounts the dataset's files
    data = Path(shutil.copytree(trained_on_kaggle.data, root / "competitions" / SLUG))
    shutil.copytree(trained_on_kaggle.working, root / "notebooks" / USER / NAME)
    mounted = root / "datasets" / dataset
    mounted.mkdir(parents=True)
    for name in uploaded:
        shutil.copy(tmp_path / "wheels" / name, mounted)
    hidden = hidden_test_set(data, 12)
    python = python_without(tmp_path / "image", "keras-hub")
    site = Path(python).parents[1] / "lib"
    assert not list(site.glob("*/site-packages/keras_hub"))  # the image lacks it
    run = alone(tmp_path / "kernel-inference" / f"{NAME}.ipynb", tmp_path / "notebook")
    log = tmp_path / "rerun-log.json"
    done = run_on_kaggle(run, root, {"proxy": False, "rerun": True}, log, python)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    assert not errors(run)
    said = text_of(run)
    installing = f"installing keras-hub {hub} from the wheels in {mounted} (kaggle:datasets/"
    assert f"{lacking}; keras-hub is not installed: {installing}{dataset})" in said
    assert f", keras-hub {hub}, " in said  # the run's versions line: the one installed
    (installed,) = site.glob("*/site-packages/keras_hub")
    assert installed.is_dir() and not installed.is_symlink()  # pip put it into the image
    written = pd.read_csv(rerun / "submission.csv", dtype=str)
    assert written["image_id"].tolist() == hidden["image_id"].tolist()
    assert json.loads(log.read_text()) == []  # nothing asked of the data proxy


def test_the_inference_push_attaches_the_training_notebook_offline_without_a_tpu(tmp_path):
    """What the real client sends Kaggle for the inference notebook: the competition and the
    training notebook's output, internet off, GPU, no model (the trained run carries it)."""
    folder = str(tmp_path / "kernel-inference")
    result = against_fake_kaggle(
        tmp_path,
        [
            ["kernel", "--inference", "--competition", SLUG, "--output", folder],
            ["kaggle", "push", "--kernel-dir", folder],
        ],
    )
    made, pushed = result["steps"]
    assert made["code"] == 0 and pushed["code"] == 0, result["steps"]
    (request,) = calls(result, "kernels.KernelsApiService/SaveKernel")
    sent = request["json"]
    assert sent["slug"] == f"{USER}/{NAME}-inference"
    assert sent["kernelDataSources"] == [f"{USER}/{NAME}"]
    assert sent["competitionDataSources"] == [SLUG]
    assert sent["enableInternet"] is False and sent["enableTpu"] is False
    assert (sent["machineShape"], sent["enableGpu"]) == ("NvidiaTeslaT4", True)
    assert not sent.get("modelDataSources")
    cells = [cell["source"] for cell in json.loads(sent["text"])["cells"]]
    cells = ["".join(cell) if isinstance(cell, list) else cell for cell in cells]
    shown = "".join(cell for cell in cells if not cell.startswith("#@title"))
    assert f"kaggle:notebooks/{USER}/{NAME}" in shown and "written = predict(run)" in shown
    assert ".fit(" not in shown  # its cells train nothing


def test_an_input_is_found_in_either_layout_and_a_missing_one_lists_what_is_attached(
    tmp_path, monkeypatch
):
    """In a notebook whose data proxy does not answer: both layouts, then what is there."""
    monkeypatch.setenv("KAGGLE_KERNEL_RUN_TYPE", "Interactive")
    monkeypatch.delenv("KAGGLE_DATA_PROXY_URL", raising=False)
    monkeypatch.setattr(paths, "KAGGLE_INPUT", tmp_path)
    kaggle_inputs.found.cache_clear()
    (tmp_path / "competitions" / SLUG).mkdir(parents=True)
    (tmp_path / "datasets" / "bob" / "extra").mkdir(parents=True)
    (tmp_path / NAME).mkdir()  # a notebook's output, mounted the older way
    places = paths.find(Config(competition=SLUG), {})
    assert (places.data, places.data_from) == (
        str(tmp_path / "competitions" / SLUG),
        f"the competition {SLUG}, found in Kaggle's by kind mount layout",
    )
    assert paths.local(f"kaggle:notebooks/{USER}/{NAME}/fold0") == str(tmp_path / NAME / "fold0")
    with pytest.raises(UserError) as caught:
        paths.find(Config(competition="digit-recognizer"), {}).file("data_dir")
    assert str(caught.value) == (
        "kaggle:competitions/digit-recognizer is not attached to this notebook: not at "
        f"{tmp_path}/competitions/digit-recognizer or {tmp_path}/digit-recognizer; {tmp_path} "
        f"holds competitions/{SLUG}, datasets/bob/extra, {NAME}. Add it in the notebook's "
        "Input panel (or kernel-metadata.json)"
    )
    with pytest.raises(UserError, match="'kaggle:datasets/bob' is not a Kaggle input; give one"):
        paths.local("kaggle:datasets/bob")


@pytest.mark.parametrize(
    "proxy, said",
    [
        ("error", "did not answer (HTTPError: 500 Server Error"),
        ("silent", "named no folder within 1 s"),
    ],
)
def test_the_data_proxy_is_asked_last_with_a_time_limit_and_never_in_a_scoring_rerun(
    tmp_path, monkeypatch, proxy, said
):
    """kagglehub's real resolver against the fake proxy failing, or never answering."""
    log = []
    server = fake_data_proxy.serve({"root": str(tmp_path)}, log, proxy)
    for name, value in fake_data_proxy.TOKENS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("KAGGLE_KERNEL_RUN_TYPE", "Interactive")
    monkeypatch.setenv("KAGGLE_DATA_PROXY_URL", f"http://127.0.0.1:{server.server_address[1]}")
    monkeypatch.setattr(paths, "KAGGLE_INPUT", tmp_path)
    monkeypatch.setattr(kaggle_inputs, "PROXY_SECONDS", 1)
    (tmp_path / "competitions" / SLUG).mkdir(parents=True)
    try:
        kaggle_inputs.found.cache_clear()
        paths.local(f"kaggle:competitions/{SLUG}")  # mounted: found without a request
        assert log == []
        with pytest.raises(UserError, match=re.escape(f"(the data proxy {said}")):
            paths.local(f"kaggle:notebooks/{USER}/{NAME}")  # in no layout: the proxy is asked
        assert len(log) == 1
        monkeypatch.setenv("KAGGLE_IS_COMPETITION_RERUN", "true")
        kaggle_inputs.found.cache_clear()
        rerun_said = "(the data proxy not asked in Kaggle's scoring rerun"
        with pytest.raises(UserError, match=re.escape(rerun_said)):
            paths.local(f"kaggle:notebooks/{USER}/{NAME}")
        assert len(log) == 1  # nothing more asked
    finally:
        server.shutdown()
        kaggle_inputs.found.cache_clear()


@pytest.mark.slow
def test_a_blends_inference_notebook_predicts_every_run_on_the_hidden_test_set(blendable, tmp_path):
    """The blend's notebook as Kaggle's scoring rerun runs it (the 2026 mount layout, offline,
    nothing at the data proxy's address): each run from its own training notebook's output, at
    its own image size and flips, blended with the weights `blend` fitted; every row of the
    hidden sample in its order, and for the images the laptop predicted too (under new ids
    here), the values `blend` wrote there."""
    runs = [fetched(run, tmp_path, f"{USER}/{run.name}-run") for run in blendable.runs]
    laptop = tmp_path / "blend"
    flags = ["--data-dir", str(blendable.data), "--output-dir", str(laptop)]
    assert main(["blend", *map(str, runs), *flags, "--weights", "equal"]) == 0  # both weigh
    root = tmp_path / "input"  # /kaggle/input, by kind
    data = Path(shutil.copytree(blendable.data, root / "competitions" / SLUG))
    mounts = {"proxy": False, "rerun": True, "competitions": {SLUG: f"competitions/{SLUG}"}}
    mounts["notebooks"] = {
        f"{USER}/{run.name}-run": f"notebooks/{USER}/{run.name}-run" for run in runs
    }
    for run in runs:
        shutil.copytree(run, root / mounts["notebooks"][f"{USER}/{run.name}-run"])

    renamed, order = public_renamed_among_unseen(data)
    flags = ["--blend", str(laptop / "blend.json"), "--output", str(tmp_path / "kernel-blend")]
    folder = kernel(tmp_path, *flags, "--output-dir", str(tmp_path / "rerun"))
    metadata = json.loads((folder / "kernel-metadata.json").read_text())
    assert metadata["kernel_sources"] == list(mounts["notebooks"])
    said = rerun_of(folder, tmp_path, root, mounts)
    for number, run in enumerate(runs, 1):
        assert f"--- run {number} of 2: {run.name} (kaggle:notebooks/{USER}/{run.name}-run)" in said
    assert said.count("images/s here") == 2 and "with flips: " in said  # the 40 px run's TTA
    assert "the 2 runs take about" in said

    same_as_the_laptops(tmp_path / "rerun", laptop, renamed, order)


def rerun_of(folder: Path, tmp_path: Path, root: Path, mounts: dict) -> str:
    """What the notebook `kernel` wrote into `folder` said in Kaggle's scoring rerun, run
    alone with `root` mounted: it must finish without an error, its inputs found by the
    mount layout and nothing asked of the data proxy."""
    notebook = alone(folder / f"{NAME}.ipynb", tmp_path / "rerun-notebook")
    log = tmp_path / "rerun-log.json"
    done = run_on_kaggle(notebook, root, mounts, log)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    assert not errors(notebook)
    assert json.loads(log.read_text()) == []
    return text_of(notebook)


def public_renamed_among_unseen(data: Path) -> tuple[dict[str, str], list[str]]:
    """The hidden test set: the public test images under new ids, and 40 images never seen
    (batches enough to time), in a shuffled sample. The new id of each public image, and
    the sample's order."""
    public = sorted(path.name for path in (data / "test_images").iterdir())
    renamed = {name: f"h{700000 + number * 11}.jpg" for number, name in enumerate(public)}
    for name, new in renamed.items():
        (data / "test_images" / name).rename(data / "test_images" / new)
    rng = np.random.default_rng(2)
    unseen = [f"h{800000 + number}.jpg" for number in range(40)]
    for number, name in enumerate(unseen):
        image(data / "test_images" / name, [["healthy", "rust", "scab"][number % 3]], rng)
    order = [[*renamed.values(), *unseen][i] for i in rng.permutation(len(public) + len(unseen))]
    write_csv(data / "sample_submission.csv", ["image_id", "label"], [(n, 0) for n in order])
    return renamed, order


def same_as_the_laptops(rerun: Path, laptop: Path, renamed: dict[str, str], order: list[str]):
    """Every row of the hidden sample, in its order; for the images the laptop predicted too
    (under new ids), the probabilities it wrote, and the labels of those probabilities."""
    written = pd.read_csv(rerun / "submission.csv", dtype=str)
    assert written["image_id"].tolist() == order
    there = pd.read_csv(rerun / "test_probabilities.csv", dtype={"image_id": str})
    here = pd.read_csv(laptop / "test_probabilities.csv", dtype={"image_id": str})
    there = there.set_index("image_id").loc[[renamed[name] for name in here["image_id"]]]
    apart = np.abs(there.to_numpy() - here.set_index("image_id").to_numpy()).max()
    print(f"{laptop.name}'s rerun: {len(written)} rows in the sample's order, {len(here)} seen "
          f"on the laptop, largest difference {apart:.1e}")  # fmt: skip
    assert apart <= 1e-5
    classes = there.columns.tolist()
    labels = written.set_index("image_id").loc[there.index, "label"]
    assert (labels.astype(int).to_numpy() == there[classes].to_numpy().argmax(1)).all()


@pytest.mark.slow
def test_a_stacks_inference_notebook_fits_its_trees_again_and_predicts_the_hidden_test_set(
    blendable, tmp_path
):
    """The stack's notebook as Kaggle's scoring rerun runs it (by kind, offline, no proxy):
    its run predicted from its training notebook's output, then the trees fitted again on
    the run's oof.csv and the metadata of the competition's train.csv, to the CV `stack`
    measured, and predicting from the hidden images' probabilities and test.csv's rows:
    for the images the laptop predicted too, the values `stack` wrote there."""
    (run,) = [fetched(blendable.runs[0], tmp_path, f"{USER}/{blendable.runs[0].name}-run")]
    root = tmp_path / "input"
    data = Path(shutil.copytree(blendable.data, root / "competitions" / SLUG))
    train = pd.read_csv(data / "train.csv", dtype=str)
    rng = np.random.default_rng(3)  # a column that tells the class, with noise
    train["size"] = train["label"].astype(int) * 10 + rng.integers(0, 15, len(train))
    train.to_csv(data / "train.csv", index=False)
    public = pd.read_csv(data / "sample_submission.csv", dtype=str)["image_id"]
    sizes = dict(zip(public, rng.integers(0, 35, len(public)), strict=True))
    pd.DataFrame({"image_id": list(sizes), "size": list(sizes.values())}).to_csv(
        data / "test.csv", index=False
    )
    laptop = tmp_path / "stack"
    flags = ["--data-dir", str(data), "--test-csv", str(data / "test.csv")]
    assert main(["stack", str(run), *flags, "--output-dir", str(laptop)]) == 0
    stack = json.loads((laptop / "stack.json").read_text())
    assert stack["metadata_columns"] == ["size"]

    renamed, order = public_renamed_among_unseen(data)
    hidden = {renamed[name]: size for name, size in sizes.items()}
    hidden |= {name: 20 for name in order if name not in hidden}
    pd.DataFrame({"image_id": list(hidden), "size": list(hidden.values())}).to_csv(
        data / "test.csv", index=False
    )
    notebook_id = f"{USER}/{run.name}-run"
    shutil.copytree(run, root / "notebooks" / notebook_id)
    mounts = {"proxy": False, "rerun": True, "competitions": {SLUG: f"competitions/{SLUG}"}}
    mounts["notebooks"] = {notebook_id: f"notebooks/{notebook_id}"}
    flags = ["--blend", str(laptop / "stack.json"), "--test-csv", "test.csv"]
    flags += ["--output", str(tmp_path / "kernel-stack"), "--output-dir", str(tmp_path / "rerun")]
    folder = kernel(tmp_path, *flags)
    metadata = json.loads((folder / "kernel-metadata.json").read_text())
    assert metadata["kernel_sources"] == [notebook_id]
    submitted_as = f"a stack; cv {stack['metric']} {stack['stack_cv']:.4f}, stack of 1"
    run_here = start(Config(), on_accelerator=False, read=False)
    assert described(run_here, "", str(folder)) == submitted_as  # kaggle submit's description
    said = rerun_of(folder, tmp_path, root, mounts)
    assert f"--- run 1 of 1: {run.name} (kaggle:notebooks/{notebook_id})" in said
    cv = f"{stack['stack_cv']:.4f}"
    assert (
        f"trees fitted on {stack['images']} images' out-of-fold probabilities and size: "
        f"{stack['metric']} {cv} out of fold (stack.json: {cv})"
    ) in said
    assert "not the stack's CV" not in said
    same_as_the_laptops(tmp_path / "rerun", laptop, renamed, order)
