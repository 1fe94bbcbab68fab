"""Opt-in download: served from 127.0.0.1, resumed after an interruption, refused on a wrong MD5."""

from __future__ import annotations

import hashlib
import http.server
import threading
from typing import ClassVar

import pytest
import yaml

from preprocess.checks.download import download
from preprocess.checks.rawcheck import check_all
from preprocess.errors import RawDataError
from preprocess.registry.config import settings_from_dict
from preprocess.registry.loader import load_registry

PAYLOAD = bytes(range(256)) * 4096  # 1 MiB


class RangeHandler(http.server.BaseHTTPRequestHandler):
    """Serves PAYLOAD at any path, honouring 'Range: bytes=N-'; records the ranges asked for."""

    ranges: ClassVar[list] = []
    drop_after: ClassVar[int | None] = None  # close the connection after this many bytes (an interrupted transfer)

    def do_GET(self):
        start = 0
        header = self.headers.get("Range")
        type(self).ranges.append(header)
        if header:
            start = int(header.split("=")[1].rstrip("-"))
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(PAYLOAD) - 1}/{len(PAYLOAD)}")
        else:
            self.send_response(200)
        body = PAYLOAD[start:]
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if type(self).drop_after is not None:
            self.wfile.write(body[: type(self).drop_after])
            self.wfile.flush()
            self.connection.close()
            return
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    RangeHandler.ranges, RangeHandler.drop_after = [], None
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), RangeHandler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


MD5 = hashlib.md5(PAYLOAD).hexdigest()


def test_resume_after_an_interrupted_transfer(server, tmp_path):
    target = tmp_path / "MedMNIST" / "bloodmnist.npz"
    RangeHandler.drop_after = 300_000
    with pytest.raises(RawDataError, match=r"stopped .* run again to resume after 300000 bytes"):
        download(f"{server}/bloodmnist.npz", target, MD5, timeout=5)
    part = target.with_name("bloodmnist.npz.part")
    assert part.read_bytes() == PAYLOAD[:300_000]
    assert not target.exists()
    RangeHandler.drop_after = None
    kept = part.stat().st_size
    download(f"{server}/bloodmnist.npz", target, MD5, timeout=5)
    assert target.read_bytes() == PAYLOAD
    assert RangeHandler.ranges[-1] == f"bytes={kept}-"
    assert not part.exists()


def test_wrong_md5_is_refused_and_nothing_is_placed(server, tmp_path):
    target = tmp_path / "MedMNIST" / "bloodmnist.npz"
    with pytest.raises(RawDataError, match=r"has md5 \w+, expected 0{32}.*nothing was placed"):
        download(f"{server}/x", target, "0" * 32, timeout=5)
    assert not target.exists()
    assert list(target.parent.iterdir()) == []


def test_check_downloads_only_when_allowed(server, tmp_path):
    files = [{"id": f.id, "path": list(f.paths)} for f in load_registry().source("medmnist").files]
    served = {"id": "bloodmnist", "path": "bloodmnist.npz", "md5": MD5, "url": f"{server}/bloodmnist.npz"}
    files = [served if f["id"] == "bloodmnist" else f for f in files]
    overrides = tmp_path / "overrides.yaml"
    overrides.write_text(yaml.safe_dump({"sources": {"medmnist": {"files": files}}}))
    values = {
        "raw_root": str(tmp_path / "raw"),
        "data_basedir": str(tmp_path / "data"),
        "subsets": "all",
        "registry_overrides": str(overrides),
    }
    settings = settings_from_dict(values)
    assert check_all(settings.registry(), settings, ["medmnist"], None)["medmnist"].status == "missing"
    assert RangeHandler.ranges == []
    settings = settings_from_dict({**values, "allow_download": True})
    check = check_all(settings.registry(), settings, ["medmnist"], None)["medmnist"]
    assert check.file_ok("bloodmnist") and not check.file_ok("pathmnist")  # no URL given for that one here
    assert (tmp_path / "raw" / "MedMNIST" / "bloodmnist.npz").read_bytes() == PAYLOAD
