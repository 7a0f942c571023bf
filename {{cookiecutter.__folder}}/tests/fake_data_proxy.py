"""Kaggle's data proxy as kagglehub meets it inside a Kaggle notebook, on loopback, and a
driver that runs a command as a Kaggle notebook runs it.

Usage (test_kernel.py runs it): python tests/fake_data_proxy.py MOUNTS.json LOG.json COMMAND...
inside a network namespace that has only loopback. MOUNTS.json gives the mount root and, by
kind ("models", "competitions", "datasets", "notebooks"), each input's reference (a model's
owner/model/framework/variation/version, a competition's slug, owner/slug for the others) and
the folder under that root where Kaggle mounts it. The command runs with the variables a
Kaggle notebook has, so kagglehub's real Kaggle-notebook resolvers ask this proxy to attach
each input and then read the files from the mount, as on Kaggle. "proxy" in MOUNTS.json says
how the proxy behaves: true answers as Kaggle's does; false has nothing listening at its
address (a closed port); "error" answers every request with HTTP 500; "silent" takes every
request and never answers. With "rerun": true the command runs as in Kaggle's scoring rerun of
a code competition's notebook. LOG.json gets every request, as it arrives; the exit code is
the command's.
"""

import json
import os
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# What a Kaggle notebook's environment holds for kagglehub (kagglesdk's kaggle_env and
# kagglehub's KaggleJwtClient read these).
TOKENS = {"KAGGLE_USER_SECRETS_TOKEN": "fake-jwt", "KAGGLE_DATA_PROXY_TOKEN": "fake-proxy-token"}
ATTACH = "/kaggle-jwt-handler/AttachDatasourceUsingJwtRequest"
# Each kind's request field, and the fields of it that make the reference, in order.
REFS = {
    "models": (
        "modelRef",
        ("OwnerSlug", "ModelSlug", "Framework", "InstanceSlug", "VersionNumber"),
    ),
    "competitions": ("competitionRef", ("CompetitionSlug",)),
    "datasets": ("datasetRef", ("OwnerSlug", "DatasetSlug")),
    "notebooks": ("kernelRef", ("OwnerSlug", "KernelSlug")),
}


def serve(mounts: dict, log: list, behaviour=True) -> ThreadingHTTPServer:
    """The proxy on a free loopback port: it attaches the inputs MOUNTS names, and only those;
    or, as `behaviour` says, fails every request with HTTP 500 or never answers."""

    class Proxy(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            log.append({"path": self.path, "json": body, "headers": dict(self.headers)})
            if behaviour == "silent":
                time.sleep(3600)  # the caller's own limit ends the wait, or nothing does
                return
            if behaviour == "error":
                self.send_error(500, "Internal Server Error")
                return
            signed = self.headers.get("X-Kaggle-Authorization") == "Bearer fake-jwt"
            kind, (field, keys) = next(
                ((kind, ref) for kind, ref in REFS.items() if ref[0] in body),
                ("", ("", ())),
            )
            ref = body.get(field, {})
            name = "/".join(str(ref.get(key, "")) for key in keys)
            mounted = mounts.get(kind, {})
            if self.path == ATTACH and signed and name in mounted:
                answer = {"wasSuccessful": True, "result": {"mountSlug": mounted[name]}}
                if "VersionNumber" in ref:
                    answer["result"]["versionNumber"] = int(ref["VersionNumber"])
            else:
                answer = {"wasSuccessful": False, "errors": [f"no {kind} {name} to attach"]}
            data = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    server.daemon_threads = True  # a silent answer must not hold up the shutdown
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main(mounts_file: str, log_file: str, *command: str) -> int:
    with open(mounts_file) as file:
        mounts = json.load(file)
    log = []
    behaviour = mounts.get("proxy", True)
    server = serve(mounts, log, behaviour) if behaviour else None
    env = {
        **os.environ,
        **TOKENS,
        "KAGGLE_KERNEL_RUN_TYPE": "Interactive",
        "KAGGLE_DATA_PROXY_URL": f"http://127.0.0.1:{server.server_address[1] if server else closed_port()}",
        "KAGGLE_CACHE_MOUNT_FOLDER": mounts["root"],
    }
    if mounts.get("rerun"):  # as Kaggle sets it when it reruns a notebook to score it
        env["KAGGLE_IS_COMPETITION_RERUN"] = "true"
    try:
        return subprocess.run(command, env=env, check=False).returncode
    finally:
        if server:
            server.shutdown()
        with open(log_file, "w") as file:
            json.dump(log, file)


def closed_port() -> int:
    """A loopback port nothing listens on: a request there is refused at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
