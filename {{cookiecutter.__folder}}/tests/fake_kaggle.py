"""Kaggle's API as the real kaggle client sees it, on 127.0.0.1:80, and a driver that runs
this project's commands against it.

Usage (test_kaggle.py runs it): python -m tests.fake_kaggle SCENARIO.json RESULT.json, inside
a network namespace that has only loopback, so nothing can leave the machine. The scenario
gives the home folder, the folder the commands run in, whether credentials exist, errors to
answer with, the notebooks' latest versions and runs, the competition's submissions so far,
the command lines to run, and may give the packages Kaggle's image carries (`image`) and
variables to set (`env`: pip's index settings, say); the result holds each command's exit
code and output and every request the client sent.

The client is the real kaggle package: with KAGGLE_API_ENVIRONMENT=LOCALHOST it sends each
call as POST http://localhost/api/v1/<service>/<Method> with a JSON body, follows download
redirects to storage URLs, and PUTs submissions and dataset files to upload URLs. This server answers the
way api.kaggle.com does, so the client parses every answer as it would parse Kaggle's.
"""

import contextlib
import hashlib
import io
import json
import os
import sys
import tempfile
import threading
import zipfile
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

STORAGE = "http://localhost/storage"
# Kaggle's answer to a download or submission before the rules are accepted.
RULES_NOT_ACCEPTED = {
    "code": 403,
    "message": "You must accept this competition's rules before you'll be able to download files.",
}
# A notebook the scenario says nothing of: pushed, its latest version run to the end.
PUSHED = {"version": 3, "status": "COMPLETE"}


def competition_zip() -> bytes:
    """What DownloadDataFiles serves: a small competition in Kaggle's layout."""
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as files:
        files.writestr("sample_submission.csv", "id,label\na1,0\n")
        files.writestr("train/00-32x32-1.tfrec", b"not really a record")
    return archive.getvalue()


