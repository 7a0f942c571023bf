"""A competition in a bucket, read through TensorFlow's own gs:// client: the real client,
over TLS, talking to gcp-storage-emulator (fake_gcs.py) in a network namespace of its own, so
nothing reaches the internet."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).parent
# In a user, network and mount namespace: loopback up, Google's storage hosts on it, the
# emulator started with the folder $FOLDER in bucket `competitions`, then the command.
IN_A_BUCKET = r"""
set -e
ip link set lo up
printf '127.0.0.1 localhost www.googleapis.com storage.googleapis.com\n' > "$TMP/hosts"
mount --bind "$TMP/hosts" /etc/hosts
"$PYTHON" "$TESTS/fake_gcs.py" competitions "$TMP/cert.pem" "$TMP/key.pem" "$TMP/ready" \
    "$FOLDER" > /dev/null 2> "$TMP/requests.log" &
server=$!
for _ in $(seq 300); do [ -e "$TMP/ready" ] && break; sleep 0.1; done
set +e
"$@"
code=$?
kill $server  # it holds no pipe of ours, but would outlive the command
exit $code
"""


@pytest.fixture
def in_a_bucket(tmp_path):
    """run(folder, *command): the command, with `folder` in gs://competitions/<its name>;
    returns the finished process and the requests the emulator answered."""
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=www.googleapis.com", "-addext",
         "subjectAltName=DNS:www.googleapis.com,DNS:storage.googleapis.com",
         "-keyout", str(tmp_path / "key.pem"), "-out", str(tmp_path / "cert.pem")],
        check=True, capture_output=True,
    )  # fmt: skip

    def run(folder: Path, *command: str) -> tuple[subprocess.CompletedProcess, str]:
        env = {
            **os.environ, "TMP": str(tmp_path), "PYTHON": sys.executable, "TESTS": str(TESTS),
            "FOLDER": str(folder), "CURL_CA_BUNDLE": str(tmp_path / "cert.pem"),
            # No credentials to look for; one quick retry, not ten with backoff.
            "GOOGLE_AUTH_TOKEN_FOR_TESTING": "test", "GCS_RETRY_CONFIG_MAX_RETRIES": "1",
            "GCS_RETRY_CONFIG_INIT_DELAY_TIME_US": "1000",
            "GCS_RETRY_CONFIG_MAX_DELAY_TIME_US": "10000",
        }  # fmt: skip
        done = subprocess.run(
            ["unshare", "-rnm", "sh", "-c", IN_A_BUCKET, "sh", *command],
            env=env, capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        return done, (tmp_path / "requests.log").read_text()

    return run


def test_train_and_predict_read_a_competitions_records_from_a_bucket(
    demo_dir, tmp_path, in_a_bucket
):
    """`--data-dir gs://...`: the records of every split and the sample submission read from
    the bucket; the run and the submission written here, in the sample's order."""
    demo = tmp_path / "demo"  # its records and sample: the images beside them are not read
    for split in ("train", "val", "test"):
        shutil.copytree(demo_dir / split, demo / split)
    shutil.copy(demo_dir / "sample_submission.csv", demo)
    flags = f"--preset demo --data-dir gs://competitions/demo --output-dir {tmp_path}/run"
    package = f"{sys.executable} -m {{ cookiecutter.package }}"
    both = f"{package} train {flags} --epochs 1 --steps-per-epoch 2 && {package} predict {flags}"
    done, requests = in_a_bucket(demo, "sh", "-c", both)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    read = {line.split()[1].partition("?")[0] for line in requests.splitlines() if " " in line}
    for path in [*demo.rglob("*.tfrec"), demo / "sample_submission.csv"]:
        assert f"/competitions/demo/{path.relative_to(demo)}" in read, path
    with (
        open(demo_dir / "sample_submission.csv") as sample,
        open(tmp_path / "run" / "submission.csv") as written,
    ):
        expected = [row[0] for row in csv.reader(sample)]
        assert [row[0] for row in csv.reader(written)] == expected
