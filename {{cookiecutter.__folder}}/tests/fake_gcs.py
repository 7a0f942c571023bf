"""gcp-storage-emulator (from the package registry) where TensorFlow's own gs:// client looks
for Google Cloud Storage: run inside a network and mount namespace whose /etc/hosts sends
www.googleapis.com and storage.googleapis.com to 127.0.0.1 (conftest.IN_A_BUCKET).

    python fake_gcs.py BUCKET CERT KEY READY DUMP [FOLDER]

TF's client reaches the API over HTTPS on 443 (CURL_CA_BUNDLE trusts CERT) and uploads to the
URL the emulator hands back, plain HTTP on port 80: both are served, over one storage. FOLDER's
files are uploaded into BUCKET first, through the emulator's own upload route. READY is
written once it answers. Stopped (SIGTERM), it writes every object of BUCKET into the folder
DUMP, for a test to read what was left there. Shims, each for a request of TF's the emulator
mishandles:
- TF's uploads carry `Transfer-Encoding: chunked` and a `Content-Length`; the emulator reads
  the length and keeps the chunks' framing in the object: the length is dropped. They also
  ask `Expect: 100-continue`, which an HTTP/1.0 server never answers: curl waits a second
  before each upload, unless told to continue.
- TF makes a folder with an empty media upload; the emulator fails on the empty body.
- TF asks a bucket's storageLayout before renaming a folder; the emulator has no such route.
"""

from __future__ import annotations

import json
import signal
import ssl
import sys
import threading
import urllib.parse
import urllib.request
from functools import partial
from http import server
from pathlib import Path

from gcp_storage_emulator import server as emulator
from gcp_storage_emulator.handlers import buckets
from gcp_storage_emulator.storage import Storage

read_data = emulator._read_data


def _read_data(handler, query):
    data = read_data(handler, query)
    return b"" if data is None and "media" in str(query.get("uploadType")) else data


emulator._read_data = _read_data


class Handler(emulator.RequestHandler):
    def parse_request(self):
        parsed = super().parse_request()
        if parsed and "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            del self.headers["Content-Length"]
        if parsed and (self.headers.get("Expect") or "").lower() == "100-continue":
            self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")  # else curl waits a second
            self.wfile.flush()
        return parsed

    def do_GET(self):
        if urllib.parse.urlsplit(self.path).path.endswith("/storageLayout"):
            layout = {"kind": "storage#storageLayout", "hierarchicalNamespace": {"enabled": False}}
            body = json.dumps(layout).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()

    def log_message(self, format, *args):
        print(self.command, urllib.parse.unquote(self.path), file=sys.stderr, flush=True)


def upload(bucket: str, folder: Path) -> None:
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            name = urllib.parse.quote(f"{folder.name}/{path.relative_to(folder)}", safe="")
            url = f"http://127.0.0.1/upload/storage/v1/b/{bucket}/o?uploadType=media&name={name}"
            urllib.request.urlopen(urllib.request.Request(url, path.read_bytes()), timeout=30)


def dump(storage: Storage, bucket: str, folder: Path) -> None:
    for listed in storage.get_file_list(bucket)[0]:
        path = folder / listed["name"]
        if not listed["name"].endswith("/"):  # a folder TF made: an empty object named dir/
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(storage.get_file(bucket, listed["name"]))


def main() -> None:
    bucket, cert, key, ready, dumped, *folder = sys.argv[1:]
    storage = Storage(use_memory_fs=True)

    def stop(signal_number, frame):
        dump(storage, bucket, Path(dumped))
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    buckets.create_bucket(bucket, storage)
    handler = partial(Handler, storage)
    secure = server.ThreadingHTTPServer(("127.0.0.1", 443), handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    secure.socket = context.wrap_socket(secure.socket, server_side=True)
    plain = server.ThreadingHTTPServer(("127.0.0.1", 80), handler)
    threading.Thread(target=plain.serve_forever, daemon=True).start()
    if folder:
        upload(bucket, Path(folder[0]))
    Path(ready).write_text("ready\n")
    secure.serve_forever()


if __name__ == "__main__":
    main()
