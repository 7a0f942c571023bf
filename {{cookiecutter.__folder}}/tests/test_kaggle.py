"""The kaggle commands drive Kaggle's real client against a fake Kaggle on loopback.

Each test runs tests/fake_kaggle.py in a network namespace with only loopback: the real
kaggle package checks our kernel-metadata.json, builds its requests and parses the answers
as it would Kaggle's, and nothing can leave the machine.
"""

import hashlib
import inspect
import json
import re
import subprocess
import sys

import pytest
import requests
from conftest import OFFLINE, PROJECT
from fake_kaggle import RULES_NOT_ACCEPTED

from {{ cookiecutter.package }}.runtime.backbone_choices import BACKBONES
from {{ cookiecutter.package }}.runtime.config import Config
from {{ cookiecutter.package }}.runtime.errors import UserError, briefly
from {{ cookiecutter.package }}.runtime.platform import versions
from {{ cookiecutter.package }}.runtime.stages.run import start
from {{ cookiecutter.package }}.tools.kaggle_api import (
    CREDENTIALS_HELP,
    RAISES_ON_A_FAILED_UPLOAD,
    check_key_file,
    client_version,
    kaggle_client_class,
)

PACKAGE = "{{ cookiecutter.package }}"
COMPETITION = "{{ cookiecutter.competition }}"
CREDENTIALS = {"username": "alice", "key": "0123456789abcdef"}
INFERENCE = "alice/{{ cookiecutter.project }}-inference"  # `kernel --inference`'s notebook
CLIENT = versions.of("kaggle")  # "kaggle 2.2.5": named where the client's behaviour is asserted


def against_fake_kaggle(
    tmp_path,
    steps,
    kaggle_json=CREDENTIALS,
    errors=None,
    datasets=(),
    kernels=None,
    submissions=(),
    **signed_in,
) -> dict:
    """Run the steps in tmp_path against the fake Kaggle, which knows the given `kernels`
    (owner/slug: latest version and run) and `submissions`; `signed_in` may give `token` (an
    API token), `login` (what `kaggle auth login` saves) or `offline` (no Kaggle at all), and
    the scenario's `image` and `env` (tests/fake_kaggle.py)."""
    scenario = {"home": str(tmp_path / "home"), "kaggle_json": kaggle_json, "steps": steps}
    scenario["errors"], scenario["datasets"] = errors or {}, list(datasets)
    scenario["kernels"], scenario["submissions"] = kernels or {}, list(submissions)
    scenario["cwd"] = str(tmp_path)
    scenario |= signed_in
    tmp_path.mkdir(exist_ok=True)
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
    # The backbone's keras-hub preset, attached from Kaggle Models: it loads with internet off.
    handle = BACKBONES[Config().backbone].handle
    assert sent.get("modelDataSources", []) == ([handle] if handle else [])
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
            ["kaggle", "submit", "--output-dir", str(output), "--message", "first try"],
        ],
    )
    _, status, fetched, submitted = result["steps"]
    assert status["code"] == 0, status
    assert "bob/{{ cookiecutter.project }}: COMPLETE (version 3)" in status["out"]
    kernel = {"userName": "bob", "kernelSlug": "{{ cookiecutter.project }}"}
    assert calls(result, "GetKernelSessionStatus")[0]["json"] == kernel
    assert calls(result, "GetKernel")[0]["json"] == kernel
    assert fetched["code"] == 0, fetched
    assert (output / "submission.csv").read_text() == "id,label\na1,3\n"
    assert "wrote 1 rows" in (output / "{{ cookiecutter.project }}.log").read_text()
    fetched_from = json.loads((output / "kaggle-notebook.json").read_text())  # what blend notes
    assert fetched_from == {"id": "bob/{{ cookiecutter.project }}"}
    assert submitted["code"] == 0, submitted
    assert f"Successfully submitted to {COMPETITION}" in submitted["out"]
    (upload,) = [r for r in result["requests"] if r["method"] == "PUT"]
    assert upload["text"] == "id,label\na1,3\n"
    assert "(no kernel-inference/kernel-metadata.json here, so no" in submitted["out"]
    (sent,) = calls(result, "CreateSubmission")
    assert sent["json"]["submissionDescription"] == "first try; cv: none"  # no valid.csv


def inference_notebook(folder, kernel=INFERENCE):
    """What `kernel --inference` writes, as far as `kaggle` reads it: the notebook's id."""
    folder.mkdir(parents=True)
    (folder / "kernel-metadata.json").write_text(json.dumps({"id": kernel}))


