"""`medheb download`: fetch what the build reads of a source a library can fetch, into the raw root.

Every file comes through one bounded stream (`fetch_file`):
- into `.<name>.medheb-download.part` beside its name, opened without following a link, with no link on the way
  below the source's folder (fsutil.open_for_writing), claimed by a record so that only a part a download of
  ours started is ever resumed (rawdata/partfile.py), resumed with an HTTP Range request;
- at most the file's known size (the Hub's listing), else the most its registry entry allows (an .npz's
  counts and shapes: formats/npzio.largest_bytes) or `download_max_bytes`, the smaller,
  within `download_deadline` seconds for the file, every attempt of the run together, each read waiting at
  most a minute: an endless body and a trickle stop, named;
- checked (the MD5 the registry publishes, the Hub's hash) and only then given its name, which must be free or,
  for a Hub file of another size than listed, a regular file (fsutil.place_new): never a link.
The `.part` and its record are all a download leaves: kept when a transfer stops (dropped, out of time), as
it then holds the first bytes the server sent, in order, no more than the bound, so the next run asks for the
rest; removed when what came is not the file (more than the bound, another hash).

- Direct URLs with a published MD5 (Zenodo: MedMNIST, MedSegBench): the file's `url` in the registry.
- Hugging Face datasets: `huggingface_hub` lists the dataset at one commit (each file's size and hash) and
  gives the token the user already has (`HF_TOKEN` or `hf auth login`); `HF_ENDPOINT` picks another Hub. Each
  needed file comes from its resolve address at that commit.
- Credentialed sites (PhysioNet, Kaggle, Synapse, ...) get the exact commands with the need list; no
  credential is ever stored or asked for here.
Everything is written under `<raw_root>/<raw_dir>/` of that source only; a second run fetches nothing.
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import os
import re
import time
from dataclasses import dataclass, replace
from pathlib import Path

from preprocess.errors import RawDataError
from preprocess.formats.fsutil import check_folders, file_digest, link_refusal, open_regular, place_new, safe_relative
from preprocess.rawdata import partfile
from preprocess.rawdata.partfile import restart as _restart

_BLOCK = 1 << 20
_PIECE = 1 << 16  # written as it arrives: a dropped connection loses at most this much of what came
HF_DATASET = re.compile(r"^https://huggingface\.co/datasets/([^/]+/[^/?#]+)")
PHYSIONET = re.compile(r"^https://physionet\.org/content/([^/]+)/([^/]+)/?")
KAGGLE = re.compile(r"^https://www\.kaggle\.com/(?:datasets/([^/?#]+/[^/?#]+)|competitions/([^/?#]+))")


def hf_repo(source) -> str | None:
    """The Hugging Face dataset of a source whose download page is one (its id, `owner/name`)."""
    match = HF_DATASET.match(source.download)
    return match.group(1).removesuffix("/") if match else None


def urls(source, paths: list[str]) -> tuple[list[str], list[str]]:
    """(download URLs of the paths, the paths without one) by the source's URL scheme: a file's own `url` in the
    registry, the Hub's resolve address, PhysioNet's files tree."""
    by_path = {p: spec.url for spec in source.files if spec.url for p in spec.paths}
    repo = hf_repo(source)
    physionet = PHYSIONET.match(source.download)
    found, without = [], []
    for path in paths:
        if path in by_path:
            found.append(by_path[path])
        elif repo and "*" not in path:
            found.append(f"https://huggingface.co/datasets/{repo}/resolve/main/{path}")
        elif physionet and "*" not in path:
            found.append(f"https://physionet.org/files/{physionet.group(1)}/{physionet.group(2)}/{path}")
        else:
            without.append(path)
    return found, without


def hf_command(source, lines: list[str], raw_root) -> str | None:
    """The `hf download` command (the Hub's CLI; `huggingface-cli download` takes the same arguments)."""
    repo = hf_repo(source)
    if repo is None:
        return None
    include = " ".join(f"'{line}'" for line in lines)
    return f"hf download {repo} --repo-type dataset --local-dir '{Path(raw_root) / source.raw_dir}' --include {include}"


def commands(source, raw_root, list_file: str, config: str | None = None) -> list[str]:
    """What a user runs for a credentialed source, with the list `medheb need --urls` wrote to `list_file`."""
    target = Path(raw_root) / source.raw_dir
    physionet = PHYSIONET.match(source.download)
    kaggle = KAGGLE.match(source.download)
    if physionet:
        cut = 3  # physionet.org/files/<project>/<version>/<path>: keep <path> only
        return [
            f"medheb need {source.id} --urls{f' --config {config}' if config else ''} > {list_file}",
            f"wget -N -c -x -nH --cut-dirs={cut} --user <your PhysioNet user> --ask-password "
            f"-i {list_file} -P '{target}'",
        ]
    if kaggle:
        dataset, competition = kaggle.groups()
        what = f"datasets download -d {dataset}" if dataset else f"competitions download -c {competition}"
        return [f"kaggle {what} -p '{target}'  # then unzip there: Kaggle serves whole archives"]
    return [f"see `medheb info {source.id}`: {source.download} offers no per-file download"]


# --- one bounded stream for every file ----------------------------------------------------------------------


@dataclass(frozen=True)
class Limits:
    """What one file may take: `deadline` seconds (all its attempts in one run), `max_bytes` when no listing
    gives its size (`by_registry`: its registry entry's bound, smaller than download_max_bytes), `timeout`
    seconds for one connect or one read, `retries` more attempts after a drop."""

    deadline: float
    max_bytes: int
    timeout: float = 60.0
    retries: int = 2
    by_registry: bool = False


def limits(settings=None, **changes) -> Limits:
    """The limits a config sets (`download_deadline`, `download_max_bytes`; None: the schema's defaults)."""
    from preprocess.registry.config import defaults

    values = defaults() if settings is None else vars(settings)
    chosen = Limits(deadline=float(values["download_deadline"]), max_bytes=int(values["download_max_bytes"]))
    return replace(chosen, **changes)


RAISE_MAX_BYTES = ". If a file that has no listed size truly is larger, raise download_max_bytes (bytes per file)"


class _Dropped(Exception):
    """A transfer that stopped in a way another attempt may get past (a reset, a timeout, an HTTP 5xx)."""


class _Oversized(RawDataError):
    """More bytes came than the file may have: what came is not the file."""


def fetch_file(
    url: str, target: Path, root: Path, bounds: Limits, *, size: int | None = None, check=None,
    headers: dict | None = None, replace: bool = False, what: str | None = None, denied: str = "", log=print,
) -> None:  # fmt: skip
    """Fetch `url` to `target` (under `root`, the source's folder) through its own part, within `bounds`.
    `size`: the file's known size; `check(path)`: what is wrong with the finished file, or None; `replace`: a
    regular file at `target` is replaced; `denied`: what to do on a 401/403."""
    job = _Transfer(url, partfile.part_of(target), size, bounds, headers or {}, what or url, denied)
    with partfile.open_part(job.part, root, url, target) as handle:
        try:
            job.fill(handle, log)
        except BaseException as exc:
            if isinstance(exc, _Oversized) or handle.tell() == 0:  # not the file's first bytes, or none
                handle.close()
                partfile.drop(job.part)
            raise
    problem = check(job.part) if check else None
    if problem is None and size is not None and job.part.stat().st_size != size:
        problem = f"has {job.part.stat().st_size} bytes where {size} are listed"
    if problem is not None:
        partfile.drop(job.part)
        raise RawDataError(f"downloaded {job.what} {problem}; it was removed and nothing was placed at {target}. "
                           "Run again")  # fmt: skip
    place_new(job.part, target, root, replace=replace)
    partfile.done(job.part)


class _Transfer:
    """One file's attempts into its `.part`, at most `bound` bytes, until `give_up` (the monotonic clock)."""

    def __init__(self, url, part: Path, size, bounds: Limits, headers: dict, what: str, denied: str):
        self.url, self.part, self.size, self.bounds, self.headers = url, part, size, bounds, headers
        self.what, self.denied = what, denied
        self.bound = size if size is not None else bounds.max_bytes
        self.give_up = time.monotonic() + bounds.deadline

    def fill(self, handle, log) -> None:
        """Bring the `.part` to the whole file: attempts from its end on, until a body ends or the known size is
        there; a RawDataError when the attempts are spent or the deadline passed."""
        handle.seek(0, os.SEEK_END)
        if handle.tell() > self.bound:  # more than the file can have: not its first bytes
            _restart(handle)
        for attempt in range(self.bounds.retries + 1):
            if self.size is not None and handle.tell() == self.size:
                return
            try:
                ended = self.attempt(handle)
            except _Dropped as exc:
                if time.monotonic() >= self.give_up:
                    raise RawDataError(self.late(handle.tell())) from None
                if attempt == self.bounds.retries:
                    raise RawDataError(
                        f"download of {self.what} stopped ({exc}); run again to resume after {handle.tell()} bytes "
                        f"(kept in {self.part})"
                    ) from None
                log(f"{self.what}: {exc}; asking again from byte {handle.tell()}")
                time.sleep(min(attempt + 1, max(self.give_up - time.monotonic(), 0)))
                continue
            if not ended:
                raise RawDataError(self.late(handle.tell()))
            return

    def attempt(self, handle) -> bool:
        """One GET from the `.part`'s end on, written as it arrives: True when the body ended, False when the
        deadline passed first."""
        import requests
        import urllib3

        have = handle.tell()
        asked = {**self.headers, "Accept-Encoding": "identity"}  # the bytes as stored: the hash and Range are of them
        if have:
            asked["Range"] = f"bytes={have}-"
        try:
            response = requests.get(self.url, headers=asked, stream=True, timeout=self.bounds.timeout)
        except requests.RequestException as exc:
            raise _Dropped(_first_line(exc)) from None
        with response:
            if response.status_code == 416 and have:  # a complete .part: nothing is left to fetch
                return True
            _refused(response.status_code, self.url, self.what, self.denied)
            if have and not _resumes(response, have):  # the whole file came instead of the rest: start over
                _restart(handle)
            length = response.headers.get("Content-Length", "")
            if length.isdigit() and handle.tell() + int(length) > self.bound:
                raise _Oversized(self.oversized(f"it announces {handle.tell() + int(length)}"))
            while time.monotonic() <= self.give_up:
                try:  # read1: what has arrived, at once (read waits for the whole piece: a trickle, for hours)
                    block = response.raw.read1(_PIECE, decode_content=False)
                except (urllib3.exceptions.HTTPError, OSError) as exc:
                    raise _Dropped(_first_line(exc)) from None
                if not block:
                    return True
                if handle.tell() + len(block) > self.bound:
                    raise _Oversized(self.oversized("more came"))
                handle.write(block)
            return False

    def oversized(self, seen: str) -> str:
        where, then = "download_max_bytes in the config", RAISE_MAX_BYTES
        if self.size is not None or self.bounds.by_registry:
            where = "the size the Hub lists" if self.size is not None else "its arrays as the registry counts them"
            then = "" if self.size is not None else ". Check source_variants (the image size) and the address"
        return (
            f"{self.what} holds more than {self.bound} bytes ({seen}), the most it may have ({where}): what came "
            f"is not the file, and nothing of it was kept{then}"
        )

    def late(self, have: int) -> str:
        of = f" of {self.size}" if self.size is not None else ""
        return (
            f"download of {self.what} did not finish within download_deadline, {self.bounds.deadline:g} s for one "
            f"file: {have}{of} bytes came, kept in {self.part}, and the next run asks for the rest. On a slow link "
            "raise download_deadline in the config (seconds per file)"
        )


def _resumes(response, have: int) -> bool:
    """The answer is the rest of the file from byte `have` on."""
    ranged = re.match(r"bytes (\d+)-", response.headers.get("Content-Range", ""))
    return response.status_code == 206 and ranged is not None and int(ranged.group(1)) == have


def _refused(status: int, url: str, what: str, denied: str) -> None:
    """Raise for an HTTP error status: _Dropped for a server's own trouble (another attempt may pass), else a
    RawDataError saying what to do."""
    if status < 400:
        return
    if status >= 500 or status in (408, 429):
        raise _Dropped(f"HTTP {status}")
    if status in (401, 403) and denied:
        raise RawDataError(f"{what}: HTTP {status}, {denied}")
    raise RawDataError(
        f"{what}: HTTP {status} from {url}; nothing was fetched. Check the address, or download it by hand"
    )


def _md5_problem(md5: str | None):
    def problem(path: Path) -> str | None:
        actual = file_digest(path, "md5") if md5 else None
        return None if actual == md5 else f"does not have md5 {md5} (it has {actual})"

    return problem


def fetch_url(url: str, target: Path, md5: str | None, bounds: Limits | None = None, root: Path | None = None,
              log=print) -> bool:  # fmt: skip
    """Fetch one file to `target` (under `root`: default its folder) unless it is there; True when fetched."""
    if target.is_symlink():  # a dangling one too: the download would take its place
        raise link_refusal(target)
    if target.exists():  # a user's file is never replaced: the raw check reports one with another MD5
        return False
    fetch_file(url, target, root or target.parent, bounds or limits(), check=_md5_problem(md5), log=log)
    log(f"downloaded {target.name} ({target.stat().st_size} bytes)")
    return True


def fetch_open(source, raw_root: Path, wanted: set[str] | None = None, bounds: Limits | None = None,
               log=print) -> list[Path]:  # fmt: skip
    """Fetch the files of a source that have a URL and are absent (`wanted`: only these paths)."""
    from preprocess.formats import npzio  # numpy: only where a file is fetched

    base = Path(raw_root) / source.raw_dir
    chosen = [
        spec
        for spec in source.files
        if spec.url and (wanted is None or wanted & set(spec.paths))
        and not any((base / p).exists() for p in spec.paths)  # it, or an accepted alternative, is there
    ]  # fmt: skip
    check_folders([base / spec.paths[0] for spec in chosen], base)
    fetched, bounds = [], bounds or limits()
    for spec in chosen:
        most = npzio.largest_bytes(spec.npz) if spec.npz else bounds.max_bytes
        chosen_bounds = replace(bounds, max_bytes=most, by_registry=True) if most < bounds.max_bytes else bounds
        if fetch_url(spec.url, base / spec.paths[0], spec.md5, chosen_bounds, root=base, log=log):
            fetched.append(base / spec.paths[0])
    return fetched


# --- Hugging Face datasets: huggingface_hub lists, the bounded stream fetches -------------------------------


def fetch_hf(source, files: set[str], patterns: set[str], raw_root: Path, bounds: Limits | None = None,
             log=print) -> list[Path]:  # fmt: skip
    """Fetch the needed files of a Hugging Face dataset (exact paths, and the files the patterns match) that are
    absent or of another size, each verified against the Hub's listing before it is given its name."""
    from huggingface_hub import hf_hub_url
    from huggingface_hub.utils import build_hf_headers

    repo = hf_repo(source)
    endpoint = os.environ.get("HF_ENDPOINT") or None  # read now: huggingface_hub reads it once, at its import
    base = Path(raw_root) / source.raw_dir
    commit, listing = hub_listing(repo, endpoint)
    chosen = sorted(p for p in listing if p in files or any(fnmatch.fnmatch(p, pat) for pat in patterns))
    absent = sorted(files - listing.keys())
    if absent:
        more = f" and {len(absent) - 1} more" if absent[1:] else ""
        raise RawDataError(f"{repo} (commit {commit}) has no file {absent[0]}{more}; the release names it")
    needed, whole = sum(listing[p].size for p in chosen), sum(e.size for e in listing.values())
    log(f"{repo}: {len(chosen)} needed files, {needed} bytes, of the dataset's {len(listing)} files, {whole} bytes")
    targets = {path: base / safe_relative(path, f"{repo}: the listed file") for path in chosen}
    check_folders(list(targets.values()), base)  # a link on the way is named before anything is fetched
    denied_text = denied(repo)
    headers = build_hf_headers()  # the user's token, when there is one
    fetched = []
    for path, target in targets.items():
        entry = listing[path]
        if target.is_file() and target.stat().st_size == entry.size:
            continue
        if target.is_file():  # a cut copy of the same file: the Hub's replaces it once verified
            log(f"{path}: {target.stat().st_size} bytes there, the Hub lists {entry.size}: fetching it again")
        url = hf_hub_url(repo, path, repo_type="dataset", revision=commit, endpoint=endpoint)
        fetch_file(
            url, target, base, bounds or limits(), size=entry.size, check=functools.partial(hub_problem, entry=entry),
            headers=headers, replace=True, what=f"{repo}/{path}", denied=denied_text, log=log,
        )  # fmt: skip
        fetched.append(target)
        log(f"downloaded {path} ({entry.size} bytes)")
    return fetched


def hub_listing(repo: str, endpoint: str | None, revision: str | None = None) -> tuple[str, dict]:
    """(the dataset's commit at `revision`, default its main branch, and its files by path at that commit), or a
    RawDataError saying what to do. Shared by every command that fetches from the Hub."""
    from huggingface_hub import HfApi

    api = HfApi(endpoint=endpoint)
    try:
        commit = api.dataset_info(repo, revision=revision).sha
        entries = api.list_repo_tree(repo, repo_type="dataset", recursive=True, revision=commit)
        listing = {entry.path: entry for entry in entries if hasattr(entry, "blob_id")}
    except Exception as exc:
        error = hub_error(repo, exc)
        if error is None:
            raise
        raise error from None
    partfile.check_listing(repo, commit, listing)  # a listing that is no tree stops here, before any download
    return commit, listing


def hub_error(repo: str, exc: Exception) -> RawDataError | None:
    """What a failed exchange with the Hub's API means for the user, and what to do (None: `exc` is no such
    failure, the caller raises it as it is)."""
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

    if isinstance(exc, HfHubHTTPError):
        status = exc.response.status_code if exc.response is not None else None
        if status in (401, 403):
            return RawDataError(f"{repo}: HTTP {status}, {denied(repo)}")
        return RawDataError(f"{repo}: {_first_line(exc)}; run again")
    if isinstance(exc, OfflineModeIsEnabled):
        return RawDataError(
            f"{repo}: Hugging Face's offline mode is on (HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE is set), so nothing "
            "can be fetched; unset it for this command, then run again"
        )
    if type(exc).__module__.split(".")[0] in ("httpx", "httpx2", "httpcore"):  # the HTTP client's transport errors
        return RawDataError(f"{repo}: cannot reach the Hub ({_first_line(exc)}); run again to resume")
    return None


def denied(repo: str) -> str:
    return (
        f"access refused. Sign in to Hugging Face, accept the conditions on https://huggingface.co/datasets/{repo} "
        "and give this machine your token (`hf auth login`, or HF_TOKEN); then run again"
    )


def hub_problem(path: Path, entry) -> str | None:
    """What is wrong with a fetched file by the Hub's own identity of it (hub_hashes), or None."""
    expected, actual = hub_hashes(path, entry)
    return None if actual == expected else f"has hash {actual}, the Hub lists {expected}"


def hub_hashes(path: Path, entry) -> tuple[str, str]:
    """(the Hub's hash of a listed file, the same hash of the bytes at `path`): the SHA-256 of an LFS file, else
    the git blob id."""
    if entry.lfs is not None:
        return entry.lfs.sha256, _digest(path, "sha256")
    digest = hashlib.sha1(f"blob {path.stat().st_size}\0".encode())
    return entry.blob_id, _digest(path, digest=digest)


def _digest(path: Path, name: str = "", digest=None) -> str:
    digest = digest or hashlib.new(name)
    with open_regular(path) as handle:
        while block := handle.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def _first_line(exc: Exception) -> str:
    text = exc.args[0] if exc.args and isinstance(exc.args[0], str) else str(exc)  # urllib3's: (text, cause)
    return text.strip().splitlines()[0] if text.strip() else type(exc).__name__


def download(need, raw_root: Path, config: str | None = None, bounds: Limits | None = None, log=print) -> list[str]:
    """Fetch what a source's need lists, by the means its site allows; the commands to run by hand (with the
    need list) where no library can fetch it: empty when everything was fetched here."""
    source = need.source
    if any(spec.url for spec in source.files):
        fetch_open(source, raw_root, wanted=need.files, bounds=bounds, log=log)
        left = [p for p in sorted(need.files) if not (Path(raw_root) / source.raw_dir / p).exists()]
        return [f"no direct URL for {p}: see `medheb info {source.id}`" for p in left]
    if hf_repo(source) is not None:
        fetch_hf(source, need.files, need.patterns, raw_root, bounds=bounds, log=log)
        return []
    return commands(source, raw_root, f"{source.id}-urls.txt", config)
