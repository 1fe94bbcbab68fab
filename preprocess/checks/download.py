"""Opt-in download of open sources (allow_download: true): resume, verify, then move into place.

The only time the pipeline writes under the raw root, and only when the user asks for it. Bytes go to
`<target>.part` (resumed with an HTTP Range request after an interruption), the MD5 is checked, and only a
verified file is renamed to its final name.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import urllib.error
import urllib.request
from pathlib import Path

from preprocess.errors import RawDataError

_BLOCK = 1 << 20


def download(url: str, target: Path, md5: str | None, timeout: float = 60.0, log=print) -> Path:
    """Fetch url to target, resuming a previous .part file; raise RawDataError on a wrong MD5."""
    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(target.name + ".part")
    have = part.stat().st_size if part.exists() else 0
    request = urllib.request.Request(url, headers={"Range": f"bytes={have}-"} if have else {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            resumed = have and response.status == 206
            if have and not resumed:
                log(f"{url}: the server ignored the resume request; downloading from the start")
            length = response.headers.get("Content-Length")
            expected = (have if resumed else 0) + int(length) if length is not None else None
            with open(part, "ab" if resumed else "wb") as handle:
                while block := response.read(_BLOCK):
                    handle.write(block)
            if expected is not None and part.stat().st_size < expected:
                raise OSError(f"connection closed after {part.stat().st_size} of {expected} bytes")
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and have:  # the .part file is already complete
            pass
        else:
            raise RawDataError(f"download of {url} failed: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
        kept = part.stat().st_size if part.exists() else 0
        raise RawDataError(f"download of {url} stopped ({exc}); run again to resume after {kept} bytes") from None
    if md5:
        actual = _md5(part)
        if actual != md5:
            part.unlink()
            raise RawDataError(
                f"downloaded {url} has md5 {actual}, expected {md5}; the partial file was removed, nothing was "
                f"placed at {target}. Run again, or download it by hand"
            )
    os.replace(part, target)
    log(f"downloaded {target.name} ({target.stat().st_size} bytes)")
    return target


def _md5(path: Path) -> str:
    digest = hashlib.md5()
    with open(path, "rb") as handle:
        while block := handle.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def fetch_missing(source, raw_root: Path, log=print) -> list[Path]:
    """Download the files of a source that have a URL and are absent."""
    base = raw_root / source.raw_dir
    fetched = []
    for spec in source.files:
        if not spec.url or any((base / p).exists() for p in spec.paths):
            continue
        fetched.append(download(spec.url, base / spec.paths[0], spec.md5, log=log))
    return fetched
