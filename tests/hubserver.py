"""Local stand-ins for the download sites, on 127.0.0.1: a file server (Zenodo-style, with HTTP Range) and the
few Hugging Face Hub routes huggingface_hub calls to list a dataset and fetch its files. No test reaches the
internet."""

from __future__ import annotations

import hashlib
import http.server
import json
import re
import threading
import time
import urllib.parse
from contextlib import contextmanager
from dataclasses import dataclass, field

COMMIT = "0123456789abcdef0123456789abcdef01234567"
LFS_SUFFIXES = (".nii.gz", ".npz", ".parquet")  # served as LFS files: the listing gives their SHA-256
TRICKLE = 2.0  # seconds between the bytes of a trickled file
SLOW_FOR = 30.0  # an endless or trickled body stops by itself after this long, if its client is still there


@dataclass
class Site:
    """What a server holds and what it was asked."""

    files: dict[str, bytes] = field(default_factory=dict)  # path (without the leading /) -> bytes
    repos: dict[str, dict[str, bytes]] = field(default_factory=dict)  # Hub dataset id -> path -> bytes
    gated: set[str] = field(default_factory=set)  # Hub datasets whose files answer 401 (listing them is open)
    drop_after: dict[str, int] = field(default_factory=dict)  # path -> close the first GET after this many bytes
    corrupt: set[str] = field(default_factory=set)  # paths served with other bytes than the listing's hash
    longer: set[str] = field(default_factory=set)  # Hub paths served with 1 KiB more than listed (and announced)
    # names as in drop_after (a Hub file: "<repo>/<path>"): a body that never ends (no Content-Length), and
    # one sent a byte every TRICKLE seconds
    endless: set[str] = field(default_factory=set)
    trickle: set[str] = field(default_factory=set)
    gets: list[tuple[str, str | None]] = field(default_factory=list)  # (path, Range header) of every file GET


def _entry(path: str, data: bytes) -> dict:
    entry = {
        "type": "file",
        "path": path,
        "size": len(data),
        "oid": hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest(),  # git's blob id
    }
    if path.endswith(LFS_SUFFIXES):
        entry["lfs"] = {"oid": hashlib.sha256(data).hexdigest(), "size": len(data), "pointerSize": 134}
    return entry


class Handler(http.server.BaseHTTPRequestHandler):
    site: Site  # set on the subclass a server makes

    def log_message(self, *args):
        pass

    def do_HEAD(self):
        self._serve(body=False)

    def do_GET(self):
        self._serve(body=True)

    def _serve(self, body: bool):
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        api = re.fullmatch(r"/api/datasets/([^/]+/[^/]+)(?:/revision/[^/]+)?", path)
        tree = re.fullmatch(r"/api/datasets/([^/]+/[^/]+)/tree/[^/]+(?:/.*)?", path)
        resolve = re.fullmatch(r"/datasets/([^/]+/[^/]+)/resolve/[^/]+/(.+)", path)
        repo = (api or tree or resolve).group(1) if (api or tree or resolve) else None
        if resolve and repo in self.site.gated:
            self._reply(401, b"gated", {"X-Error-Code": "GatedRepo", "X-Error-Message": "Access restricted"}, body)
        elif api and repo in self.site.repos:
            siblings = [{"rfilename": p} for p in self.site.repos[repo]]
            self._json({"id": repo, "sha": COMMIT, "private": False, "siblings": siblings}, body)
        elif tree and repo in self.site.repos:
            self._json([_entry(p, data) for p, data in sorted(self.site.repos[repo].items())], body)
        elif resolve and repo in self.site.repos and resolve.group(2) in self.site.repos[repo]:
            name = resolve.group(2)
            data = self.site.repos[repo][name]
            served = bytes(len(data)) if name in self.site.corrupt else data
            served += bytes(1024) if name in self.site.longer else b""
            etag = _entry(name, data).get("lfs", {}).get("oid") or _entry(name, data)["oid"]
            self._file(f"{repo}/{name}", served, {"X-Repo-Commit": COMMIT, "ETag": f'"{etag}"'}, body)
        elif not (api or tree or resolve) and path.lstrip("/") in self.site.files:
            self._file(path.lstrip("/"), self.site.files[path.lstrip("/")], {}, body)
        else:
            self._reply(404, b"not found", {"X-Error-Code": "EntryNotFound"}, body)

    def _json(self, value, body: bool):
        self._reply(200, json.dumps(value).encode(), {"Content-Type": "application/json"}, body)

    def _file(self, name: str, data: bytes, headers: dict, body: bool):
        """The bytes from a 'Range: bytes=N-' on (206) or whole (200); the first GET of a name in drop_after
        closes the connection early (an interrupted transfer)."""
        start, status = 0, 200
        asked = self.headers.get("Range")
        if body:
            self.site.gets.append((name, asked))
        if body and name in self.site.endless | self.site.trickle:
            return self._slow(name, data)
        if asked:
            start, status = int(asked.split("=")[1].split("-")[0]), 206
            headers = {**headers, "Content-Range": f"bytes {start}-{len(data) - 1}/{len(data)}"}
        chunk = data[start:]
        self.send_response(status)
        for key, value in {**headers, "Content-Length": str(len(chunk)), "Accept-Ranges": "bytes"}.items():
            self.send_header(key, value)
        self.end_headers()
        if not body:
            return
        cut = self.site.drop_after.pop(name, None)
        self.wfile.write(chunk if cut is None else chunk[:cut])
        self.wfile.flush()
        if cut is not None:
            self.close_connection = True

    def _slow(self, name: str, data: bytes):
        """An endless body (64 KiB blocks, no Content-Length: it ends when the connection does) or a trickle
        (the file's length announced, one byte every TRICKLE s); either stops after SLOW_FOR s or when the client
        has gone."""
        endless = name in self.site.endless
        self.send_response(200)
        if not endless:
            self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        stop = time.monotonic() + SLOW_FOR
        sent = 0
        try:
            while time.monotonic() < stop and (endless or sent < len(data)):
                self.wfile.write(bytes(1 << 16) if endless else data[sent : sent + 1])
                self.wfile.flush()
                sent += 1
                time.sleep(0.01 if endless else TRICKLE)  # endless at 6 MB/s: a bound, not the disk, stops it
        except OSError:  # the client closed the connection: what a bound is for
            pass
        self.close_connection = True

    def _reply(self, status: int, data: bytes, headers: dict, body: bool):
        self.send_response(status)
        for key, value in {**headers, "Content-Length": str(len(data))}.items():
            self.send_header(key, value)
        self.end_headers()
        if body:
            self.wfile.write(data)


@contextmanager
def serve(site: Site):
    """The site on http://127.0.0.1:<free port>, for the time of the block."""
    handler = type("SiteHandler", (Handler,), {"site": site})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
