"""Nothing fails after the first epoch that could have been caught before it.

Each family of mistakes a new user makes gets one clear line that names the field or the file
and the fix, from `doctor` and from the command itself, before the model is built, and
nothing already written is lost.
"""

import dataclasses
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from commands import ran
from conftest import OFFLINE, PROJECT, free_port

from {{ cookiecutter.package }}.__main__ import main
from {{ cookiecutter.package }}.runtime import config
from {{ cookiecutter.package }}.runtime.config import Config
from {{ cookiecutter.package }}.runtime.errors import UserError
from {{ cookiecutter.package }}.runtime.outputs import checkpoints
from {{ cookiecutter.package }}.runtime.stages.doctor import doctor
from {{ cookiecutter.package }}.runtime.stages.predict import predict
from {{ cookiecutter.package }}.runtime.stages.run import start
from {{ cookiecutter.package }}.runtime.stages.train import train

PACKAGE = "{{ cookiecutter.package }}"


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def problems_of(cfg):
    return doctor(cfg)


# Config values that pass a type check but cannot work.


@pytest.mark.parametrize(
    "field, value",
    [
        ("learning_rate", math.inf),
        ("learning_rate", math.nan),
        ("warmup_epochs", math.inf),
        ("dropout", math.nan),
        ("crop_area", math.nan),
    ],
)
def test_numbers_that_are_not_finite_are_refused(field, value):
    """An infinite learning rate used to train to NaN weights and exit 0."""
    with pytest.raises(UserError) as caught:
        Config(**{field: value})
    assert str(caught.value) == (f"{config.named(field)} = {value!r}: must be a finite number")


@pytest.mark.parametrize(
    "values, message",
    [
        ({"shuffle_buffer": 0}, "Config.shuffle_buffer / --shuffle-buffer = 0: must be at least 1"),
        ({"seed": -1}, "Config.seed / --seed = -1: must be from 0 to 2**32 - 1"),
        (
            {"epochs": 2, "warmup_epochs": 3.0},
            "--warmup-epochs = 3.0: must be from 0 to Config.epochs / --epochs (2)",
        ),
        ({"learning_rate": 5.0}, "Config.learning_rate / --learning-rate = 5.0: must be above 0"),
        ({"coordinator": "10.0.0.2"}, "--coordinator = '10.0.0.2': must be host:port"),
        ({"coordinator_timeout": 0}, "--coordinator-timeout = 0: must be at least 1 (seconds)"),
        (
            {"competition": "My Competition"},
            "--competition = 'My Competition': must be a Kaggle slug",
        ),
        ({"output_dir": "out "}, "--output-dir = 'out ': starts or ends with a space; remove it"),
        ({"image_key": ""}, "Config.image_key / --image-key = '': must be the name of a feature"),
    ],
)
def test_values_that_cannot_work_are_refused_naming_field_and_flag(values, message):
    with pytest.raises(UserError) as caught:
        Config(**values)
    assert message in str(caught.value)


def test_two_fields_that_name_one_feature_are_refused():
    """The check used to keep one of the two and train on the image as its own label."""
    with pytest.raises(UserError) as caught:
        Config(image_key="image", label_key="image", id_column="label")
    assert str(caught.value) == (
        "Config.label_key / --label-key = 'image' is also Config.image_key / --image-key: "
        "each must name its own feature of the records; "
        "Config.label_column / --label-column = 'label' is also Config.id_column / --id-column: "
        "each must name its own column"
    )


def test_a_value_of_the_wrong_type_from_a_notebook_is_named():
    with pytest.raises(UserError) as caught:
        Config(learning_rate="1e-3", epochs=2.5)
    assert str(caught.value) == (
        "Config.epochs / --epochs = 2.5: must be a whole number; "
        "Config.learning_rate / --learning-rate = '1e-3': must be a number"
    )


def test_a_field_changed_after_the_config_was_made_stops_train_before_the_model(demo_cfg, no_model):
    """In a notebook `cfg.learning_rate = ...` skips the dataclass's own check."""
    demo_cfg.learning_rate = math.inf
    assert problems_of(demo_cfg) == [
        "Config.learning_rate / --learning-rate = inf: must be a finite number"
    ]
    with pytest.raises(UserError, match="learning-rate = inf: must be a finite number"):
        train(demo_cfg)
    assert not Path(demo_cfg.output_dir).exists()


def test_the_command_line_refuses_an_infinite_learning_rate_in_one_line(capsys, tmp_path):
    out = tmp_path / "out"
    assert (
        main(["train", "--preset", "demo", "--learning-rate", "inf", "--output-dir", str(out)]) == 2
    )
    err = capsys.readouterr().err
    assert err == "error: Config.learning_rate / --learning-rate = inf: must be a finite number\n"
    assert not out.exists()


