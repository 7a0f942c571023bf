"""Runs in a bucket, through TensorFlow's own gs:// client: the real client, over TLS, talking
to gcp-storage-emulator (fake_gcs.py) in a network namespace of its own, so nothing reaches the
internet. One emulator serves the module's commands in turn, as a TPU VM's user runs them:
records written into the bucket, a run trained on them into the bucket, its submission
predicted there, the run resumed, a folder another run holds, two JAX processes writing one
run, and a bucket that refuses writes. The tests read what each command said and what the
bucket held at the end."""

from __future__ import annotations

import csv
import io
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
from commands import ran

TESTS = Path(__file__).parent
# In a user, network and mount namespace: loopback up, Google's storage hosts on it (and this
# host's own name, by which JAX's processes find each other), the emulator started with the
# folder $FOLDER in bucket `competitions`, then the command; the bucket is left in $TMP/bucket.
IN_A_BUCKET = r"""
set -e
ip link set lo up
printf '127.0.0.1 localhost %s www.googleapis.com storage.googleapis.com\n' "$(hostname)" \
    > "$TMP/hosts"
mount --bind "$TMP/hosts" /etc/hosts
"$PYTHON" "$TESTS/fake_gcs.py" competitions "$TMP/cert.pem" "$TMP/key.pem" "$TMP/ready" \
    "$TMP/bucket" "$FOLDER" > /dev/null 2> "$TMP/requests.log" &
server=$!
for _ in $(seq 300); do [ -e "$TMP/ready" ] && break; sleep 0.1; done
set +e
"$@"
code=$?
kill $server
wait $server  # it writes what the bucket holds into $TMP/bucket as it stops
exit $code
"""

BUCKET = "gs://competitions/demo"
NO_BUCKET = "gs://no-such-bucket"
# The demo's records as `records` writes them: 5 folds, fold 0 validates.
RUN = (
    f"--data-dir {BUCKET}/records --image-size 32 --backbone small-cnn --weights none "
    "--batch-size 32 --steps-per-epoch 2"
)
JOINED = "--coordinator 127.0.0.1:12345 --num-processes 2"
RECORDS = "--images DEMO/images/train --csv DEMO/images/train.csv --test-images DEMO/images/test"
# What each process runs, by name, in one process each as a notebook's cells run
# (tests/commands.py): the commands of one user under TensorFlow, then two JAX processes
# training together, and then both told to write where no bucket is.
ONE_USER = {
    "records": f"records {RECORDS} --output-dir BUCKET/records",
    "train": "train RUN --output-dir BUCKET/runs/a --epochs 1",
    "predict": "predict RUN --output-dir BUCKET/runs/a --sample-submission BUCKET/sample.csv",
    "resumed": "train RUN --output-dir BUCKET/runs/a --epochs 2",
    "held": "train RUN --output-dir BUCKET/held --epochs 1",
    "records-refused": f"records {RECORDS} --output-dir NO_BUCKET/records",
}
TOGETHER = {  # where no bucket is first: JAX's compile cache is set at a process's first run
    "train-refused": "train RUN --output-dir NO_BUCKET/run JOINED",
    "process": "train RUN --output-dir BUCKET/runs/two --epochs 1 JOINED",
}
PROCESSES = r"""
$P ONE_USER > "$TMP/one-user.log" 2>&1
KERAS_BACKEND=jax $P TOGETHER_1 > "$TMP/process-1.log" 2>&1 &
KERAS_BACKEND=jax $P TOGETHER_0 > "$TMP/process-0.log" 2>&1
wait
"""


def command_lines(commands: dict[str, str], demo_dir: Path, more: str = "") -> str:
    words = " ".join(shlex.quote(f"{line} {more}".strip()) for line in commands.values())
    for name, value in (("NO_BUCKET", NO_BUCKET), ("BUCKET", BUCKET), ("RUN", RUN),
                        ("JOINED", JOINED), ("DEMO", str(demo_dir))):  # fmt: skip
        words = words.replace(name, value)
    return words