def validated_run(folder, metric, table="valid.csv", record_in="."):
    """What `train` leaves of a run that validated 4 images of 3 classes and got 3 right:
    its predictions (`table`), and in model.json the metric and classes it scored them with."""
    (folder / record_in).mkdir(parents=True, exist_ok=True)
    rows = ["0,0,.8,.1,.1", "1,1,.1,.8,.1", "2,2,.1,.1,.8", "2,1,.1,.5,.4"]
    lines = [f"{name},0,{row}" for name, row in zip("abcd", rows, strict=True)]
    (folder / table).write_text("\n".join(["id,fold,label,predicted,p0,p1,p2", *lines, ""]))
    recorded = {"metric": metric, "num_classes": 3, "multi_label": False}
    (folder / record_in / "model.json").write_text(json.dumps(recorded))


def test_submit_sends_the_inference_notebooks_latest_complete_version(tmp_path):
    """A code competition: with kernel-inference/ here, submit asks Kaggle to rerun that
    notebook's latest version, whose run is complete, and uploads no file; the CV of the
    output folder's run, scored as its model.json says, ends the description."""
    inference_notebook(tmp_path / "kernel-inference")
    output = tmp_path / "output"
    validated_run(output, "accuracy")
    (output / "submission.csv").write_text("id,label\na1,3\n")  # Kaggle's rerun writes its own
    result = against_fake_kaggle(
        tmp_path,
        [
            ["kaggle", "submit", "--output-dir", str(output), "--message", "b0 at 512px"],
            ["kaggle", "status", "--kernel-dir", "kernel-inference"],
        ],
        kernels={INFERENCE: {"version": 7, "status": "COMPLETE"}},
    )
    submitted, status = result["steps"]
    assert submitted["code"] == 0, submitted
    (sent,) = calls(result, "CreateCodeSubmission")
    assert sent["json"] == {
        "competitionName": COMPETITION,
        "kernelOwner": "alice",
        "kernelSlug": "{{ cookiecutter.project }}-inference",
        "kernelVersion": 7,
        "fileName": "submission.csv",
        "submissionDescription": "b0 at 512px; cv accuracy 0.7500",
    }
    assert "(kernel-inference/ is here; --kernel-dir chooses another)" in submitted["out"]
    assert not calls(result, "StartSubmissionUpload")
    assert not [request for request in result["requests"] if request["method"] == "PUT"]
    assert (status["code"], status["out"]) == (0, f"{INFERENCE}: COMPLETE (version 7)\n")


def test_a_notebook_whose_latest_run_is_not_complete_is_not_submitted(tmp_path):
    """Still running: wait for it; failed: read its log, fix it, push it. One line each."""
    inference_notebook(tmp_path / "kernel-inference")
    failed = f"{INFERENCE}-b3"
    inference_notebook(tmp_path / "b3", failed)
    result = against_fake_kaggle(
        tmp_path,
        [
            ["kaggle", "submit"],
            ["kaggle", "submit", "--kernel-dir", str(tmp_path / "b3")],
            ["kaggle", "status", "--kernel-dir", "kernel-inference"],
        ],
        kernels={
            INFERENCE: {"version": 8, "status": "RUNNING"},
            failed: {"version": 2, "status": "ERROR", "failureMessage": "Notebook Threw Exception"},
        },
    )
    running, errored, status = result["steps"]
    for step in (running, errored):
        assert step["code"] == 2 and step["err"].count("\n") == 1, step
    assert running["err"].startswith(
        f"error: {INFERENCE}'s latest run (version 8) is RUNNING: a code submission needs a "
        f"version whose run is COMPLETE; wait until `python -m {PACKAGE} kaggle status "
        "--kernel-dir kernel-inference` says COMPLETE, then submit"
    ), running
    assert "(version 2) is ERROR: Notebook Threw Exception: " in errored["err"]
    assert f"`kaggle push --kernel-dir {tmp_path / 'b3'}`" in errored["err"]
    assert (status["code"], status["out"]) == (0, f"{INFERENCE}: RUNNING (version 8)\n")
    assert not calls(result, "CreateCodeSubmission") and not calls(result, "CreateSubmission")