class Kaggle(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    requests: ClassVar[list] = []  # every request: method, path, JSON body or bytes
    errors: ClassVar[dict] = {}  # method name, or "PUT <file>", -> (status, body) instead
    datasets: ClassVar[set] = set()  # owner/slug of the datasets made so far
    uploads: ClassVar[dict] = {}  # upload path -> the file name StartBlobUpload was given
    kernels: ClassVar[dict] = {}  # owner/slug -> its latest version, state, failureMessage
    submissions: ClassVar[list] = []  # the competition's submissions as Kaggle lists them
    blobs: ClassVar[dict] = {
        "/storage/competition.zip": competition_zip(),
        "/storage/submission.csv": b"id,label\na1,3\n",
    }

    def log_message(self, *args):
        pass

    def answer(self, status, body=b"", headers=(), kind="application/json"):
        data = json.dumps(body).encode() if isinstance(body, dict) else body
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def do_GET(self):
        self.requests.append({"method": "GET", "path": self.path})
        if self.path in self.blobs:
            return self.answer(200, self.blobs[self.path], kind="application/octet-stream")
        self.answer(404, {"code": 404, "message": "Not found"})

    def do_PUT(self):
        data = self.body()  # a file's bytes: TFRecords and zips are not text
        request = {"method": "PUT", "path": self.path, "size": len(data)}
        request["sha256"] = hashlib.sha256(data).hexdigest()
        if data[:2] == b"PK":  # a folder the client zipped: what is in it
            request["zip"] = sorted(zipfile.ZipFile(io.BytesIO(data)).namelist())
        elif data.isascii():
            request["text"] = data.decode()
        self.requests.append(request)
        name = self.uploads.get(self.path, "")
        if f"PUT {name}" in self.errors:
            return self.answer(*self.errors[f"PUT {name}"])
        self.answer(200, {})

    def do_POST(self):
        body = json.loads(self.body() or b"{}")
        method = self.path.rsplit("/", 1)[-1]
        self.requests.append({"method": "POST", "path": self.path, "json": body})
        if method in self.errors:
            return self.answer(*self.errors[method])
        if method == "DownloadDataFiles":  # Kaggle redirects to signed storage
            return self.answer(302, headers=[("Location", f"{STORAGE}/competition.zip")])
        ref = f"{body.get('ownerSlug')}/{body.get('datasetSlug') or body.get('slug')}"
        if method == "GetDatasetStatus" and ref not in self.datasets:
            return self.answer(404, {"code": 404, "message": "Not found"})
        if method == "StartBlobUpload":
            token = f"blob-{len(self.uploads) + 1}"
            self.uploads[f"/storage/upload/{token}"] = body["name"]
            return self.answer(200, {"token": token, "createUrl": f"{STORAGE}/upload/{token}"})
        if method in ("CreateDataset", "CreateDatasetVersion"):
            self.datasets.add(ref)
            return self.answer(200, {"ref": ref, "url": f"https://www.kaggle.com/datasets/{ref}",
                                     "status": "Ok", "error": "", "invalidTags": []})  # fmt: skip
        if method in ("CreateSubmission", "CreateCodeSubmission"):  # newest first, not scored yet
            self.submissions.insert(0, {
                "ref": 100 + len(self.submissions),
                "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                "description": body.get("submissionDescription", ""),
                "fileName": body.get("fileName", "submission.csv"),
                "status": "PENDING",
            })  # fmt: skip
        kernel = f"{body.get('userName')}/{body.get('kernelSlug')}"
        latest = self.kernels.get(kernel, PUSHED)
        answers = {
            "SaveKernel": {
                "ref": f"/code/{body.get('slug')}",
                "url": f"https://www.kaggle.com/code/{body.get('slug')}",
                "versionNumber": 3,
                "error": "",
            },
            "IntrospectToken": {"active": True, "username": "alice"},  # whose token it is
            "GetKernel": {  # what `kaggle kernels pull` reads: the latest version's
                "metadata": {
                    "ref": kernel,
                    "slug": body.get("kernelSlug"),
                    "author": body.get("userName"),
                    "title": body.get("kernelSlug"),
                    "language": "python",
                    "kernelType": "notebook",
                    "currentVersionNumber": latest["version"],
                },
                "blob": {"source": "{}", "language": "python", "kernelType": "notebook"},
            },
            "GetKernelSessionStatus": {  # the latest version's run
                "status": latest["status"],
                "failureMessage": latest.get("failureMessage", ""),
            },
            "GetDatasetStatus": {"status": "READY"},
            "ListKernelSessionOutput": {
                "files": [{"url": f"{STORAGE}/submission.csv", "fileName": "submission.csv"}],
                "log": '[{"stream_name":"stdout","time":1.5,"data":"wrote 1 rows\\n"}]',
                "nextPageToken": "",
            },
            "StartSubmissionUpload": {"token": "blob-1", "createUrl": f"{STORAGE}/upload/blob-1"},
            "CreateSubmission": {
                "message": f"Successfully submitted to {body.get('competitionName')}",
                "ref": 1,
            },
            "CreateCodeSubmission": {
                "message": f"Successfully submitted to {body.get('competitionName')}",
                "ref": 2,
            },
            "ListSubmissions": {"submissions": self.submissions, "nextPageToken": ""},
        }
        if method in answers:
            return self.answer(200, answers[method])
        self.answer(404, {"code": 404, "message": f"no {method} here"})


def run(scenario: dict) -> dict:
    home = scenario["home"]
    os.environ["HOME"] = home
    if not scenario.get("offline"):  # offline: the client asks the real Kaggle, unreachable
        os.environ["KAGGLE_API_ENVIRONMENT"] = "LOCALHOST"
    # The client keeps unfinished uploads in the temporary folder: one per scenario.
    os.makedirs(f"{home}/tmp", exist_ok=True)
    os.environ["TMPDIR"], tempfile.tempdir = f"{home}/tmp", None
    for name in (
        "KAGGLE_USERNAME",
        "KAGGLE_KEY",
        "KAGGLE_API_TOKEN",
        "KAGGLE_CONFIG_DIR",
        "KAGGLE_KERNEL_RUN_TYPE",
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
    ):
        os.environ.pop(name, None)  # fmt: skip
    if scenario.get("kaggle_json"):  # as a user saves it from Kaggle's settings page
        os.makedirs(f"{home}/.kaggle", exist_ok=True)
        with open(f"{home}/.kaggle/kaggle.json", "w") as file:
            json.dump(scenario["kaggle_json"], file)
        os.chmod(f"{home}/.kaggle/kaggle.json", 0o600)
    if scenario.get("token"):  # an API token from Kaggle's settings page, and nothing else
        os.environ["KAGGLE_API_TOKEN"] = scenario["token"]
    if scenario.get("login"):  # what `kaggle auth login` leaves
        os.makedirs(f"{home}/.kaggle", exist_ok=True)
        with open(f"{home}/.kaggle/credentials.json", "w") as file:
            json.dump(scenario["login"], file)
    Kaggle.errors = {name: tuple(answer) for name, answer in scenario.get("errors", {}).items()}
    Kaggle.datasets = set(scenario.get("datasets", []))
    Kaggle.kernels = scenario.get("kernels", {})
    Kaggle.submissions = scenario.get("submissions", [])
    os.environ.update(scenario.get("env", {}))  # pip's own settings: where its index is
    if "image" in scenario:  # the packages Kaggle's image carries, in place of its pin file's
        from {{ cookiecutter.package }}.tools import notebook

        notebook.image_packages = lambda: scenario["image"]
    # Where a user runs the commands: relative folders (kernel-inference/) are looked up there.
    os.chdir(scenario.get("cwd", home))
    server = None if scenario.get("offline") else ThreadingHTTPServer(("127.0.0.1", 80), Kaggle)
    if server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    from {{ cookiecutter.package }}.__main__ import main

    steps = []
    for argv in scenario["steps"]:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
        steps.append({"argv": argv, "code": code, "out": out.getvalue(), "err": err.getvalue()})
    if server:
        server.shutdown()
    return {"steps": steps, "requests": Kaggle.requests}


if __name__ == "__main__":
    with open(sys.argv[1]) as file:
        result = run(json.load(file))
    with open(sys.argv[2], "w") as file:
        json.dump(result, file, indent=1)
