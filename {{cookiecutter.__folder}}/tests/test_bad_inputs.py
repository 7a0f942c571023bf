"""Every input a user can hand the project, wrong, in one table: each row runs the real
command line (`main`, as `python -m {{ cookiecutter.package }}` calls it) and must end in its
exit code and one line that names the file, flag or field at fault, with nothing written,
deleted or half-written anywhere in the test's folder."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from conftest import OFFLINE, PROJECT, Blendable

from {{ cookiecutter.package }}.__main__ import main
from {{ cookiecutter.package }}.runtime.platform.run_lock import one_run_at_a_time


@dataclasses.dataclass(frozen=True)
class Given:
    """What rows build on, made once: the demo competition, and a run trained on it."""

    demo: Path
    trained: Path  # an output folder holding a finished run of the demo preset
    blendable: Blendable  # two runs ready to blend, and their competition


@dataclasses.dataclass(frozen=True)
class Row:
    name: str
    # Lays out the inputs under the test's folder; returns the command line.
    make: Callable[[Path, Given], list[str]]
    says: str  # what the one line says, in part
    code: int = 2  # doctor's is 1: it lists its problems among its checks
    # Given, the row runs in a fresh, offline interpreter whose ~/.kaggle/kaggle.json holds
    # it: the kaggle client reads where that file is once, at import.
    kaggle_json: str | None = None


def copy_of(folder: Path, tmp: Path, name: str) -> Path:
    """A copy of a folder where the row may change it."""
    return Path(shutil.copytree(folder, tmp / name))


@pytest.fixture(scope="module")
def given(demo_dir, trained_demo, blendable, tmp_path_factory) -> Given:
    output = copy_of(trained_demo, tmp_path_factory.mktemp("trained"), "output")
    return Given(demo_dir, output, blendable)


def words(command: str) -> list[str]:
    """A command line as a shell splits it."""
    return shlex.split(command)


def records_into(images: Path, output: Path | str, *more: str) -> list[str]:
    """`records` of a competition's images (train/, train.csv, test/) into `output` (under
    the images' folder when relative)."""
    return words(
        f"records --images {images}/train --csv {images}/train.csv --test-images "
        f"{images}/test --output {images / output} " + " ".join(more)
    )


def user_files(folder: Path, *names: str) -> Path:
    """A folder holding files of the user's."""
    for name in names:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text("the user's\n")
    return folder


HELD = contextlib.ExitStack()  # folders a train holds, as a running one does, till the tests end


def held_by_a_train(folder: Path) -> Path:
    """`folder`, held as a running `train` holds its output folder."""
    HELD.enter_context(one_run_at_a_time(folder, "--output-dir"))
    return folder


def one_label(given: Given, tmp: Path) -> Path:
    """The demo's train.csv with every image labelled 3."""
    rows = (given.demo / "images" / "train.csv").read_text().splitlines()
    path = tmp / "one-label.csv"
    path.write_text("\n".join([rows[0], *(row.split(",")[0] + ",3" for row in rows[1:])]) + "\n")
    return path


LATIN_1 = "id,label\n0,café\n".encode("latin-1")  # as a spreadsheet may save it


def training_csv(
    given: Given, tmp: Path, text: str = "", label: str = "", data: bytes = b""
) -> Path:
    """A training CSV: `data`, else `text`, else the demo's train.csv with its first image
    labelled `label`."""
    path = tmp / "csv" / "train.csv"
    path.parent.mkdir()
    if not (data or text):
        rows = (given.demo / "images" / "train.csv").read_text().splitlines()
        text = "\n".join([rows[0], rows[1].split(",")[0] + "," + label, *rows[2:]]) + "\n"
    path.write_bytes(data or text.encode())
    return path


def with_metadata(given: Given, tmp: Path, site: str = "arm", rows: slice = slice(None)) -> Path:
    """A copy of the demo's images whose train.csv has a column "site" (every value `site`),
    beside test.csv: the test images' ids (without their extension) and site, `rows` of them."""
    images = copy_of(given.demo / "images", tmp, "images")
    edit_csv(images / "train.csv", lambda table: table.assign(site=site))
    tests = sorted(path.stem for path in (images / "test").iterdir())[rows]
    (images / "test.csv").write_text("id,site\n" + "".join(f"{key},leg\n" for key in tests))
    return images


def records_of(given: Given, images: Path, output: Path) -> Path:
    """`output`, holding the records `records` writes from `images` (the demo's layout)."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(records_into(images, output)) == 0
    return output


def without_a_shard(given: Given, tmp: Path) -> Path:
    """Records of the demo's images, one training shard the manifest counts deleted."""
    output = records_of(given, copy_of(given.demo / "images", tmp, "images"), tmp / "records")
    min((output / "train").glob("fold1-*.tfrec")).unlink()
    return output