def test_submissions_show_kaggles_scores_beside_the_cv_each_was_sent_with(tmp_path):
    """`submit` writes the run's CV (here out-of-fold, a `--fold all` run) into the
    description; `submissions` reads it back beside the public and private scores."""
    output = tmp_path / "output"
    validated_run(output, "macro_f1", table="oof.csv", record_in="fold0")
    (output / "submission.csv").write_text("id,label\na1,3\n")
    earlier = [
        {"ref": 11, "date": "2026-11-20T10:31:00.000Z", "description": "b0; cv macro_f1 0.8123",
         "status": "COMPLETE", "publicScore": "0.80120", "privateScore": "0.79900"},
        {"ref": 10, "date": "2026-11-19T08:00:00.000Z", "description": "from the website",
         "status": "ERROR", "errorDescription": "Submission CSV Not Found"},
    ]  # fmt: skip
    result = against_fake_kaggle(
        tmp_path,
        [
            ["kaggle", "submit", "--output-dir", str(output), "--message", "b0 5 folds"],
            ["kaggle", "submissions"],
        ],
        submissions=earlier,
    )
    submitted, listed = result["steps"]
    assert (submitted["code"], listed["code"]) == (0, 0), result["steps"]
    rows = [re.split(r"  +", line) for line in listed["out"].splitlines()]
    header, new, scored, website = rows
    assert header == ["date", "status", "public", "private", "cv", "description"]
    assert new[1:] == ["PENDING", "-", "-", "macro_f1 0.7778", "b0 5 folds; cv macro_f1 0.7778"]
    assert scored == ["2026-11-20 10:31", "COMPLETE", "0.80120", "0.79900", "macro_f1 0.8123",
                      "b0; cv macro_f1 0.8123"]  # fmt: skip
    assert website == ["2026-11-19 08:00", "ERROR", "-", "-", "-",
                       "from the website [Submission CSV Not Found]"]  # fmt: skip
    assert calls(result, "ListSubmissions")[0]["json"]["competitionName"] == COMPETITION


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
        assert step["err"] == f"error: no Kaggle credentials found: {CREDENTIALS_HELP}\n"
    for way in ("kaggle auth login", "KAGGLE_API_TOKEN", "~/.kaggle/access_token", "kaggle.json"):
        assert way in CREDENTIALS_HELP  # every way the client signs in today
    assert result["requests"] == []  # refused before anything was sent


def test_an_api_token_or_kaggle_auth_login_names_the_kernels_owner(tmp_path):
    """kaggle 2.x signs in with a bare token (Kaggle says whose it is) or with the file
    `kaggle auth login` writes (which names its user)."""

    def owner(kernel):
        return json.loads((kernel / "kernel-metadata.json").read_text())["id"].split("/")[0]

    first, second = tmp_path / "k1", tmp_path / "k2"
    by_token = against_fake_kaggle(
        tmp_path / "token",
        [["kernel", "--output", str(first)], ["kaggle", "status", "--kernel-dir", str(first)]],
        kaggle_json=None,
        token="a-token",
    )
    made, status = by_token["steps"]
    assert (made["code"], status["code"]) == (0, 0), by_token["steps"]
    assert owner(first) == "alice"
    assert calls(by_token, "IntrospectToken")[0]["json"]["token"] == "a-token"
    by_login = against_fake_kaggle(
        tmp_path / "login",
        [["kernel", "--output", str(second)]],
        kaggle_json=None,
        login={"refresh_token": "r", "access_token": "a", "username": "bob", "scopes": []},
    )
    assert by_login["steps"][0]["code"] == 0, by_login["steps"]
    assert owner(second) == "bob"
    assert not calls(by_login, "IntrospectToken")  # the login file names its user


def test_with_no_network_each_action_ends_in_one_line_and_leaves_nothing(tmp_path):
    """No Kaggle to reach: each action, and `kernel` with only a token, says so in one line."""
    data, output, kernel = tmp_path / "data", tmp_path / "output", str(tmp_path / "kernel")
    for folder, name in ((data, "train.csv"), (output, "submission.csv")):
        folder.mkdir()
        (folder / name).write_text("kept\n")
    actions = [["download", "--data-dir", str(data)], ["push"], ["status"]]
    actions += [[action, "--output-dir", str(output)] for action in ("output", "submit")]
    result = against_fake_kaggle(
        tmp_path,
        [["kernel", "--output", kernel, "--kaggle-user", "alice"]]
        + [["kaggle", *action, "--kernel-dir", kernel] for action in actions],
        offline=True,
    )
    made, *tried = result["steps"]
    assert made["code"] == 0, made
    for step in tried:
        assert step["code"] == 2, step
        line = step["err"]
        assert line.startswith("error: cannot reach Kaggle while ") and line.count("\n") == 1, line
        assert "ConnectionError" in line and "check this machine's network" in line
    assert [path.name for path in data.iterdir()] == ["train.csv"]  # no half download
    assert [path.read_text() for path in output.iterdir()] == ["kept\n"]  # the submission too
    token_only = against_fake_kaggle(
        tmp_path / "token",
        [["kernel", "--output", str(tmp_path / "k2")]],
        kaggle_json=None,
        token="t",
        offline=True,
    )
    (step,) = token_only["steps"]
    assert step["code"] == 2 and step["err"].startswith(
        "error: cannot reach Kaggle while asking whose API token this is (or pass --kaggle-user)"
    ), step
    assert not (tmp_path / "k2").exists()


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


