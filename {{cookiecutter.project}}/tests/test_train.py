"""A tiny CPU training pass, then a submission, then the doctor: what a competitor runs."""

import csv
import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from {{ cookiecutter.package }}.config import UserError
from {{ cookiecutter.package }}.predict import predict
from {{ cookiecutter.package }}.train import train

PROJECT = Path(__file__).resolve().parents[1]


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
    with pytest.raises(UserError, match="no feature 'label' \\(--label-key\\)"):
        train(cfg)
    assert not Path(cfg.output_dir).exists()


def test_predict_without_trained_weights_says_what_to_do(demo_cfg):
    with pytest.raises(UserError, match="no trained weights at .*run `train` first"):
        predict(demo_cfg)


def doctor(*flags):
    command = [sys.executable, "-m", "{{ cookiecutter.package }}", "doctor", "--preset", "demo", *flags]
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    return subprocess.run(
        command, check=False, cwd=PROJECT, capture_output=True, text=True, env=env, timeout=120
    )


def test_doctor_reports_replicas_batch_records_and_spec(demo_dir):
    result = doctor("--data-dir", str(demo_dir))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "replicas: 1" in result.stdout
    assert "global batch: 32 (32 per replica x 1)" in result.stdout
    assert "train: 4 files, 1078 records" in result.stdout
    assert "train batch: image uint8 (32, 32, 32, 3), label int32 (32,)" in result.stdout
    assert "problems: none" in result.stdout


def test_doctor_exits_non_zero_naming_what_is_missing(tmp_path):
    result = doctor("--data-dir", str(tmp_path))
    assert result.returncode == 1
    assert "PROBLEM: no files match" in result.stdout and "(--train-files)" in result.stdout
    assert "problems: 3 (above)" in result.stdout