def files_under(folder: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


# Where a run reads: data, test images, a trained run, Kaggle inputs, a notebook's sources.
INPUTS = [
    Row(
        "data folder: no such folder",
        lambda tmp, given: words(f"train --preset demo --data-dir {tmp}/no --output-dir {tmp}/o"),
        "/no does not exist (from --data-dir); give the folder that holds the competition's",
    ),
    Row(
        "test images: no such folder",
        lambda tmp, given: words(
            f"predict --preset demo --data-dir {given.demo} --test-images {tmp}/nowhere "
            f"--trained-dir {given.trained} --output-dir {tmp}/out"
        ),
        "Config.test_images / --test-images",
    ),
    Row(
        "trained run: a folder holding none",
        lambda tmp, given: words(
            f"predict --preset demo --data-dir {given.demo} --trained-dir {tmp} "
            f"--output-dir {tmp}/out"
        ),
        "holds no trained run (model.json and model.weights.h5",
    ),
    Row(
        "a Kaggle input that is not one",
        lambda tmp, given: words(
            f"train --preset demo --data-dir kaggle:datasets/bob --output-dir {tmp}/out"
        ),
        "'kaggle:datasets/bob' is not a Kaggle input; give one of kaggle:competitions/SLUG",
    ),
    Row(
        "inference: a training notebook that is not OWNER/SLUG",
        lambda tmp, given: words(
            f"kernel --inference --kaggle-user alice --trained-kernel 'Bob/x y' "
            f"--output {tmp}/kernel"
        ),
        "--trained-kernel 'Bob/x y': not OWNER/SLUG",
    ),
    Row(
        "train.csv: a class number no image has, below a mistyped label",
        lambda tmp, given: words(
            f"records --images {given.demo}/images/train --csv {training_csv(given, tmp, label='12')} "
            f"--output {tmp}/out"
        ),
        "are class numbers 0 to 12, but no image has 10, 11 (1 image(s) have 12)",
    ),
    Row(
        "train.csv: empty",
        lambda tmp, given: words(
            f"records --images {given.demo}/images/train --csv {training_csv(given, tmp, data=b' ')} "
            f"--output {tmp}/out"
        ),
        "train.csv: the file is empty: a CSV has a header row, then a row per image",
    ),
    Row(
        "train.csv: saved in a spreadsheet's code page, not UTF-8",
        lambda tmp, given: words(
            f"records --images {given.demo}/images/train "
            f"--csv {training_csv(given, tmp, data=LATIN_1)} --output {tmp}/out"
        ),
        "train.csv: line 2 is not UTF-8 text (byte 0xe9); save the file as UTF-8",
    ),
    Row(
        "train.csv and no train_images/ beside it",
        lambda tmp, given: words(
            f"train --preset demo --data-dir {training_csv(given, tmp, text='id,label').parent} "
            f"--valid-files none --output-dir {tmp}/out"
        ),
        "train.csv is here but not ",
    ),
    Row(
        "records: a training shard the manifest counts is gone",
        lambda tmp, given: words(
            f"train --data-dir {without_a_shard(given, tmp)} --backbone small-cnn --weights none "
            f"--image-size 32 --output-dir {tmp}/out"
        ),
        "a shard is missing or cut short; write the records again with `records`",
    ),
    Row(
        "score: no solution.csv in the data folder",
        lambda tmp, given: words(f"score --data-dir {tmp} --output-dir {tmp}/out"),
        "does not exist; give them with --solution FILE",
    ),
]
# Files and folders the project writes into or deletes from.
FOLDERS: list[Row] = [
    Row(
        "train: --output-dir the data folder",
        lambda tmp, given: words(
            f"train --preset demo --data-dir {copy_of(given.demo, tmp, 'data')} "
            f"--output-dir {tmp}/data"
        ),
        "holds the data folder ",
    ),
    Row(
        "train in folds of images and a CSV: --output-dir the data folder",
        lambda tmp, given: words(
            f"train --preset demo --data-dir {copy_of(given.demo / 'images', tmp, 'data')} "
            f"--train-csv {tmp}/data/train.csv --train-images {tmp}/data/train "
            f"--output-dir {tmp}/data"
        ),
        "/data holds the data folder ",
    ),
    Row(
        "predict with records in folds, nothing trained",
        lambda tmp, given: words(
            f"predict --data-dir {records_of(given, copy_of(given.demo / 'images', tmp, 'images'), tmp / 'records')} "
            f"--backbone small-cnn --weights none --image-size 32 --output-dir {tmp}/out"
        ),
        "/out/fold0/model.weights.h5, where train writes fold 0's; run `train` first",
    ),
    Row(
        "train: --output-dir a folder of records",
        lambda tmp, given: words(
            f"train --preset demo --data-dir {given.demo} "
            f"--output-dir {copy_of(given.demo / 'train', tmp / 'records', 'train').parent}"
        ),
        "/records holds files train did not write (train/",
    ),
    Row(
        "predict: --output-dir a folder of the user's, beside a run's own files",
        lambda tmp, given: predicting(given, user_files(tmp, "out/submission.csv", "out/x.py")),
        "/out holds files predict did not write (x.py); give an empty folder",
    ),
    Row(
        "evaluate: --output-dir a fold's run holding the user's file",
        lambda tmp, given: words(
            f"evaluate --preset demo --data-dir {given.demo} --trained-dir {given.trained} "
            f"--output-dir {user_files(tmp / 'out', 'fold0/notes/a.txt')}"
        ),
        "/out holds files evaluate did not write (fold0/notes/a.txt); give an empty folder",
    ),
    Row(
        "ablate: --output-dir the user's",
        lambda tmp, given: words(
            f"ablate --preset demo --data-dir {given.demo} --parts flip "
            f"--output-dir {user_files(tmp / 'out', 'notes.txt')}"
        ),
        "/out holds files ablate did not write (notes.txt); give an empty folder",
    ),
    Row(
        "kaggle output: --output-dir the user's",
        lambda tmp, given: words(
            f"kaggle output --kernel-dir {kernel_dir(tmp, A_KERNEL)} "
            f"--output-dir {user_files(tmp / 'out', 'submission.csv', 'mine.csv')}"
        ),
        "/out holds files kaggle output did not write (mine.csv); give an empty folder",
        kaggle_json='{"username": "alice", "key": "0123"}',
    ),
    Row(
        "records: --output-dir is the folder that holds the images",
        lambda tmp, given: records_into(copy_of(given.demo / "images", tmp, "dk"), "."),
        "overlap: records writes, and with --force removes, what --output-dir holds",
    ),
    Row(
        "records --force: the images in --output survive",
        lambda tmp, given: records_into(copy_of(given.demo / "images", tmp, "dk"), ".", "--force"),
        "overlap: records writes, and with --force removes, what --output-dir holds",
    ),
    Row(
        "records --force: a file of the user's in --output survives",
        lambda tmp, given: records_into(
            given.demo / "images", user_files(tmp / "out", "notes.txt", "train/mine.jpg"), "--force"
        ),
        "holds files records did not write (notes.txt, train/mine.jpg)",
    ),
    Row(
        "records --force: shards no earlier run of records names survive",
        lambda tmp, given: records_into(
            given.demo / "images", user_files(tmp / "out", "train/fold0-00-5.tfrec"), "--force"
        ),
        "holds shards no manifest.json or records-progress.json there names",
    ),
    Row(
        "records: --output-dir inside the folder of images",
        lambda tmp, given: records_into(copy_of(given.demo / "images", tmp, "dk"), "train/records"),
        "and --images",
    ),
    Row(
        "records: --test-images are the training images",
        lambda tmp, given: words(
            f"records --images {given.demo}/images/train --csv {given.demo}/images/train.csv "
            f"--test-images {given.demo}/images/train --output {tmp}/out"
        ),
        "the training images would become the test set",
    ),
    Row(
        "a relative --train-files that is neither where you run nor in the data folder",
        lambda tmp, given: words(
            f"train --preset demo --data-dir {given.demo} --train-files 'nowhere/*.tfrec' "
            f"--output-dir {tmp}/out"
        ),
        "--train-files) from where you run",
    ),
    Row(
        "records: every image with one label",
        lambda tmp, given: words(
            f"records --images {given.demo}/images/train --csv {one_label(given, tmp)} "
            f"--output {tmp}/out"
        ),
        "every image has the one label '3' (column 'label'); a classifier needs two classes",
    ),
    Row(
        "predict from a trained run a train is replacing",
        lambda tmp, given: words(
            f"predict --preset demo --data-dir {given.demo} --output-dir {tmp}/out "
            f"--trained-dir {held_by_a_train(copy_of(given.trained, tmp, 'run'))}"
        ),
        "is in use by a running train (process",
    ),
    Row(
        "doctor while a train holds the output folder",
        lambda tmp, given: words(
            f"doctor --preset demo --data-dir {given.demo} "
            f"--output-dir {held_by_a_train(copy_of(given.trained, tmp, 'run'))}"
        ),
        "is in use by a running train (process",
        code=1,
    ),
]
# What a submission is made of: columns, classes, ids, thresholds.
SUBMISSIONS: list[Row] = [
    Row(
        "sample: a probability column too many",
        lambda tmp, given: predicting(
            given, tmp, "--sample-submission", probability_sample(given, tmp, [*DIGITS, "10"])
        ),
        "column(s) '10': no class of the model",
    ),
    Row(
        "sample: a probability column too few",
        lambda tmp, given: predicting(
            given, tmp, "--sample-submission", probability_sample(given, tmp, DIGITS[:-1])
        ),
        "class(es) '9': no column",
    ),
    Row(
        "--class-names that disagree with the records' classes",
        lambda tmp, given: words(
            f"train --preset demo --data-dir {with_manifest(given, tmp, classes=NAMES)} "
            f"--class-names {','.join(NAMES[::-1])} --output-dir {tmp}/out"
        ),
        "disagrees with the classes the records' manifest",
    ),
    Row(
        "--class-names that disagree with the trained run's classes",
        lambda tmp, given: predicting(given, tmp, "--class-names", ",".join(NAMES)),
        "disagrees with the classes the trained run",
    ),
    Row(
        "a test image records skipped as unreadable",
        lambda tmp, given: predicting(
            given,
            tmp,
            *("--sample-submission", str(given.demo / "sample_submission.csv")),
            data=records_skipping_a_test_image(given, tmp),
        ),
        "1 sample ids have no test record because `records` skipped their images as unreadable",
    ),
    Row(
        "records' manifest: a field that is not what records writes",
        lambda tmp, given: predicting(given, tmp, data=with_manifest(given, tmp, folds="five")),
        "manifest.json: folds is 'five', not a whole number",
    ),
    Row(
        "records' manifest: not JSON",
        lambda tmp, given: predicting(given, tmp, data=with_manifest(given, tmp, text="{folds: 5")),
        "manifest.json is not JSON",
    ),
    *(
        Row(
            f"thresholds.json: class {number} at {value}",
            lambda tmp, given, number=number, value=value: predicting(
                given, tmp, "--multi-label", trained=with_thresholds(given, tmp, number, value)
            ),
            f"thresholds.json: the threshold of class {number} ({name}) is {shown}, not a "
            "number in 0..1",
        )
        for number, value, name, shown in [
            (9, "2.0", "nine", "2.0"),
            (0, "NaN", "zero", "nan"),
            (1, "-1", "one", "-1"),
        ]
    ),
    Row(
        "trained run: model.json that is not JSON",
        lambda tmp, given: predicting(given, tmp, trained=with_record(given, tmp, "{num_classes")),
        "model.json is not readable JSON (JSONDecodeError",
    ),
    Row(
        "kernel --kernel-dir holding a kernel-metadata.json that is not JSON",
        lambda tmp, given: words(
            f"kernel --kaggle-user alice --kernel-dir {kernel_dir(tmp, CUT_SHORT)}"
        ),
        "/kernel/kernel-metadata.json is not readable JSON (",
    ),
    Row(
        "kaggle.json cut short",
        lambda tmp, given: words(f"kaggle status --kernel-dir {kernel_dir(tmp, A_KERNEL)}"),
        "/home/.kaggle/kaggle.json is not readable JSON (",
        kaggle_json='{"username": "alice", "key": ',
    ),
    Row(
        "kaggle.json without a key",
        lambda tmp, given: words(f"kaggle status --kernel-dir {kernel_dir(tmp, A_KERNEL)}"),
        '/home/.kaggle/kaggle.json holds no "username" and "key"',
        kaggle_json='{"username": "alice"}',
    ),
    Row(
        "kernel-metadata.json: no id",
        lambda tmp, given: words(f"kaggle status --kernel-dir {kernel_dir(tmp, '[1, 2]')}"),
        'kernel-metadata.json: "id" is None, not OWNER/SLUG',
    ),
    Row(
        "score: class names in the submission, numbers in the solution",
        lambda tmp, given: words(
            f"score --data-dir {competition(tmp, solution='0')} --output-dir {tmp}/data/out"
        ),
        "labels its images with class names (e.g. 'rust'), ",
    ),
    Row(
        "bench input: a data folder that is not there",
        lambda tmp, given: words(f"bench input --preset demo --data-dir {tmp}/nowhere"),
        "no training records match",
    ),
    Row(
        "thresholds.json: 2 thresholds for 10 classes",
        lambda tmp, given: predicting(
            given, tmp, "--multi-label", trained=with_thresholds(given, tmp, text="0.5, 0.5")
        ),
        "thresholds.json holds 2 thresholds, the model has 10 classes",
    ),
    Row(
        "thresholds.json: not JSON",
        lambda tmp, given: predicting(
            given, tmp, "--multi-label", trained=with_thresholds(given, tmp, text="0.5 0.5")
        ),
        "thresholds.json is not JSON (JSONDecodeError",
    ),
    Row(
        "grade_cuts.json: cuts that go down",
        lambda tmp, given: predicting(given, tmp, "--metric", "qwk", trained=with_cuts(given, tmp)),
        "grade_cuts.json: the cuts [0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 1.0] are not "
        "increasing within 0..9",
    ),
]
DIGITS = [str(digit) for digit in range(10)]
NAMES = [f"class{digit}" for digit in DIGITS]


def predicting(given: Given, tmp: Path, *flags: str, data=None, trained=None) -> list[str]:
    """`predict` of the trained demo run into the test's folder, with these flags."""
    return [
        *words(f"predict --preset demo --data-dir {data or given.demo} --output-dir {tmp}/out"),
        *words(f"--trained-dir {trained or given.trained}"),
        *flags,
    ]


def records_skipping_a_test_image(given: Given, tmp: Path) -> Path:
    """Records written by `records` from the demo's images, one test image unreadable."""
    images = copy_of(given.demo / "images", tmp, "images")
    min((images / "test").iterdir()).write_bytes(b"not an image")
    return records_of(given, images, tmp / "records")


def probability_sample(given: Given, tmp: Path, columns: list[str]) -> str:
    """The demo's sample with a probability column for each of `columns`."""
    ids = (given.demo / "sample_submission.csv").read_text().splitlines()[1:]
    rows = [",".join(["id", *columns])] + [key.split(",")[0] + ",0.1" * len(columns) for key in ids]
    (tmp / "sample.csv").write_text("\n".join(rows) + "\n")
    return str(tmp / "sample.csv")


def with_manifest(given: Given, tmp: Path, text: str = "", **fields) -> Path:
    """A copy of the demo competition with a records manifest (`text`, else one with these
    fields changed), as `records` writes it."""
    import json

    from {{ cookiecutter.package }}.runtime.platform.files import MANIFEST

    manifest = {
        "folds": 1, "num_classes": 10, "classes": None, "multi_label": False,
        "id_column": "id", "label_column": "label", "test": {"records": 360},
        "train": {"per_fold": {"0": {"records": 1437, "classes": {"0": 143}}}},
    }  # fmt: skip
    data = copy_of(given.demo, tmp, "data")
    (data / MANIFEST).write_text(text or json.dumps({**manifest, **fields}))
    return data


def competition(tmp: Path, solution: str) -> Path:
    """A competition folder whose sample has an image_id column, as Cassava's does, with a
    submission of class names beside it and a solution whose label is `solution`."""
    data = tmp / "data"
    (data / "out").mkdir(parents=True)
    (data / "sample_submission.csv").write_text("image_id,label\na.jpg,0\n")
    (data / "solution.csv").write_text(f"image_id,label\na.jpg,{solution}\n")
    (data / "out" / "submission.csv").write_text("image_id,label\na.jpg,rust\n")
    return data


def with_record(given: Given, tmp: Path, text: str) -> Path:
    """A copy of the trained run, its model.json edited by hand."""
    trained = copy_of(given.trained, tmp, "trained")
    (trained / "model.json").write_text(text)
    return trained


CUT_SHORT = '{"id": '  # a JSON file cut short
A_KERNEL = '{"id": "alice/flowers"}'


def kernel_dir(tmp: Path, text: str) -> Path:
    """A kernel folder whose kernel-metadata.json holds `text`."""
    (tmp / "kernel").mkdir()
    (tmp / "kernel" / "kernel-metadata.json").write_text(text)
    return tmp / "kernel"


def with_thresholds(given: Given, tmp: Path, number=0, value="0.5", text="") -> Path:
    """A copy of the trained run, its thresholds.json edited by hand: the list holds `text`,
    else 0.5 for every class but `number`, which gets `value`."""
    cuts = ["0.5"] * 10
    cuts[number] = value
    trained = copy_of(given.trained, tmp, "trained")
    listed = text or ", ".join(cuts)
    (trained / "thresholds.json").write_text('{"thresholds": [' + listed + "]}")
    return trained


def with_cuts(given: Given, tmp: Path) -> Path:
    """A copy of the trained run beside a grade_cuts.json edited by hand: its last cut below
    the others."""
    trained = copy_of(given.trained, tmp, "trained")
    cuts = [number + 0.5 for number in range(8)] + [1.0]
    (trained / "grade_cuts.json").write_text(json.dumps({"grade_cuts": cuts}))
    return trained


# The command line itself: flags and choices.
COMMAND_LINE: list[Row] = [
    Row(
        "a choice that is not one",
        lambda tmp, given: words(f"kernel --accelerator tpu3 --output {tmp}/kernel"),
        "invalid choice: 'tpu3' (choose from 'tpu', 'gpu', 'cpu'); "
        "`python -m {{ cookiecutter.package }} kernel --help` lists the options",
    ),
    Row(
        "a misspelt flag",
        lambda tmp, given: words(f"kernel --acelerator tpu --output {tmp}/kernel"),
        "unrecognized arguments: --acelerator tpu",
    ),
    # A command's own numbers, checked as Config checks its fields: before, records --resize -5
    # ran and wrote its shards.
    Row(
        "records --resize below zero",
        lambda tmp, given: [*records_into(given.demo / "images", f"{tmp}/out"), "--resize", "-5"],
        "records --resize = '-5': must be 0 (as they are) or a whole number of at least 32",
    ),
    Row(
        "records --resize too small to train on",
        lambda tmp, given: [*records_into(given.demo / "images", f"{tmp}/out"), "--resize", "8"],
        "records --resize = '8': must be 0 (as they are) or a whole number of at least 32",
    ),
    Row(
        "records --window: a name that is no window",
        lambda tmp, given: records_into(given.demo / "images", f"{tmp}/out", "--window spleen"),
        "records --window spleen: not a window; give auto (the file's own), CENTER,WIDTH such as "
        "40,400, or one of lung, soft-tissue, bone, brain",
    ),
    Row(
        "records --window: a width of none",
        lambda tmp, given: records_into(given.demo / "images", f"{tmp}/out", "--window 40,0"),
        "records --window 40,0: not a window",
    ),
    Row(
        "records --slices: more than an image's three channels",
        lambda tmp, given: records_into(given.demo / "images", f"{tmp}/out", "--slices 5"),
        "argument --slices: invalid choice: 5 (choose from 1, 3)",
    ),
    Row(
        "records --slice-column: a column the CSV lacks",
        lambda tmp, given: records_into(given.demo / "images", f"{tmp}/out", "--slice-column x"),
        "train.csv has no column 'x' (records --slice-column); its columns are",
    ),
    Row(
        "ablate --runs 0",
        lambda tmp, given: words(f"ablate --preset demo --runs 0 --output-dir {tmp}/out"),
        "ablate --runs = '0': must be a whole number of at least 1",
    ),
    Row(
        "bench --repeats not a number",
        lambda tmp, given: words("bench input --synthetic --repeats five"),
        "bench --repeats = 'five': must be a whole number of at least 1",
    ),
    Row(
        "bench input --images-per-pass 0",
        lambda tmp, given: words("bench input --synthetic --images-per-pass 0"),
        "bench input --images-per-pass = '0': must be a whole number of at least 1",
    ),
    Row(
        "bench-train (bench train's older name) --timed-steps 0",
        lambda tmp, given: words("bench-train --timed-steps 0"),
        "bench train --timed-steps = '0': must be a whole number of at least 1",
    ),
    Row(
        "bench --repeats below zero",
        lambda tmp, given: words("bench train --repeats -1"),
        "bench --repeats = '-1': must be a whole number of at least 1",
    ),
    Row(
        "demo-data into a folder of records",
        lambda tmp, given: words(
            f"demo-data --output-dir {records_of(given, copy_of(given.demo / 'images', tmp, 'i'), tmp / 'r')}"
        ),
        "/r holds files demo-data did not write (manifest.json); give an empty folder",
    ),
    Row(
        "train --metric pauc of ten classes",
        lambda tmp, given: words(
            f"train --preset demo --data-dir {given.demo} --metric pauc --output-dir {tmp}/o"
        ),
        "--metric = 'pauc': must be a metric of 10 classes: pauc scores a binary target",
    ),
    Row(
        "train --metric qwk of several labels per image",
        lambda tmp, given: words(
            f"train --preset demo --data-dir {given.demo} --metric qwk --multi-label "
            f"--output-dir {tmp}/o"
        ),
        "--metric = 'qwk': must be one that scores several labels per image",
    ),
    Row(
        "predict --map-k beyond the classes",
        lambda tmp, given: predicting(given, tmp, "--metric", "map_at_k", "--map-k", "11"),
        "--map-k = 11: must be 1 to Config.num_classes / --num-classes (10): the classes",
    ),
    Row(
        "evaluate --pauc-min-tpr 1",
        lambda tmp, given: words(
            f"evaluate --preset demo --data-dir {given.demo} --trained-dir {given.trained} "
            f"--pauc-min-tpr 1 --output-dir {tmp}/o"
        ),
        "--pauc-min-tpr = 1.0: must be at least 0 and below 1",
    ),
    Row(
        "records --metadata-columns naming a column the training table lacks",
        lambda tmp, given: records_into(
            with_metadata(given, tmp),
            "r",
            f"--test-csv {tmp}/images/test.csv",
            "--metadata-columns site,weight",
        ),
        "records --metadata-columns 'site,weight': the training table has no column 'weight'; "
        "its columns are site",
    ),
    Row(
        "records --metadata-columns of a column with no values",
        lambda tmp, given: records_into(
            with_metadata(given, tmp, site=""),
            "r",
            f"--test-csv {tmp}/images/test.csv",
            "--metadata-columns site",
        ),
        "records --metadata-columns 'site': column 'site' holds no values; leave it out",
    ),
    Row(
        "records --test-csv without a row for a test image",
        lambda tmp, given: records_into(
            with_metadata(given, tmp, rows=slice(1, None)),
            "r",
            f"--test-csv {tmp}/images/test.csv",
        ),
        "/images/test.csv has no row for 1 of the ",
    ),
    Row(
        "train --metadata-columns the records do not keep",
        lambda tmp, given: words(
            f"train --preset demo --data-dir {given.demo} --metadata-columns site "
            f"--output-dir {tmp}/o"
        ),
        "--metadata-columns 'site': the records keep no metadata, not 'site'; write them again",
    ),
    Row(
        "demo-data --seed below zero",
        lambda tmp, given: words(f"demo-data --seed -1 --output-dir {tmp}/demo"),
        "demo-data --seed = '-1': must be a whole number of at least 0",
    ),
]


def blending(given: Given, tmp: Path, *runs: Path, output: str = "") -> list[str]:
    """`blend` of these runs (the two blendable ones by default) into tmp/blend."""
    runs = runs or tuple(given.blendable.runs)
    return [
        "blend", *map(str, runs), "--data-dir", str(given.blendable.data),
        "--output-dir", output or str(tmp / "blend"),
    ]  # fmt: skip


def changed_run(given: Given, tmp: Path, change) -> Path:
    """A copy of the second blendable run, changed by `change(folder)`."""
    copy = copy_of(given.blendable.runs[1], tmp, "changed")
    change(copy)
    return copy


def edit_csv(path: Path, change) -> None:
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    change(table).to_csv(path, index=False)


def edit_record(folder: Path, **values) -> None:
    for path in folder.glob("fold*/model.json"):
        path.write_text(json.dumps({**json.loads(path.read_text()), **values}))


def other_fold_seed(run: Path) -> None:
    """The run as `train --fold-seed 7` leaves it: its folds drawn otherwise."""
    edit_csv(run / "oof.csv", swapped_folds)
    edit_record(run, fold_seed=7)


def blended_with(given: Given, tmp: Path, change) -> list[str]:
    return blending(given, tmp, given.blendable.runs[0], changed_run(given, tmp, change))


def blend_json(given: Given, tmp: Path) -> Path:
    """The blend.json `blend` writes of the blendable runs (trained here, in no notebook)."""
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(blending(given, tmp, output=str(tmp / "blended"))) == 0
    return tmp / "blended" / "blend.json"


def stacked_json(given: Given, tmp: Path) -> Path:
    """The stack.json `stack` writes of a blendable run (trained here, in no notebook)."""
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(stacking(given, tmp, given.blendable.runs[0], output=tmp / "stacked")) == 0
    return tmp / "stacked" / "stack.json"


def swapped_folds(table: pd.DataFrame) -> pd.DataFrame:
    first = table.index[table["fold"] != table["fold"][0]][0]
    table.loc[[0, first], "fold"] = table.loc[[first, 0], "fold"].to_numpy()
    return table


# Runs blend refuses to blend, and blends the inference notebook cannot rebuild.
BLENDS = [
    Row(
        "blend: into another command's folder (a trained run not blended)",
        lambda tmp, given: blending(given, tmp, output=str(copy_of(given.trained, tmp, "run"))),
        "/run holds files blend did not write (checkpoints, curves.png, history.json, ... (",
    ),
    Row(
        "blend: one run",
        lambda tmp, given: blending(given, tmp, given.blendable.runs[0]),
        "blend needs two runs or more: give each run's output folder",
    ),
    Row(
        "blend: a run given twice",
        lambda tmp, given: blending(given, tmp, *[given.blendable.runs[0]] * 2),
        "is given twice; give each run once",
    ),
    Row(
        "blend: a run that is not --fold all",
        lambda tmp, given: blended_with(given, tmp, lambda run: (run / "oof.csv").unlink()),
        "changed has no oof.csv: a blend is fitted on the out-of-fold predictions of a "
        "`--fold all` run; train it with --fold all",
    ),
    Row(
        "blend: a run not predicted",
        lambda tmp, given: blended_with(
            given, tmp, lambda run: (run / "test_probabilities.csv").unlink()
        ),
        "changed has no test_probabilities.csv; run `predict --output-dir",
    ),
    Row(
        "blend: runs of different metrics",
        lambda tmp, given: blended_with(
            given, tmp, lambda run: edit_record(run, metric="accuracy")
        ),
        "were trained for different metrics (macro_f1, accuracy: their model.json)",
    ),
    Row(
        "blend: runs of different classes",
        lambda tmp, given: blended_with(
            given, tmp, lambda run: edit_record(run, class_names="a,b,c")
        ),
        "have different classes (p0, p1, p2 and a, b, c); blend runs trained with the same",
    ),
    Row(
        "blend: the classes in another order",
        lambda tmp, given: blended_with(
            given,
            tmp,
            lambda run: [
                edit_csv(run / name, lambda t: t[[c for c in t.columns if c != "p0"] + ["p0"]])
                for name in ("oof.csv", "test_probabilities.csv")
            ],
        ),
        "have the same classes in another order (p0, p1, p2 and p1, p2, p0)",
    ),
    Row(
        "blend: runs validated on other images",
        lambda tmp, given: blended_with(
            given, tmp, lambda run: edit_csv(run / "oof.csv", lambda t: t.iloc[:-1])
        ),
        "were validated on different images (1 ids of",
    ),
    Row(
        "blend: runs of other folds",
        lambda tmp, given: blended_with(
            given, tmp, lambda run: edit_csv(run / "oof.csv", swapped_folds)
        ),
        "hold 2 images in different folds (e.g.",
    ),
    Row(
        "blend: a run of another --fold-seed",
        lambda tmp, given: blended_with(given, tmp, other_fold_seed),
        ": their --fold-seed differs (42, 7: their model.json)",
    ),
    Row(
        "blend: another test set, or another order",
        lambda tmp, given: blended_with(
            given, tmp, lambda run: edit_csv(run / "test_probabilities.csv", lambda t: t[::-1])
        ),
        "predicted different test ids, or in another order (first difference at row 0 of "
        "test_probabilities.csv); predict each with the same test set and sample submission",
    ),
    Row(
        "blend: into a run's own folder",
        lambda tmp, given: blending(
            given,
            tmp,
            given.blendable.runs[0],
            changed_run(given, tmp, lambda run: None),
            output=str(tmp / "changed"),
        ),
        "changed is the folder of the run",
    ),
    Row(
        "kernel --blend: a run from no notebook",
        lambda tmp, given: words(
            f"kernel --blend {blend_json(given, tmp)} --kaggle-user a --kernel-dir {tmp}/k"
        ),
        "came from no Kaggle notebook (no kaggle-notebook.json in it), so the blend's notebook "
        "cannot attach it",
    ),
    Row(
        "kernel --slug: not a slug",
        lambda tmp, given: words(f"kernel --slug B5_512 --kaggle-user a --kernel-dir {tmp}/k"),
        "--slug 'a/B5_512': not OWNER/SLUG",
    ),
    Row(
        "kernel --blend: not a blend.json",
        lambda tmp, given: words(
            f"kernel --blend {user_files(tmp, 'b/blend.json')}/b/blend.json --kaggle-user a"
        ),
        "blend.json: not a blend.json that `blend` wrote (",
    ),
    Row(
        "kernel --blend: a stack.json whose run came from no notebook",
        lambda tmp, given: words(
            f"kernel --blend {stacked_json(given, tmp)} --kaggle-user a --kernel-dir {tmp}/k"
        ),
        "came from no Kaggle notebook (no kaggle-notebook.json in it), so the stack's notebook "
        "cannot attach it",
    ),
]


def correcting(given: Given, tmp: Path, *files: tuple[str, str]) -> list[str]:
    """`train` of the blendable competition with label corrections: (flag, the CSV's text)."""
    flags = []
    for number, (flag, text) in enumerate(files):
        (tmp / f"corrections{number}.csv").write_text(text)
        flags += [flag, str(tmp / f"corrections{number}.csv")]
    return [
        *words(
            f"train --data-dir {given.blendable.data} --folds 2 --image-size 32 --backbone "
            f"small-cnn --weights none --output-dir {tmp}/out"
        ),
        *flags,
    ]


def with_sizes(given: Given, tmp: Path) -> Path:
    """A copy of the blendable competition with a size beside each training image, and a
    test table (test.csv) with the first test image's alone."""
    data = copy_of(given.blendable.data, tmp, "data")
    edit_csv(data / "train.csv", lambda table: table.assign(size=range(len(table))))
    (data / "test.csv").write_text("image_id,size\n5000.jpg,3\n")
    return data


def pseudo_file(tmp: Path, text: str) -> list[str]:
    (tmp / "soft.csv").write_text(text)
    return ["--pseudo-labels", str(tmp / "soft.csv")]


def resumed_after_the_file_changed(given: Given, tmp: Path) -> list[str]:
    """An epoch trained without one image; the same command, the file now naming another."""
    first, second = every_training_id(given).splitlines()[1:3]
    short = ["--epochs", "1", "--steps-per-epoch", "1"]
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main([*correcting(given, tmp, ("--drop-ids", f"id\n{first}\n")), *short]) == 0
    return [*correcting(given, tmp, ("--drop-ids", f"id\n{second}\n")), *short]


def stacking(given: Given, tmp: Path, *runs: Path, output: Path | None = None) -> list[str]:
    """`stack` of these runs on the blendable competition, into tmp/stack."""
    return [
        "stack", *map(str, runs), "--data-dir", str(given.blendable.data),
        "--output-dir", str(output or tmp / "stack"),
    ]  # fmt: skip


def every_training_id(given: Given) -> str:
    return "".join(
        line.split(",")[0] + "\n" for line in (given.blendable.data / "train.csv").open()
    )


# Label corrections train refuses, and runs audit cannot read.
CORRECTIONS = [
    Row(
        "train --fold all with --valid-files none",
        lambda tmp, given: [*correcting(given, tmp), "--fold", "all", "--valid-files", "none"],
        "--fold all scores each fold's model on the images its fold holds out, and "
        "Config.valid_files / --valid-files is empty, so none would be scored",
    ),
    Row(
        "train --drop-ids: an id no image has",
        lambda tmp, given: correcting(given, tmp, ("--drop-ids", "id\n1000.jpg\nnone.jpg\n")),
        "corrections0.csv: 1 ids are no labeled image's (e.g. 'none.jpg'); give the ids as",
    ),
    Row(
        "train --drop-ids: the file edited since the checkpoint it would resume",
        lambda tmp, given: resumed_after_the_file_changed(given, tmp),
        "is of another run (the contents of drop_ids: sha256 ",
    ),
    Row(
        "train --drop-ids: every training image (the whole audit)",
        lambda tmp, given: correcting(given, tmp, ("--drop-ids", every_training_id(given))),
        "training images, more than half: give only the rows to leave out",
    ),
    Row(
        "train --relabel: a label that is no class",
        lambda tmp, given: correcting(given, tmp, ("--relabel", "id,label\n1000.jpg,7\n")),
        "line 2: label '7' of id '1000.jpg' is no class; give a class number below 3",
    ),
    Row(
        "train --relabel: no column of labels",
        lambda tmp, given: correcting(given, tmp, ("--relabel", "id,fold\n1000.jpg,0\n")),
        "no column of labels (it has id, fold); give a CSV of id,label",
    ),
    Row(
        "train --relabel: an id named twice",
        lambda tmp, given: correcting(
            given, tmp, ("--relabel", "id,label\n1000.jpg,1\n1000.jpg,2\n")
        ),
        "id '1000.jpg' is named twice; name each image once",
    ),
    Row(
        "train --drop-ids and --relabel: one image in both",
        lambda tmp, given: correcting(
            given, tmp, ("--drop-ids", "id\n1007.jpg\n"), ("--relabel", "id,label\n1007.jpg,1\n")
        ),
        "both name 1 ids (e.g. '1007.jpg'): an image is left out or relabeled, not both",
    ),
    Row(
        "train --pseudo-labels: an id no test image has",
        lambda tmp, given: correcting(
            given, tmp, ("--pseudo-labels", "image_id,p0,p1,p2\n5000.jpg,1,0,0\n1000.jpg,1,0,0\n")
        ),
        "1 ids are no test image's (e.g. '1000.jpg'); pseudo-label the test set this run reads",
    ),
    Row(
        "train --pseudo-labels: another competition's classes",
        lambda tmp, given: correcting(
            given, tmp, ("--pseudo-labels", "image_id,p0,p1\n5000.jpg,1,0\n")
        ),
        "2 columns of probabilities beside the ids, and the run has Config.num_classes / "
        "--num-classes 3",
    ),
    Row(
        "train --pseudo-labels: a probability that is none",
        lambda tmp, given: correcting(
            given, tmp, ("--pseudo-labels", "image_id,p0,p1,p2\n5000.jpg,1.5,0,0\n")
        ),
        "a probability outside 0 to 1; give the file `pseudo` wrote",
    ),
    Row(
        "train --pseudo-labels: a test image the test table has no row for, beside metadata",
        lambda tmp, given: [
            *words(
                f"train --data-dir {with_sizes(given, tmp)} --test-csv {tmp}/data/test.csv "
                f"--folds 2 --image-size 32 --backbone small-cnn --weights none --output-dir "
                f"{tmp}/out"
            ),
            *pseudo_file(tmp, "image_id,p0,p1,p2\n5000.jpg,1,0,0\n5003.jpg,0,1,0\n"),
        ],
        "has no row for 1 of the 2 images (such as '5003.jpg'); this run, training on "
        "pseudo-labeled test images, joins size to each image: give each test image's row in "
        "Config.test_csv",
    ),
    Row(
        "pseudo: a run not predicted",
        lambda tmp, given: words(f"pseudo {copy_of(given.trained, tmp, 'run')}"),
        "/run holds no test_probabilities.csv; run `predict --output-dir",
    ),
    Row(
        "pseudo: a confidence of 1 or more",
        lambda tmp, given: words(f"pseudo {given.trained} --min-confidence 1"),
        "pseudo --min-confidence 1.0: must be from 0 (every test image) to below 1",
    ),
    Row(
        "stack: a run that is not --fold all",
        lambda tmp, given: stacking(given, tmp, copy_of(given.trained, tmp, "run")),
        "/run has no oof.csv: a stack is fitted on the out-of-fold predictions of a `--fold all`",
    ),
    Row(
        "stack: runs of other folds",
        lambda tmp, given: stacking(
            given, tmp, given.blendable.runs[0], changed_run(given, tmp, other_fold_seed)
        ),
        "their --fold-seed differs (42, 7: their model.json), so trees fitted on one's "
        "out-of-fold rows would see images the other trained on",
    ),
    Row(
        "stack: into another command's folder (a trained run)",
        lambda tmp, given: stacking(
            given, tmp, given.blendable.runs[0], output=copy_of(given.trained, tmp, "run")
        ),
        "/run holds files stack did not write (checkpoints, curves.png, history.json, ... (",
    ),
    Row(
        "audit: a run that is not --fold all",
        lambda tmp, given: words(f"audit {copy_of(given.trained, tmp, 'run')}"),
        "/run holds no oof.csv: the audit reads the out-of-fold predictions of a `--fold all`",
    ),
]


@pytest.mark.parametrize(
    "row",
    INPUTS + FOLDERS + SUBMISSIONS + COMMAND_LINE + BLENDS + CORRECTIONS,
    ids=lambda row: row.name,
)
def test_a_bad_input_is_one_line_naming_it_and_changes_nothing(row, given, tmp_path, capsys):
    argv = row.make(tmp_path, given)
    if row.kaggle_json is not None:
        (tmp_path / "home" / ".kaggle").mkdir(parents=True)
        (tmp_path / "home" / ".kaggle" / "kaggle.json").write_text(row.kaggle_json)
        (tmp_path / "home" / ".kaggle" / "kaggle.json").chmod(0o600)
    before = files_under(tmp_path)
    if row.kaggle_json is not None:
        command = [*OFFLINE, sys.executable, "-m", "{{ cookiecutter.package }}", *argv]
        env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home")}
        done = subprocess.run(
            command, check=False, cwd=PROJECT, env=env, capture_output=True, text=True
        )
        assert done.returncode == row.code, done.stdout + done.stderr
        out, err = done.stdout, done.stderr
    else:
        assert main(argv) == row.code
        out, err = capsys.readouterr()
    said = err.strip() if row.code == 2 else out + err
    if row.code == 2:  # a refusal: one line, no traceback
        assert len(said.splitlines()) == 1 and "Traceback" not in said, said
    assert row.says in said, said
    assert files_under(tmp_path) == before  # nothing written, changed or deleted


BUCKET = "gs://a-bucket/runs/x"
# The commands that write a folder on this machine (the demo competition, a notebook for the
# kaggle CLI) told to write into a bucket; runs, records and blends are written into buckets
# for real (test_buckets.py).
TO_A_BUCKET = {
    "demo-data": f"demo-data --output-dir {BUCKET}",
    "kernel": f"kernel --kaggle-user alice --kernel-dir {BUCKET}",
}


@pytest.mark.parametrize("command", TO_A_BUCKET.values(), ids=TO_A_BUCKET.keys())
def test_a_bucket_for_a_folder_here_is_refused_in_one_line_and_nothing_is_written_here(
    command, tmp_path, monkeypatch, capsys
):
    """A Path of gs://B/x is gs:/B/x: before, a command told to write into a bucket wrote into
    a local folder named `gs:` and said it had written to the bucket."""
    monkeypatch.chdir(tmp_path)  # where a folder named `gs:` would appear
    assert main(words(command)) == 2
    said = capsys.readouterr().err.strip()
    assert len(said.splitlines()) == 1 and "Traceback" not in said, said
    assert f"{BUCKET}: a bucket: this command writes a folder on this machine" in said, said
    assert not list(tmp_path.iterdir())