def records_folder(tmp_path):
    """What `records` writes, in miniature: shards in train/ and test/, then the manifest."""
    folder = tmp_path / "records"
    (folder / "train").mkdir(parents=True)
    (folder / "test").mkdir()
    (folder / "train" / "fold0-00-2.tfrec").write_bytes(bytes(range(256)) * 4)  # not text
    (folder / "train" / "fold1-00-2.tfrec").write_bytes(b"\xff\xd8" * 300)
    (folder / "test" / "00-1.tfrec").write_bytes(b"\x00\x81" * 100)
    (folder / "manifest.json").write_text('{"folds": 2, "classes": []}')
    return folder


def test_records_go_up_as_a_private_dataset_that_the_notebook_finds_where_kaggle_mounts_it(
    tmp_path,
):
    """Created first, a new version after; `kernel` attaches it and points the config there."""
    folder, kernel = records_folder(tmp_path), str(tmp_path / "kernel")
    dataset = "alice/{{ cookiecutter.package | replace('_', '-') }}-records"
    result = against_fake_kaggle(
        tmp_path,
        [
            ["kaggle", "dataset", "--data-dir", str(folder)],
            ["kernel", "--output", kernel, "--data-dir", str(folder)],
            ["kaggle", "dataset", "--data-dir", str(folder)],
        ],
    )
    created, made, versioned = result["steps"]
    assert created["code"] == 0, created
    assert f"pushed {folder} as the private Kaggle dataset {dataset}" in created["out"]
    (create,) = calls(result, "DatasetApiService/CreateDataset")
    assert create["json"]["isPrivate"] is True
    assert (create["json"]["ownerSlug"], create["json"]["slug"]) == tuple(dataset.split("/"))
    uploads = [r["json"]["name"] for r in calls(result, "BlobApiService/StartBlobUpload")]
    assert sorted(uploads[:3]) == ["manifest.json", "test.zip", "train.zip"]  # folders zipped
    puts = [request for request in result["requests"] if request["method"] == "PUT"]
    zipped = sorted(put["zip"] for put in puts[:3] if "zip" in put)  # each folder's shards
    assert zipped == [["00-1.tfrec"], ["fold0-00-2.tfrec", "fold1-00-2.tfrec"]]
    manifest = hashlib.sha256((folder / "manifest.json").read_bytes()).hexdigest()
    assert manifest in [put["sha256"] for put in puts[:3]]  # the bytes, unchanged
    assert len(create["json"]["files"]) == 3

    assert made["code"] == 0, made
    metadata = json.loads((tmp_path / "kernel" / "kernel-metadata.json").read_text())
    assert metadata["dataset_sources"] == [dataset]
    notebook = (tmp_path / "kernel" / "{{ cookiecutter.project }}.py").read_text()
    # Found where Kaggle mounts each when the notebook runs, in either layout.
    assert f'data_dir="kaggle:datasets/{dataset}",' in notebook
    sample = f'sample_submission="kaggle:competitions/{COMPETITION}/sample_submission.csv",'
    assert sample in notebook  # the sample is the competition's, not the dataset's

    assert versioned["code"] == 0, versioned
    (version,) = calls(result, "DatasetApiService/CreateDatasetVersion")
    assert version["json"]["body"]["versionNotes"] == f"records from {folder}"
    assert len(version["json"]["body"]["files"]) == 3


def test_a_failed_upload_creates_no_dataset_and_the_notebook_attaches_none(tmp_path):
    """The client alone would create the dataset without the file; we stop instead."""
    folder, kernel = records_folder(tmp_path), str(tmp_path / "kernel")
    result = against_fake_kaggle(
        tmp_path,
        [
            ["kaggle", "dataset", "--data-dir", str(folder)],
            ["kaggle", "dataset", "--data-dir", str(tmp_path)],  # no manifest there
            ["kernel", "--output", kernel, "--data-dir", str(folder)],
        ],
        errors={"PUT train.zip": [500, {"code": 500, "message": "storage unavailable"}]},
    )
    failed, elsewhere, made = result["steps"]
    assert failed["code"] == 2, (CLIENT, failed)
    failed_upload = f"error: the upload of {folder / 'train'} to Kaggle failed, so nothing was "
    assert failed_upload in failed["err"], (CLIENT, failed)
    assert "Traceback" not in failed["err"], (CLIENT, failed)
    assert not calls(result, "DatasetApiService/CreateDataset"), CLIENT
    assert not (folder / "dataset-metadata.json").exists()
    assert elsewhere["code"] == 2
    no_records = f"error: {tmp_path} (Config.data_dir / --data-dir) holds no records that "
    assert no_records in elsewhere["err"]
    metadata = json.loads((tmp_path / "kernel" / "kernel-metadata.json").read_text())
    assert made["code"] == 0 and metadata["dataset_sources"] == []
    assert f"warning: Config.data_dir / --data-dir '{folder}' is a folder on" in made["out"]


