"""`--data-dir tfds:NAME`: a TensorFlow Datasets set through the same pipeline as records.

A small set built here (TFDS's own builder, prepared offline) has real splits, so the folds can
be checked; `tfds.testing.mock_data` stands in for tf_flowers, which would need a download.
"""

import importlib
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import tensorflow_datasets as tfds
from conftest import OFFLINE, PROJECT

from {{ cookiecutter.package }}.runtime.config import Config
from {{ cookiecutter.package }}.runtime.data import tfds_sets
from {{ cookiecutter.package }}.runtime.errors import UserError
from {{ cookiecutter.package }}.runtime.stages.doctor import doctor
from {{ cookiecutter.package }}.runtime.stages.predict import predict
from {{ cookiecutter.package }}.runtime.stages.run import start
from {{ cookiecutter.package }}.runtime.stages.train import train
from {{ cookiecutter.package }}.tools.kernel import metadata


class TinyShapes(tfds.core.GeneratorBasedBuilder):
    """45 train and 9 test images of 3 classes, as JPEG files of several sizes."""

    VERSION = tfds.core.Version("1.0.0")

    def _info(self):
        return tfds.core.DatasetInfo(
            builder=self,
            features=tfds.features.FeaturesDict(
                {
                    "image": tfds.features.Image(encoding_format="jpeg"),
                    "label": tfds.features.ClassLabel(names=["circle", "square", "star"]),
                }
            ),
            supervised_keys=("image", "label"),
        )

    def _split_generators(self, dl_manager):
        return {"train": self._generate_examples(45, 0), "test": self._generate_examples(9, 1)}

    def _generate_examples(self, count, seed):
        rng = np.random.default_rng(seed)
        for index in range(count):
            size = (int(rng.integers(24, 48)), int(rng.integers(24, 48)), 3)
            yield index, {"image": rng.integers(0, 255, size, dtype=np.uint8), "label": index % 3}


@pytest.fixture
def tiny_shapes(tmp_path, monkeypatch):
    """The set prepared in its own data folder, the way tfds.load finds a downloaded set."""
    monkeypatch.setenv("TFDS_DATA_DIR", str(tmp_path / "tensorflow_datasets"))
    TinyShapes(data_dir=str(tmp_path / "tensorflow_datasets")).download_and_prepare()
    return "tfds:tiny_shapes"


def ids_of(cfg, field):
    """Every id the pipeline serves for the split in `field`, with the configured folds."""
    run = start(cfg, on_accelerator=False)  # its data read: the set's splits filled in
    served = tfds_sets.examples(run.cfg, tfds_sets.name_of(run.places), getattr(run.cfg, field))
    return [key.decode() for key in served.map(lambda ex: ex["id"]).as_numpy_iterator()]


def test_folds_of_a_tfds_set_are_disjoint_and_cover_its_train_split(tiny_shapes):
    """Each record validates in exactly one fold and trains in every other."""
    everything = ids_of(Config(data_dir=tiny_shapes, folds=1), "train_files")
    assert len(everything) == len(set(everything)) == 45
    held_out = []
    for fold in range(4):
        cfg = Config(data_dir=tiny_shapes, folds=4, fold=str(fold))
        valid, training = ids_of(cfg, "valid_files"), ids_of(cfg, "train_files")
        assert not set(valid) & set(training)
        assert sorted(valid + training) == sorted(everything)
        held_out += valid
    assert sorted(held_out) == sorted(everything)


def test_a_tfds_set_trains_in_folds_and_predicts_its_test_split_with_class_names(
    tiny_shapes, tmp_path, capsys
):
    """num_classes, the splits and the class names come from the set; flags still win."""
    cfg = Config(
        data_dir=tiny_shapes, output_dir=str(tmp_path / "out"), folds=3, image_size=32,
        backbone="small-cnn", weights="none", batch_size=8, epochs=1, num_classes=4,
    )  # fmt: skip
    assert doctor(cfg, require="") == []
    printed = capsys.readouterr().out
    assert "TFDS set: tiny_shapes 1.0.0: 3 folds of its train split, fold 0 validates" in printed
    assert "train: 30 examples (TFDS split train[33%:])" in printed
    assert "valid: 15 examples (TFDS split train[0%:33%])" in printed
    assert "test: 9 examples (TFDS split test)" in printed

    history = train(cfg)
    assert f"final_valid_{cfg.metric}" in history
    valid = pd.read_csv(tmp_path / "out" / "fold0" / "valid.csv")
    assert len(valid) == 15 and valid["id"].str.startswith("tiny_shapes-train").all()
    # num_classes given wins over the set's 3; the classes the set names keep their names
    assert valid.filter(regex=r"^p_").columns.tolist() == ["p_circle", "p_square", "p_star", "p_3"]

    submission = pd.read_csv(predict(cfg))
    assert len(submission) == 9 and submission["id"].is_unique
    assert set(submission["label"]) <= {"circle", "square", "star"}