def test_a_loss_gone_to_nan_stops_training_and_keeps_the_last_checkpoint(demo_cfg):
    """The backstop for a learning rate that is finite but still too high."""
    from {{ cookiecutter.package }}.runtime.learning.plan import Plan

    places = start(demo_cfg, on_accelerator=False, read=False).places
    every_epoch = checkpoints.EveryEpoch(demo_cfg, places, Plan(32, 2, "float32", 1), {}, True)
    with pytest.raises(UserError) as caught:
        every_epoch.on_epoch_end(4, {"loss": math.nan, "accuracy": 0.1})
    assert str(caught.value) == (
        "training diverged: the loss is nan after epoch 5; lower Config.learning_rate / "
        "--learning-rate (now 0.003) or check the labels; the checkpoint of epoch 4 in "
        f"{demo_cfg.output_dir}/checkpoints is kept"
    )
    assert not Path(demo_cfg.output_dir).exists()  # the NaN weights were not saved


# The output folder.


def test_an_output_folder_that_is_a_file_stops_train_before_the_model(demo_cfg, no_model):
    Path(demo_cfg.output_dir).write_text("my notes\n")
    message = (
        f"cannot write the output in {demo_cfg.output_dir}/checkpoints: {demo_cfg.output_dir} "
        "is a file, not a folder; set Config.output_dir / --output-dir to a folder this run "
        "can write (in a Kaggle notebook: /kaggle/working)"
    )
    assert problems_of(demo_cfg) == [message]
    with pytest.raises(UserError) as caught:
        train(demo_cfg)
    assert str(caught.value) == message
    assert Path(demo_cfg.output_dir).read_text() == "my notes\n"