@pytest.fixture(scope="module")
def in_a_bucket(demo_dir, tmp_path_factory):
    """What each command said, its code, and the bucket's objects at the end (by name); the
    folder the commands ran in; the sample."""
    tmp = tmp_path_factory.mktemp("bucket")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=www.googleapis.com", "-addext",
         "subjectAltName=DNS:www.googleapis.com,DNS:storage.googleapis.com",
         "-keyout", str(tmp / "key.pem"), "-out", str(tmp / "cert.pem")],
        check=True, capture_output=True,
    )  # fmt: skip
    there = tmp / "demo"  # in the bucket before the commands: the sample, and two locks
    there.mkdir()
    (there / "sample.csv").write_bytes((demo_dir / "sample_submission.csv").read_bytes())
    lock = {"run": "process 7 on tpu-vm-1: train", "token": "theirs", "beat": time.time()}
    (there / "held").mkdir()
    (there / "held" / ".run.lock").write_text(json.dumps(lock))  # a run writing now
    (there / "runs" / "a").mkdir(parents=True)
    dead = {"run": "process 9 on a-deleted-vm: train", "token": "gone", "beat": 0}
    (there / "runs" / "a" / ".run.lock").write_text(json.dumps(dead))  # one long stopped
    here = tmp / "here"  # where the commands run: nothing may appear in it
    here.mkdir()
    (tmp / "said").mkdir()
    commands = PROCESSES.replace("ONE_USER", command_lines(ONE_USER, demo_dir))
    for i in range(2):
        lines = command_lines(TOGETHER, demo_dir, f"--process-id {i}")
        commands = commands.replace(f"TOGETHER_{i}", lines)
    env = {
        **os.environ, "TMP": str(tmp), "PYTHON": sys.executable, "TESTS": str(TESTS),
        "FOLDER": str(there), "CURL_CA_BUNDLE": str(tmp / "cert.pem"),
        "P": f"{shlex.quote(sys.executable)} -m tests.commands --keep-going",
        "PYTHONPATH": str(TESTS.parent),
        # No credentials to look for; one quick retry, not ten with backoff.
        "GOOGLE_AUTH_TOKEN_FOR_TESTING": "test", "GCS_RETRY_CONFIG_MAX_RETRIES": "1",
        "GCS_RETRY_CONFIG_INIT_DELAY_TIME_US": "1000",
        "GCS_RETRY_CONFIG_MAX_DELAY_TIME_US": "10000",
    }  # fmt: skip
    done = subprocess.run(
        ["unshare", "-rnm", "sh", "-c", IN_A_BUCKET, "sh", "sh", "-c", commands],
        env=env, cwd=here, capture_output=True, text=True, timeout=420, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    said = dict(zip(ONE_USER, ran((tmp / "one-user.log").read_text()), strict=True))
    for i in range(2):
        ran_there = ran((tmp / f"process-{i}.log").read_text())
        said |= {f"{name}-{i}": each for name, each in zip(TOGETHER, ran_there, strict=True)}
    bucket = tmp / "bucket" / "demo"
    held = {str(p.relative_to(bucket)) for p in bucket.rglob("*") if p.is_file()}
    return said, bucket, held, here


def ids(text: str) -> list[str]:
    return [row[0] for row in csv.reader(io.StringIO(text))]


def test_records_written_to_a_bucket_train_and_predict_there_and_nothing_is_written_here(
    in_a_bucket, demo_dir
):
    """Before, every file of a run told to write into gs://B/x went to a local folder named
    `gs:` (a Path of the URL), and `train --data-dir` on records written so found none."""
    said, bucket, held, here = in_a_bucket
    for name in ("records", "train", "predict"):
        assert said[name][0] == 0, said[name][1][-3000:]
    assert "records/manifest.json" in held and "records/records-progress.json" not in held
    assert any(name.startswith("records/train/fold0-") for name in held)
    assert any(name.startswith("records/test/") for name in held)
    run = ("model.weights.h5", "model.json", "valid.csv", "checkpoints/checkpoint.json",
           "checkpoints/checkpoint.weights.h5")  # fmt: skip
    assert {f"runs/a/fold0/{name}" for name in run} <= held
    assert f"weights: {BUCKET}/runs/a/fold0/model.weights.h5" in said["train"][1]
    sample = (demo_dir / "sample_submission.csv").read_text()  # read from the bucket's copy
    assert ids((bucket / "runs" / "a" / "submission.csv").read_text()) == ids(sample)
    assert not list(here.iterdir())


def test_a_lock_left_in_a_bucket_by_a_run_that_stopped_is_taken_over_and_let_go(in_a_bucket):
    """A bucket has no lock that dies with its process: a run renews its lock object, and one
    not renewed for minutes (a preempted VM's) is taken over, saying whose it was."""
    said, _, held, _ = in_a_bucket
    taken = f"--output-dir {BUCKET}/runs/a: taking over the lock of a run that stopped (process 9"
    assert taken in said["train"][1]
    assert not any(name.endswith(".run.lock") for name in held if name.startswith("runs/a"))


def test_a_run_in_a_bucket_resumes_from_the_checkpoint_there(in_a_bucket):
    """A TPU VM is deleted with its disk: the checkpoint resumed from is the bucket's."""
    said, bucket, _, _ = in_a_bucket
    code, text = said["resumed"]
    assert code == 0, text[-3000:]
    assert f"resume: after epoch 1 from {BUCKET}/runs/a/fold0/checkpoints" in text
    state = json.loads((bucket / "runs/a/fold0/checkpoints/checkpoint.json").read_text())
    assert state["epoch"] == 2 and len(state["history"]["loss"]) == 2


def test_a_folder_in_a_bucket_another_run_holds_is_refused_in_one_line(in_a_bucket):
    said, _, held, _ = in_a_bucket
    code, text = said["held"]
    assert code == 2, text[-3000:]
    error = text.strip().splitlines()[-1]
    assert error.startswith(
        f"error: Config.output_dir / --output-dir {BUCKET}/held is in use by "
        "another run (process 7 on tpu-vm-1: train)"
    ), error
    assert {name for name in held if name.startswith("held/")} == {"held/.run.lock"}


def test_two_jax_processes_leave_one_complete_run_in_the_bucket(in_a_bucket):
    """Process 0 writes each file, into the bucket every host of a pod slice shares; the
    other saves nothing, and JAX's compiled programs are kept there too."""
    said, bucket, held, _ = in_a_bucket
    for i in range(2):
        code, text = said[f"process-{i}"]
        assert code == 0, text[-3000:]
        assert "processes: 2" in text
    assert f"weights: {BUCKET}/runs/two/fold0/model.weights.h5" in said["process-0"][1]
    assert "weights: " not in said["process-1"][1]
    run = ("model.weights.h5", "model.json", "history.json", "checkpoints/checkpoint.json",
           "checkpoints/checkpoint.weights.h5")  # fmt: skip
    assert {f"runs/two/fold0/{name}" for name in run} <= held
    assert (
        json.loads((bucket / "runs/two/fold0/checkpoints/checkpoint.json").read_text())["epoch"]
        == 1
    )
    assert any(name.startswith("runs/two/jax-cache/") for name in held)
    assert not any(name.endswith(".run.lock") for name in held if name.startswith("runs/two"))


@pytest.mark.parametrize("command", ["train-refused-0", "records-refused"])
def test_a_bucket_that_cannot_be_written_stops_before_any_work_in_one_line(command, in_a_bucket):
    """No such bucket (or no permission): one line naming it and what to check, before the
    first shard or step. train runs under JAX, whose compile cache in that bucket once made
    TensorFlow's gs:// client ask for the missing bucket for ever."""
    said, _, _, here = in_a_bucket
    code, text = said[command]
    assert code == 2, text[-3000:]
    errors = [line for line in text.splitlines() if "error" in line]
    assert len(errors) == 1 and "Traceback" not in text, text[-3000:]
    assert f"{NO_BUCKET}/" in errors[0] and "the bucket refuses a write (" in errors[0]
    assert "check the bucket's name, and that these credentials may write to it" in errors[0]
    assert "shard" not in text and "loss" not in text  # nothing written, nothing trained
    assert not list(here.iterdir())