def test_the_client_reports_a_failed_upload_where_kaggle_dataset_looks_for_it():
    """From kaggle 2.2.5 on, the client documents that a failed upload raises and creates
    nothing; before, KaggleApi._upload_file(file_name, full_path, ...) returned None, and
    `kaggle dataset` makes it raise. This fails, naming the client, when either changes."""
    api = kaggle_client_class()
    if client_version() >= RAISES_ON_A_FAILED_UPLOAD:
        documented = inspect.getdoc(api.upload_files) or ""
        assert "ValueError: If any file could not be uploaded" in documented, (
            f"{CLIENT} no longer documents that upload_files raises for a failed upload: "
            f"check tools/kaggle_api.py's failed_upload against it\n{documented}"
        )
    else:
        taken = list(inspect.signature(api._upload_file).parameters)[:3]
        assert taken == ["self", "file_name", "full_path"], (
            f"{CLIENT}'s KaggleApi._upload_file takes {taken}: check tools/kaggle_api.py's "
            "raise_on_a_failed_upload against it"
        )


@pytest.mark.parametrize(
    "text, problem",
    [('{"username": "alice", "key": "0123', "is not readable JSON (JSONDecodeError"),
     ('{"username": "alice"}', 'holds no "username" and "key"')],
    ids=["cut-short", "no-key"],
)  # fmt: skip
def test_a_kaggle_json_the_client_cannot_use_is_named_not_called_missing(text, problem, tmp_path):
    """Kaggle's client skips such a file and says only that it found no credentials."""
    path = tmp_path / "kaggle.json"
    path.write_text(text)
    with pytest.raises(UserError, match=re.escape(f"{path} {problem}")):
        check_key_file(path)
    path.write_text(json.dumps(CREDENTIALS))
    check_key_file(path)  # as Kaggle's settings page gives it


def test_a_network_error_is_said_in_a_few_words_not_urllib3s_paragraph():
    pool = (
        "HTTPSConnectionPool(host='api.kaggle.com', port=443): Max retries exceeded with url: "
        "/api/v1/competitions.CompetitionApiService/DownloadDataFiles (Caused by "
        "NewConnectionError('<urllib3.connection.HTTPSConnection object at 0x7f3c2a1b4d90>: "
        "Failed to establish a new connection: [Errno -3] Temporary failure in name resolution'))"
    )
    said = briefly(requests.ConnectionError(pool))
    assert said == "ConnectionError: [Errno -3] Temporary failure in name resolution"
    timed_out = pool.split(" (Caused")[0] + ' (Caused by ReadTimeoutError("Read timed out."))'
    assert briefly(requests.Timeout(timed_out)) == "Timeout: ReadTimeoutError"


@pytest.mark.parametrize(
    "text, problem",
    [('{"metric": "top5"', "is not readable JSON"),
     ('{"metric": "top5"}', "Config.metric / --metric = 'top5': must be one of")],
    ids=["cut-short", "unknown-metric"],
)  # fmt: skip
def test_a_model_json_edited_by_hand_is_named_before_the_cv_is_scored(text, problem, tmp_path):
    """The description's CV scores the run as its model.json says it trained."""
    from {{ cookiecutter.package }}.tools.kaggle_api import cv_of_run

    (tmp_path / "valid.csv").write_text("id,label,predicted\na,1,1\nb,0,1\n")
    (tmp_path / "model.json").write_text(text)
    with pytest.raises(UserError, match=re.escape(f"{tmp_path / 'model.json'}") + ".*" + problem):
        cv_of_run(start(Config(output_dir=str(tmp_path)), on_accelerator=False, read=False))
    (tmp_path / "model.json").write_text('{"metric": "accuracy", "num_classes": 2}')
    run = start(Config(output_dir=str(tmp_path)), on_accelerator=False, read=False)
    assert cv_of_run(run) == "cv accuracy 0.5000"