def test_a_read_only_output_folder_stops_train_before_the_model(demo_dir, tmp_path):
    """As Kaggle's /kaggle/input is: mounted read-only (a bind mount in a namespace of ours)."""
    folder = tmp_path / "read-only"
    folder.mkdir()
    script = (
        f"mount --bind {folder} {folder} && mount -o remount,bind,ro {folder} {folder} && "
        f"exec {sys.executable} -m {PACKAGE} train --preset demo --data-dir {demo_dir} "
        f"--output-dir {folder}"
    )
    result = subprocess.run(
        ["unshare", "-rm", "sh", "-c", script],
        check=False,
        cwd=PROJECT,
        capture_output=True,
        text=True,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"},
        timeout=300,
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == (
        f"error: cannot write the output in {folder}/checkpoints: {folder} is read-only here; "
        "set Config.output_dir / --output-dir to a folder this run can write (in a Kaggle "
        "notebook: /kaggle/working)"
    )
    assert "Epoch" not in result.stdout and "Traceback" not in result.stderr
    assert list(folder.iterdir()) == []


def test_an_empty_output_dir_writes_into_output_not_the_project_root(
    demo_dir, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KAGGLE_KERNEL_RUN_TYPE", raising=False)
    flags = ["--preset", "demo", "--data-dir", str(demo_dir), "--output-dir", ""]
    flags += ["--epochs", "1", "--steps-per-epoch", "1", "--valid-files", ""]
    assert main(["train", *flags]) == 0
    assert sorted(os.listdir(tmp_path)) == ["output"]
    assert (tmp_path / "output" / "model.weights.h5").is_file()


def doctor_and_train_offline(flags: list[str], env: dict) -> dict[str, tuple[int, str]]:
    """`doctor`, then `train`, with these flags, in one process (as a notebook's cells run them)
    in a network namespace with only loopback: each one's exit code and output (stdout and
    stderr as written, in order)."""
    commands = [shlex.join([command, *flags]) for command in ("doctor", "train")]
    done = subprocess.run(
        [*OFFLINE, sys.executable, "-m", "tests.commands", "--keep-going", *commands],
        check=False,
        cwd=PROJECT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, **env},
        timeout=300,
    )
    results = dict(zip(("doctor", "train"), ran(done.stdout), strict=False))
    assert len(results) == 2, done.stdout[-5000:]
    return results


@pytest.mark.slow
def test_a_bucket_out_of_reach_is_one_line_from_doctor_and_train(tmp_path):
    """No network: doctor and train say the bucket cannot be reached and what to check,
    where TensorFlow says only that an HTTP request failed."""
    flags = ["--data-dir", "gs://kds-competition-bucket", "--output-dir", str(tmp_path)]
    results = doctor_and_train_offline(flags, {"TF_CPP_MIN_LOG_LEVEL": "3"})
    why = "cannot reach gs://kds-competition-bucket from this machine (FailedPreconditionError: "
    what_to_check = "check the network, the Google Cloud credentials"
    code, doctor_said = results["doctor"]
    assert code == 1, doctor_said
    assert f"PROBLEM: {why}" in doctor_said and what_to_check in doctor_said
    assert "ready to train" not in doctor_said
    code, train_said = results["train"]
    assert code == 2, train_said
    last_line = train_said.splitlines()[-1]
    assert last_line.startswith(f"error: {why}") and what_to_check in last_line, last_line
    assert "/kaggle/input" in last_line  # on Kaggle the data is local: no bucket needed
    assert "Traceback" not in doctor_said + train_said


def test_commands_start_quiet_and_a_missing_data_folder_is_one_problem(tmp_path):
    """With no $TF_CPP_MIN_LOG_LEVEL, as on a new machine: a command's first line is its own,
    not TensorFlow's start-up notices; a level the user sets still shows them."""
    quiet = {key: value for key, value in os.environ.items() if key != "TF_CPP_MIN_LOG_LEVEL"}

    def run(*words: str, env=quiet) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", PACKAGE, *words]
        return subprocess.run(
            command, check=False, cwd=PROJECT, capture_output=True, text=True, env=env
        )

    doctor = run("doctor", "--preset", "demo", "--data-dir", str(tmp_path / "nowhere"))
    assert doctor.returncode == 1
    said = (doctor.stderr + doctor.stdout).splitlines()
    assert said[0].startswith("accelerator: "), said[:5]
    missing = f"the data folder {tmp_path / 'nowhere'} does not exist (from --data-dir)"
    assert f"data dir: PROBLEM: {missing}" in doctor.stdout
    assert "no files match" not in doctor.stdout and "problems: 1 (above)" in doctor.stdout
    kernel = run("kernel", "--kaggle-user", "alice", "--output", str(tmp_path / "kernel"))
    assert kernel.returncode == 0, kernel.stderr
    assert (kernel.stderr + kernel.stdout).startswith("kernel: "), kernel.stderr
    verbose = run("doctor", "--preset", "demo", env={**quiet, "TF_CPP_MIN_LOG_LEVEL": "0"})
    assert re.search(r"^I\d{4} ", verbose.stderr, re.MULTILINE), verbose.stderr  # theirs wins


# Weights.


@pytest.mark.slow
def test_imagenet_weights_that_cannot_be_downloaded_stop_doctor_and_train(demo_dir, tmp_path):
    """Offline with an empty kagglehub cache: doctor and train both say what to do, and train
    stops before it builds anything."""
    flags = ["--preset", "demo", "--data-dir", str(demo_dir), "--output-dir", str(tmp_path / "out")]
    flags += ["--backbone", "efficientnet-b0", "--weights", "imagenet"]
    env = {"KAGGLEHUB_CACHE": str(tmp_path / "cache"), "TF_CPP_MIN_LOG_LEVEL": "2"}
    results = doctor_and_train_offline(flags, env)
    why = (
        "could not get the keras-hub preset keras/efficientnet/keras/efficientnet_b0_ra_imagenet/2 "
        "for Config.backbone / --backbone efficientnet-b0 from Kaggle Models (ConnectionError: "
    )
    fix = "on Kaggle, attach the model (`kernel` lists it in model_sources)"
    code, doctor_said = results["doctor"]
    assert code == 1, doctor_said
    assert f"weights: PROBLEM: {why}" in doctor_said
    assert fix in doctor_said and "ready to train" not in doctor_said
    code, train_said = results["train"]
    assert code == 2, train_said
    last_line = train_said.splitlines()[-1]
    assert last_line.startswith(f"error: {why}") and fix in last_line
    assert "elsewhere, run once online (kagglehub keeps it)" in last_line
    assert len(last_line) < 400  # the network's error in a few words, not urllib3's paragraph
    assert "run `doctor`" not in doctor_said  # doctor never advises itself
    assert "Epoch" not in train_said and "Traceback" not in train_said
    said = doctor_said + train_said  # TensorFlow's start-up lines held to the level asked for
    assert not re.search(r"^[IW]\d{4} |absl::InitializeLog", said, re.MULTILINE), said
    assert not (tmp_path / "out").exists()


# Resume.


@pytest.fixture
def trained(demo_cfg, trained_demo):
    """The config of the session's short demo run, and a copy of its output for this test to
    change."""
    shutil.copytree(trained_demo, demo_cfg.output_dir)
    return demo_cfg


@pytest.mark.parametrize("id_column", ["id", "image_id"])
def test_a_sample_with_its_labels_first_is_submitted_in_its_columns_and_order(
    trained, id_column, tmp_path
):
    """A sample whose label column comes first (`label,id`, or `label,image_id`, a name the
    config does not give): predict, through the command, finds the column of test ids and
    writes the sample's columns, its ids in its order."""
    data = trained.data_dir
    rows = (Path(data) / "sample_submission.csv").read_text().splitlines()[1:]
    sample = tmp_path / "sample.csv"
    ids = [row.split(",")[0] for row in rows][::-1]  # another order than the demo's own
    sample.write_text(f"label,{id_column}\n" + "".join(f"0,{key}\n" for key in ids))
    flags = ["--preset", "demo", "--data-dir", data, "--output-dir", trained.output_dir]
    assert main(["predict", *flags, "--sample-submission", str(sample)]) == 0
    written = (Path(trained.output_dir) / "submission.csv").read_text().splitlines()
    assert written[0] == f"label,{id_column}"
    assert [row.split(",")[1] for row in written[1:]] == ids
    assert {row.split(",")[0] for row in written[1:]} <= {str(n) for n in range(10)}


def test_resuming_with_another_image_size_refuses_naming_the_difference(trained, no_model):
    before = snapshot(Path(trained.output_dir))
    bigger = dataclasses.replace(trained, image_size=48, epochs=2)
    where = f"{trained.output_dir}/checkpoints"
    message = (
        f"the checkpoint in {where} is of another run (image_size 32 then, 48 now); continuing "
        "it would train another model or on other data. Start over with --no-resume "
        "(Config.resume / --resume False), or pick another Config.output_dir / --output-dir"
    )
    assert message in problems_of(bigger)
    with pytest.raises(UserError) as caught:
        train(bigger)
    assert str(caught.value) == message
    assert snapshot(Path(trained.output_dir)) == before


def test_resuming_with_another_learning_rate_continues_and_says_what_changed(trained, capsys):
    history = train(dataclasses.replace(trained, epochs=2, learning_rate=1e-3))
    out = capsys.readouterr().out
    assert (
        f"resume: after epoch 1 from {trained.output_dir}/checkpoints (--no-resume starts "
        "over); changed since: epochs 1 then, 2 now, learning_rate 0.003 then, 0.001 now"
    ) in out
    assert "Epoch 2/2" in out and "Epoch 1/2" not in out
    assert len(history["loss"]) == 2


def test_weights_cut_short_by_a_copy_are_named_as_damaged_not_as_another_models(trained):
    """A checkpoint or trained weights whose file was cut short (a copy interrupted) say so,
    naming the file and how to start over, not that the model changed: nothing did."""
    checkpoint = Path(trained.output_dir) / "checkpoints" / "checkpoint.weights.h5"
    checkpoint.write_bytes(checkpoint.read_bytes()[: checkpoint.stat().st_size // 2])
    with pytest.raises(UserError) as caught:
        train(dataclasses.replace(trained, epochs=2))
    said = str(caught.value)
    assert said.startswith(f"{checkpoint} is damaged (") and "does not fit" not in said
    assert "cut short or is not a weights file; start over with Config.resume" in said
    assert "(--no-resume)" in said
    weights = Path(trained.output_dir) / "model.weights.h5"
    weights.write_bytes(weights.read_bytes()[:4096])
    with pytest.raises(
        UserError, match=rf"^{re.escape(str(weights))} is damaged \(.*; train again"
    ):
        predict(trained)


def test_predict_refuses_weights_trained_for_another_model_before_building_it(trained, no_model):
    other = dataclasses.replace(trained, num_classes=12, class_names="")
    with pytest.raises(UserError) as caught:
        predict(other)
    assert str(caught.value) == (
        f"{trained.output_dir}/model.weights.h5 was trained for another model (num_classes 10 "
        "then, 12 now, as model.json records); set Config.num_classes / --num-classes as it "
        "was trained, or train again"
    )
    assert not (Path(trained.output_dir) / "submission.csv").exists()


# Several processes.


def test_a_coordinator_that_never_answers_is_named_within_the_timeout(demo_dir, start_python):
    """JAX used to wait five minutes, then abort with a C++ stack trace naming no address."""
    address = f"127.0.0.1:{free_port()}"
    flags = ["--preset", "demo", "--data-dir", str(demo_dir), "--num-processes", "2"]
    flags += ["--coordinator", address, "--coordinator-timeout", "3"]
    began = time.monotonic()
    alone = start_python("-m", PACKAGE, "doctor", *flags, "--process-id", "0", backend="jax")
    other = f"127.0.0.1:{free_port()}"  # nothing listens here
    lost = start_python(
        "-m", PACKAGE, "train", *flags[:-4], "--coordinator", other, "--coordinator-timeout",
        "3", "--process-id", "1", backend="jax",
    )  # fmt: skip
    errors = {process: process.communicate(timeout=120)[1] for process in (alone, lost)}
    assert time.monotonic() - began < 60
    assert lost.returncode == 2
    assert errors[lost].strip().splitlines()[-1] == (
        "error: process 1 waited 3 s (Config.coordinator_timeout / --coordinator-timeout) "
        f"for the other processes: nothing answers at {other}: start process 0 first with the "
        "same --coordinator, and check the host name, the port and that no firewall is in "
        "between"
    )
    assert alone.returncode == 2
    assert (
        errors[alone]
        .strip()
        .splitlines()[-1]
        .startswith(
            "error: process 0 waited 3 s (Config.coordinator_timeout / --coordinator-timeout) for "
            f"the other processes: process 0 serves {address}, and not all 2 processes joined"
        )
    )
    for err in errors.values():
        assert "Check failure" not in err and "Traceback" not in err


# Files given where folders are wanted, and back again.


@pytest.mark.parametrize("command", ["demo-data", "kernel"])
def test_a_command_told_to_write_into_a_file_refuses_and_keeps_it(command, tmp_path, capsys):
    target = tmp_path / "notes.txt"
    target.write_text("keep me\n")
    flags = ["--preset", "demo", "--kaggle-user", "alice"] if command == "kernel" else []
    flag = "--kernel-dir" if command == "kernel" else "--output-dir"
    assert main([command, *flags, flag, str(target)]) == 2
    assert capsys.readouterr().err == (
        f"error: {command} {flag} {target}: {target} is a file, not a folder; give a "
        "folder to write into\n"
    )
    assert target.read_text() == "keep me\n"


def test_a_solution_that_is_a_folder_is_named(demo_dir, tmp_path, capsys):
    (tmp_path / "submission.csv").write_bytes((demo_dir / "solution.csv").read_bytes())
    flags = ["--preset", "demo", "--data-dir", str(demo_dir), "--output-dir", str(tmp_path)]
    assert main(["score", *flags, "--solution", str(demo_dir)]) == 2
    assert capsys.readouterr().err == f"error: {demo_dir} is a folder; give the CSV file\n"


def test_a_sample_submission_that_is_a_folder_stops_predict_before_the_model(
    trained, tmp_path, no_model
):
    folder = tmp_path / "samples"
    folder.mkdir()
    cfg = dataclasses.replace(trained, sample_submission=str(folder))
    message = (
        f"{folder} (Config.sample_submission / --sample-submission) is a folder; give the "
        "sample submission's CSV file, as the competition's data page lists it (often "
        "sample_submission.csv)"
    )
    assert message in problems_of(cfg)
    with pytest.raises(UserError) as caught:
        predict(cfg)
    assert str(caught.value) == message


def test_a_files_pattern_that_names_a_folder_says_which_files_to_give(demo_cfg, no_model):
    cfg = dataclasses.replace(demo_cfg, train_files="train")
    with pytest.raises(UserError) as caught:
        train(cfg)
    folder = f"{demo_cfg.data_dir}/train"
    assert str(caught.value) == (
        f"'{folder}' (Config.train_files / --train-files) matches only folders ({folder}); "
        f"give a pattern of the files in them, such as '{folder}/*.tfrec'"
    )


def test_several_problems_are_listed_together_and_doctor_shows_the_same(demo_cfg, no_model):
    """One run, every problem: a user on a quota fixes them all before the next try."""
    Path(demo_cfg.output_dir).write_text("")
    cfg = dataclasses.replace(demo_cfg, train_files="nothing/*.tfrec")
    with pytest.raises(UserError) as caught:
        train(cfg)
    listed = str(caught.value).splitlines()
    assert listed[0] == "`train` cannot start; 2 problems (`doctor` shows every check):"
    assert listed[1].startswith(f"- cannot write the output in {demo_cfg.output_dir}/checkp")
    # typed in the notebook: looked for where the user runs, then in the data folder
    assert listed[2].startswith("- no files match 'nothing/*.tfrec' (Config.train_files")
    assert f"{demo_cfg.data_dir}/nothing/*.tfrec" in listed[2]
    assert [f"- {problem}" for problem in problems_of(cfg)] == listed[1:]