def test_tfds_mock_data_feeds_the_same_decode_augment_and_batch_steps(
    tmp_path, capsys, monkeypatch
):
    """tf_flowers under tfds.testing.mock_data: random PNGs of every size, no download."""
    monkeypatch.setattr(tfds_sets, "unreachable", lambda: "")  # mock_data stands in for it
    cfg = Config(
        data_dir="tfds:tf_flowers", output_dir=str(tmp_path / "out"), folds=1,
        test_files="test", sample_submission="", image_size=32, backbone="small-cnn",
        weights="none", batch_size=4, epochs=1, steps_per_epoch=2,
    )  # fmt: skip
    with tfds.testing.mock_data(num_examples=12):
        train(cfg)
        submission = pd.read_csv(predict(cfg))
    assert "training records: 12" in capsys.readouterr().out
    assert len(submission) == 12
    assert set(submission["label"]) <= {"dandelion", "daisy", "tulips", "sunflowers", "roses"}


def test_a_split_the_set_lacks_is_named_with_the_ones_it_has(tiny_shapes, tmp_path):
    cfg = Config(data_dir=tiny_shapes, folds=1, test_files="testing", output_dir=str(tmp_path))
    with pytest.raises(UserError) as error:
        predict(cfg)
    assert (
        "Config.test_files / --test-files 'testing': the TFDS set tiny_shapes has no split "
        "'testing'; it has test, train"
    ) in str(error.value)


def test_an_unknown_set_and_an_offline_download_say_what_to_do(tmp_path):
    """Run offline: preparing tf_flowers would download it."""
    unknown = Config(data_dir="tfds:tf_flowerz", backbone="small-cnn", weights="none")
    problems = doctor(unknown, require="")
    assert len(problems) == 1, problems  # said once, not again for every split
    assert "TensorFlow Datasets has no set 'tf_flowerz'; pick one of its image" in problems[0]
    result = subprocess.run(
        [*OFFLINE, sys.executable, "-m", "{{ cookiecutter.package }}", "doctor",
         "--data-dir", "tfds:tf_flowers", "--backbone", "small-cnn", "--weights", "none"],
        check=False, cwd=PROJECT, capture_output=True, text=True, timeout=300,
        env={"TFDS_DATA_DIR": str(tmp_path / "empty"), "PATH": "/usr/bin:/bin",
             "HOME": str(tmp_path), "KERAS_BACKEND": "tensorflow"},
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert "could not download and prepare the TFDS set tf_flowers into " in result.stdout
    assert "a Kaggle notebook needs the internet on for this" in result.stdout
    assert "(storage.googleapis.com cannot be reached: " in result.stdout  # at once, no retries


def test_every_package_tfds_prepares_a_set_with_is_installed():
    """TFDS imports some packages only when it prepares a set (importlib_resources among
    them), and its own requirements leave some out: in the environment the README sets up,
    each imports. Its optional backends (Apache Beam, ArrayRecord, Parquet) are left out."""
    from tensorflow_datasets.core import dataset_builder

    optional = ("apache_beam", "array_record", "pyarrow")
    packages = {
        module.module_name
        for module in vars(dataset_builder).values()
        if type(module).__name__ == "LazyModule"
        and not module.module_name.startswith(("tensorflow_datasets", *optional))
    }
    assert "importlib_resources" in packages
    for name in sorted(packages):
        importlib.import_module(name)


def test_a_notebook_on_a_tfds_set_asks_kaggle_for_the_internet_it_downloads_with():
    assert metadata(Config(data_dir="tfds:tf_flowers"), "tpu", "alice", [])["enable_internet"]
    assert not metadata(Config(), "tpu", "alice", [])["enable_internet"]  # competitions: off
