"""A tiny CPU training pass, then a submission, then the doctor: what a competitor runs."""

import contextlib
import csv
import dataclasses
import io
import json
import subprocess
from pathlib import Path

import pytest

from {{ cookiecutter.package }}.__main__ import main
from {{ cookiecutter.package }}.runtime.errors import UserError
from {{ cookiecutter.package }}.runtime.stages.predict import predict
from {{ cookiecutter.package }}.runtime.stages.train import train


def rows(path):
    with open(path, newline="") as file:
        return list(csv.reader(file))


def test_train_then_predict_writes_a_submission_matching_the_sample(demo_cfg, demo_dir):
    history = train(demo_cfg)
    output = Path(demo_cfg.output_dir)
    assert len(history["loss"]) == 1
    assert json.loads((output / "checkpoints" / "checkpoint.json").read_text())["epoch"] == 1
    assert (output / "checkpoints" / "checkpoint.weights.h5").is_file()
    assert json.loads((output / "history.json").read_text())["loss"] == history["loss"]

    submission = rows(predict(demo_cfg))
    sample = rows(demo_dir / "sample_submission.csv")
    assert submission[0] == sample[0]
    assert [row[0] for row in submission] == [row[0] for row in sample]  # row for row
    assert {int(row[1]) for row in submission[1:]} <= set(range(10))


def test_a_wrong_label_key_stops_training_before_anything_is_written(demo_cfg):
    cfg = dataclasses.replace(demo_cfg, label_key="label")
    with pytest.raises(UserError, match="no feature 'label' \\(Config.label_key / --label-key\\)"):
        train(cfg)
    assert not Path(cfg.output_dir).exists()


def test_predict_without_trained_weights_says_what_to_do(demo_cfg):
    with pytest.raises(UserError, match="no trained weights at .*run `train` first"):
        predict(demo_cfg)


@pytest.fixture
def doctor(tmp_path):
    """doctor(FLAGS): `doctor --preset demo FLAGS`, run here as the command line runs it (the
    suite's process has loaded TensorFlow already): its exit code and what it printed. It
    checks this test's own output folder: the preset's output/demo in the project may hold a
    checkpoint of the user's own `make demo`, which doctor rightly calls another run's."""

    def run(*flags) -> subprocess.CompletedProcess:
        command = ["doctor", "--preset", "demo", "--output-dir", str(tmp_path / "output"), *flags]
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(command)
        return subprocess.CompletedProcess(command, code, out.getvalue(), err.getvalue())

    return run


def test_doctor_reports_replicas_batch_records_and_spec(demo_dir, doctor):
    result = doctor("--data-dir", str(demo_dir), "--mixup", "0.2")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "replicas: 1" in result.stdout
    assert "global batch: 32 (32 per replica x 1)" in result.stdout
    assert "train: 4 files, 1078 records" in result.stdout
    assert f"data dir: {demo_dir} (from --data-dir)" in result.stdout  # as the user gave it
    # Where the run reads and writes, in one block: the data folder, then each file found in it
    assert f"places:\n  data_dir: {demo_dir}\n  train_files: {demo_dir}/" in result.stdout
    # With MixUp (off by default) too, uint8 images and class numbers: the model mixes them
    assert "train batch: image uint8 (32, 32, 32, 3), label int32 (32,)" in result.stdout
    assert "problems: none" in result.stdout


def test_doctor_shows_the_steps_per_execution_that_train_will_use(demo_dir, doctor):
    """Never more than an epoch's steps: train runs whole epochs, so doctor says so too."""
    result = doctor(
        "--data-dir", str(demo_dir), "--steps-per-epoch", "3", "--steps-per-execution", "8"
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "steps per epoch: 3\nsteps per execution: 3\n" in result.stdout
    assert "precision: float32 (auto: float32 on the CPU)\n" in result.stdout
    assert "attention: none (small CNN has no attention layers)\n" in result.stdout


def test_doctor_reports_a_global_batch_larger_than_the_training_set(demo_dir, doctor):
    result = doctor("--data-dir", str(demo_dir), "--batch-size", "2048")
    assert result.returncode == 1
    assert "steps per epoch: PROBLEM: 1078 training records make no full global batch" in (
        result.stdout
    )


def test_doctor_require_tpu_stops_a_run_that_would_train_on_the_cpu(demo_dir, doctor):
    result = doctor("--data-dir", str(demo_dir), "--require", "tpu")
    assert result.returncode == 1
    assert "needs a TPU but would use the cpu" in result.stdout


def test_doctor_reports_batches_of_unknown_shape_before_any_training(demo_cfg, monkeypatch):
    """XLA preflight: a pipeline that forgets to resize is caught by doctor and by train."""
    from {{ cookiecutter.package }}.runtime.data import steps
    from {{ cookiecutter.package }}.runtime.stages.doctor import doctor as check

    monkeypatch.setattr(steps, "to_size", lambda image, size: image)
    problems = check(demo_cfg)
    assert any("unknown dimension" in problem for problem in problems)
    with pytest.raises(UserError, match="train_files / --train-files have an unknown dimension"):
        train(demo_cfg)
    assert not Path(demo_cfg.output_dir).exists()


def test_the_training_step_compiles_with_xla_on_one_device(demo_cfg):
    """Static shapes let XLA compile the whole step, as a TPU or a GPU will (Keras compiles
    TensorFlow's step with XLA wherever there is one); MixUp and CutMix too."""
    import dataclasses

    import keras

    from {{ cookiecutter.package }}.runtime.data import pipeline, records
    from {{ cookiecutter.package }}.runtime.learning import backbones, model, recipe
    from {{ cookiecutter.package }}.runtime.stages.run import start

    cfg = dataclasses.replace(demo_cfg, mixup=0.2, cutmix=1.0, mix_probability=1.0)
    run = start(cfg, on_accelerator=False)  # its data read
    files = records.find(run.places.in_data(cfg.train_files), "train_files")
    net = model.build_model(cfg, backbones.load(cfg))
    recipe.compile_model(net, cfg, 1, 2, steps_per_execution=2, jit_compile=True)
    host = pipeline.host_augmentations(cfg)
    batches = pipeline.for_training(run.data, files, cfg, 32, augmentations=host)
    history = net.fit(batches, steps_per_epoch=2, verbose=0)
    assert net.jit_compile is True and history.history["loss"][0] > 0
    assert keras.backend.backend() == "tensorflow"


def test_doctor_exits_non_zero_naming_what_is_missing(tmp_path, doctor):
    result = doctor("--data-dir", str(tmp_path))
    assert result.returncode == 1
    assert "PROBLEM: no files match" in result.stdout
    assert "(Config.train_files / --train-files)" in result.stdout
    assert "problems: 3 (above)" in result.stdout
