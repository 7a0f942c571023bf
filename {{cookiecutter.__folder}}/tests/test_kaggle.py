"""The kaggle commands drive Kaggle's real client against a fake Kaggle on loopback.

Each test runs tests/fake_kaggle.py in a network namespace with only loopback: the real
kaggle package checks our kernel-metadata.json, builds its requests and parses the answers
as it would Kaggle's, and nothing can leave the machine.
"""

import json
import subprocess
import sys

from conftest import OFFLINE, PROJECT
from fake_kaggle import RULES_NOT_ACCEPTED

PACKAGE = "{{ cookiecutter.package }}"
COMPETITION = "{{ cookiecutter.competition }}"
CREDENTIALS = {"username": "alice", "key": "0123456789abcdef"}


def against_fake_kaggle(tmp_path, steps, kaggle_json=CREDENTIALS, errors=None) -> dict:
    scenario = {"home": str(tmp_path / "home"), "kaggle_json": kaggle_json, "steps": steps}
    scenario["errors"] = errors or {}
    (tmp_path / "scenario.json").write_text(json.dumps(scenario))
    command = [*OFFLINE, sys.executable, "-m", "tests.fake_kaggle"]
    command += [str(tmp_path / "scenario.json"), str(tmp_path / "result.json")]
    done = subprocess.run(
        command, check=False, cwd=PROJECT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads((tmp_path / "result.json").read_text())


def calls(result, method):
    return [request for request in result["requests"] if request["path"].endswith(method)]


def test_push_sends_our_notebook_to_a_tpu_v5e8_with_internet_off(tmp_path):
    """The real client accepts kernel-metadata.json and asks Kaggle for what we wrote."""
    kernel = str(tmp_path / "kernel")
    result = against_fake_kaggle(
        tmp_path,
        [
            ["kernel", "--output", kernel],  # the username comes from kaggle.json
            ["kaggle", "push", "--kernel-dir", kernel],
        ],
    )
    made, pushed = result["steps"]
    assert made["code"] == 0, made
    assert pushed["code"] == 0, pushed
    assert "pushed alice/{{ cookiecutter.project }}, version 3" in pushed["out"]
    (request,) = calls(result, "kernels.KernelsApiService/SaveKernel")
    sent = request["json"]
    assert sent["slug"] == "alice/{{ cookiecutter.project }}"
    assert (sent["machineShape"], sent["enableTpu"], sent["enableGpu"]) == ("TpuV5E8", True, False)
    assert sent["enableInternet"] is False and sent["isPrivate"] is True
    assert sent["competitionDataSources"] == [COMPETITION]
    assert (sent["language"], sent["kernelType"]) == ("python", "notebook")
    assert "dockerImage" not in sent
    notebook = json.loads((tmp_path / "kernel" / "{{ cookiecutter.project }}.ipynb").read_text())
    assert [c["source"] for c in json.loads(sent["text"])["cells"]] == [
        "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        for c in notebook["cells"]
    ]


def test_download_unzips_the_competition_into_the_data_folder(tmp_path):
    data = tmp_path / "data"
    result = against_fake_kaggle(tmp_path, [["kaggle", "download", "--data-dir", str(data)]])
    (step,) = result["steps"]
    assert step["code"] == 0, step
    assert calls(result, "DownloadDataFiles")[0]["json"] == {"competitionName": COMPETITION}
    assert (data / "sample_submission.csv").read_text() == "id,label\na1,0\n"
    assert (data / "train" / "00-32x32-1.tfrec").is_file()
    assert sorted(p.name for p in data.iterdir()) == ["sample_submission.csv", "train"]


def test_status_output_and_submit_follow_the_pushed_notebook(tmp_path):
    kernel, output = str(tmp_path / "kernel"), tmp_path / "output"
    flags = ["--kernel-dir", kernel, "--output-dir", str(output)]
    result = against_fake_kaggle(
        tmp_path,
        [
            ["kernel", "--output", kernel, "--kaggle-user", "bob"],
            ["kaggle", "status", *flags],
            ["kaggle", "output", *flags],
            ["kaggle", "submit", *flags, "--message", "first try"],
        ],
    )
    _, status, fetched, submitted = result["steps"]
    assert status["code"] == 0 and "bob/{{ cookiecutter.project }}: COMPLETE" in status["out"]
    assert calls(result, "GetKernelSessionStatus")[0]["json"] == {
        "userName": "bob",
        "kernelSlug": "{{ cookiecutter.project }}",
    }
    assert fetched["code"] == 0, fetched
    assert (output / "submission.csv").read_text() == "id,label\na1,3\n"
    assert "wrote 1 rows" in (output / "{{ cookiecutter.project }}.log").read_text()
    assert submitted["code"] == 0, submitted
    assert f"Successfully submitted to {COMPETITION}" in submitted["out"]
    (upload,) = [r for r in result["requests"] if r["method"] == "PUT"]
    assert upload["bytes"] == "id,label\na1,3\n"
    assert calls(result, "CreateSubmission")[0]["json"]["submissionDescription"] == "first try"


def test_without_credentials_each_command_says_where_they_go(tmp_path):
    kernel = str(tmp_path / "kernel")
    actions = ["download", "push", "status", "output", "submit"]
    result = against_fake_kaggle(
        tmp_path,
        [["kernel", "--output", kernel]]
        + [["kaggle", action, "--kernel-dir", kernel] for action in actions],
        kaggle_json=None,
    )
    made, *tried = result["steps"]
    assert made["code"] == 2
    assert "no Kaggle username for the kernel's id: pass --kaggle-user NAME" in made["err"]
    for step in tried:
        assert step["code"] == 2, step
        assert step["err"].startswith("error: no Kaggle credentials found: on kaggle.com open ")
        assert (
            "~/.kaggle/kaggle.json (chmod 600), or set KAGGLE_USERNAME and KAGGLE_KEY"
            in (step["err"])
        )
    assert result["requests"] == []  # refused before anything was sent


def test_rules_not_accepted_names_the_page_that_accepts_them(tmp_path):
    data, output = tmp_path / "data", tmp_path / "output"
    output.mkdir()
    (output / "submission.csv").write_text("id,label\na1,3\n")
    rules = [403, RULES_NOT_ACCEPTED]
    result = against_fake_kaggle(
        tmp_path,
        [
            ["kaggle", "download", "--data-dir", str(data)],
            ["kaggle", "submit", "--output-dir", str(output)],
        ],
        errors={"DownloadDataFiles": rules, "StartSubmissionUpload": rules},
    )
    for step in result["steps"]:
        assert step["code"] == 2, step
        assert "You must accept this competition's rules" in step["err"]
        assert f"https://www.kaggle.com/competitions/{COMPETITION}/rules" in step["err"]
    assert not data.exists() or list(data.iterdir()) == []  # no half download left behind
    assert calls(result, "CreateSubmission") == []
