"""`predict --test-images DIR` predicts the image files of a folder, nested folders and PNGs
among them, for a sample that spells their ids its own way; a folder that does not match
the sample, or an image that does not decode, is one line, and nothing is written.

One small model is trained once for the module, on a Cassava-shaped competition; each test
predicts with it into a folder of its own, through the command line."""

import numpy as np
import pandas as pd
import pytest
from builders import competition, image, write_csv

from {{ cookiecutter.package }}.__main__ import main
from {{ cookiecutter.package }}.runtime.config import Config
from {{ cookiecutter.package }}.runtime.stages.train import train

AS_TRAINED = ["--backbone", "small-cnn", "--weights", "none", "--image-size", "32"]
BEFORE = b"image_id,label\nt0.jpg,1\n"  # a submission an earlier predict wrote


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A competition (train_images/, train.csv) and a run trained on it for two steps."""
    data = tmp_path_factory.mktemp("competition")
    labels = [label for label in "012" for _ in range(8)]
    competition(data, labels, ["image_id", "label"], ["image_id", "label"])
    run = tmp_path_factory.mktemp("trained")
    train(
        Config(
            data_dir=str(data), output_dir=str(run), folds=1, epochs=1, steps_per_epoch=2,
            batch_size=8, backbone="small-cnn", weights="none", image_size=32,
        )
    )  # fmt: skip
    return data, run


def write_images(folder, files: dict[str, str]) -> None:
    """`files`: path under the folder to the class its picture shows (a .png is a PNG)."""
    rng = np.random.default_rng(1)
    for name, label in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        image(folder / name, [label], rng)


def predicting(trained, folder, sample, output) -> list[str]:
    """`predict` with the trained run, as it was trained, on the images in `folder`."""
    data, run = trained
    return [
        "predict", *AS_TRAINED, "--data-dir", str(data), "--trained-dir", str(run),
        "--test-images", str(folder), "--sample-submission", str(sample), "--output-dir",
        str(output),
    ]  # fmt: skip


def previous_submission(output):
    output.mkdir()
    (output / "submission.csv").write_bytes(BEFORE)


def files_in(folder) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize(
    "spelt",
    [
        pytest.param(["y", "t0", "x", "t1"], id="without-extensions"),
        pytest.param(["y.jpg", "t0.jpg", "x.jpg", "t1.png"], id="file-names"),
        pytest.param(["a/b/y.jpg", "t0.jpg", "a/x.jpg", "t1.png"], id="paths-under-the-folder"),
    ],
)
def test_each_image_of_nested_folders_gets_the_row_of_its_id_as_the_sample_spells_it(
    trained, tmp_path, capsys, spelt
):
    """t0.jpg, a PNG among the JPEGs, a/x.jpg (t0.jpg's very bytes) and a/b/y.jpg, in a
    sample that lists them in an order of its own: x's row is t0's, y's another."""
    folder = tmp_path / "test"
    write_images(folder, {"t0.jpg": "0", "t1.png": "1", "a/b/y.jpg": "2"})
    (folder / "a" / "x.jpg").write_bytes((folder / "t0.jpg").read_bytes())
    classes = ["0", "1", "2"]  # a probability per class: each row shows which image it had
    write_csv(tmp_path / "sample.csv", ["image_id", *classes], [(i, 0, 0, 0) for i in spelt])
    output = tmp_path / "output"
    assert main(predicting(trained, folder, tmp_path / "sample.csv", output)) == 0
    said = capsys.readouterr()
    assert f"predicting 4 images ({folder}) with 1 trained models" in said.out, said.err
    written = pd.read_csv(output / "submission.csv", dtype={"image_id": str})
    assert written["image_id"].tolist() == spelt
    y, t0, x, t1 = written[classes].to_numpy()
    assert np.allclose(x, t0) and not np.allclose(y, t0) and not np.allclose(t1, t0)
    assert np.allclose(written[classes].sum(axis=1), 1, atol=1e-4)


def test_images_the_sample_lacks_and_ids_without_an_image_are_refused_in_one_line(
    trained, tmp_path, capsys, no_model
):
    """Before the model: a submission would miss the sample's ids, or hold rows it rejects."""
    folder = tmp_path / "test"
    write_images(folder, {"t0.jpg": "0", "t1.jpg": "1", "new/extra.jpg": "2"})
    write_csv(tmp_path / "sample.csv", ["image_id", "label"], [("t0", 0), ("t1", 0), ("gone", 0)])
    output = tmp_path / "output"
    previous_submission(output)
    assert main(predicting(trained, folder, tmp_path / "sample.csv", output)) == 2
    assert capsys.readouterr().err == (
        "error: test images and sample submission disagree: 1 sample ids have no test image "
        "(e.g. ['gone']), 1 test ids are not in the sample (e.g. ['new/extra.jpg']); check "
        "Config.test_images / --test-images and Config.sample_submission / "
        f"--sample-submission ({tmp_path / 'sample.csv'})\n"
    )
    assert files_in(output) == {"submission.csv": BEFORE}


def test_a_test_file_that_is_no_image_is_refused_in_one_line_before_the_model(
    trained, tmp_path, capsys, no_model
):
    """A web page saved as .jpg: its first bytes say it is no image."""
    folder = tmp_path / "test"
    write_images(folder, {"t0.jpg": "0"})
    (folder / "page.jpg").write_text("<html>Too many requests</html>")
    write_csv(tmp_path / "sample.csv", ["image_id", "label"], [("t0.jpg", 0), ("page.jpg", 0)])
    output = tmp_path / "output"
    previous_submission(output)
    assert main(predicting(trained, folder, tmp_path / "sample.csv", output)) == 2
    assert capsys.readouterr().err == (
        "error: 1 of the 2 images of Config.test_images / --test-images cannot be read as "
        f"images: {folder / 'page.jpg'} (not a JPEG, PNG, GIF, BMP or WebP); replace them\n"
    )
    assert files_in(output) == {"submission.csv": BEFORE}


def test_a_test_image_that_does_not_decode_stops_predict_in_one_line_and_writes_nothing(
    trained, tmp_path, capsys
):
    """A JPEG cut short (a download that stopped): only decoding finds it, mid-prediction.
    The command names the file and its id as the sample spells it, with no traceback, and the
    submission before stays as it was."""
    folder = tmp_path / "test"
    write_images(folder, {"t0.jpg": "0", "sub/cut.jpg": "1"})
    cut = folder / "sub" / "cut.jpg"
    cut.write_bytes(cut.read_bytes()[:300])
    write_csv(tmp_path / "sample.csv", ["image_id", "label"], [("t0.jpg", 0), ("cut.jpg", 0)])
    output = tmp_path / "output"
    previous_submission(output)
    assert main(predicting(trained, folder, tmp_path / "sample.csv", output)) == 2
    said = capsys.readouterr()
    assert said.err.strip().splitlines()[-1] == (
        "error: prediction stopped at a test image that does not decode; no submission was "
        f"written (the one before, if any, is kept): {cut}: does not decode as an image (id "
        "cut.jpg); copy it again from the competition's data; a submission needs every id"
    )
    assert "Traceback" not in said.out + said.err
    assert files_in(output) == {"submission.csv": BEFORE}
