"""`medheb download`: fetch what the build reads of a source a library can fetch, into the raw root.

- Files with a direct URL and a published MD5 (Zenodo: MedMNIST, MedSegBench) go through `pooch`: the known
  hash, retries, a temporary name in the target folder, moved into place only when the hash matches. Its
  downloader here resumes a `<name>.part` file with an HTTP Range request (pooch's own starts over).
- Hugging Face datasets go through `huggingface_hub`, one needed file at a time (`hf_hub_download`, which
  resumes a dropped transfer); each file lands in a staging folder inside the source's folder, is checked against
  the Hub's listing (the LFS SHA-256, or the git blob id of a small file) and only then moved to its name. The
  token is the one the user already has (`HF_TOKEN` or `hf auth login`); `HF_ENDPOINT` picks another Hub.
- Credentialed sites (PhysioNet, Kaggle, Synapse, ...) get the exact commands with the need list; no
  credential is ever stored or asked for here.
Everything is written under `<raw_root>/<raw_dir>/` of that source only; a second run fetches nothing.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import re
import shutil
from pathlib import Path

from preprocess.errors import RawDataError

_BLOCK = 1 << 20
_PIECE = 1 << 16  # written as it arrives: a dropped connection loses at most this much of what came
HF_DATASET = re.compile(r"^https://huggingface\.co/datasets/([^/]+/[^/?#]+)")
PHYSIONET = re.compile(r"^https://physionet\.org/content/([^/]+)/([^/]+)/?")
KAGGLE = re.compile(r"^https://www\.kaggle\.com/(?:datasets/([^/?#]+/[^/?#]+)|competitions/([^/?#]+))")
STAGING = ".medheb-download"  # inside the source's raw folder: same file system, so the final move is a rename


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


# --- Zenodo-style files: pooch ---------------------------------------------------------------------------


class _Resumable:
    """A pooch downloader that keeps `<name>.part` across attempts and runs and asks only for the rest."""

    def __init__(self, part: Path, timeout: float):
        self.part, self.timeout = part, timeout

    def __call__(self, url: str, output_file, pooch) -> None:
        import requests

        have = self.part.stat().st_size if self.part.exists() else 0
        headers = {"Range": f"bytes={have}-"} if have else {}
        with requests.get(url, headers=headers, stream=True, timeout=self.timeout) as response:
            if not (response.status_code == 416 and have):  # 416 on a complete .part: nothing is left to fetch
                response.raise_for_status()
                resumed = bool(have) and response.status_code == 206
                with open(self.part, "ab" if resumed else "wb") as handle:
                    for block in response.iter_content(_PIECE):
                        handle.write(block)
        os.replace(self.part, output_file)  # pooch checks the hash of its temporary file, then moves it


def fetch_url(url: str, target: Path, md5: str | None, retries: int = 2, timeout: float = 60.0, log=print) -> bool:
    """Fetch one file to `target` unless it is there; True when bytes were fetched."""
    import pooch
    import requests

    if target.exists():  # a user's file is never replaced: the raw check reports one with another MD5
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    fetcher = pooch.create(
        path=target.parent,
        base_url="",
        registry={target.name: f"md5:{md5}" if md5 else None},
        urls={target.name: url},
        retry_if_failed=retries,
    )
    part = target.with_name(target.name + ".part")
    try:
        fetcher.fetch(target.name, downloader=_Resumable(part, timeout))
    except ValueError as exc:  # pooch: the hash did not match; its temporary file is gone
        raise RawDataError(
            f"downloaded {url} does not have md5 {md5} ({_first_line(exc)}); nothing was placed at {target}. "
            "Run again, or download it by hand"
        ) from None
    except requests.RequestException as exc:
        kept = part.stat().st_size if part.exists() else 0
        raise RawDataError(
            f"download of {url} stopped ({_first_line(exc)}); run again to resume after {kept} bytes"
        ) from None
    log(f"downloaded {target.name} ({target.stat().st_size} bytes)")
    return True


def fetch_open(source, raw_root: Path, wanted: set[str] | None = None, retries: int = 2, log=print) -> list[Path]:
    """Fetch the files of a source that have a URL and are absent (`wanted`: only these paths)."""
    base = Path(raw_root) / source.raw_dir
    fetched = []
    for spec in source.files:
        if not spec.url or (wanted is not None and not wanted & set(spec.paths)):
            continue
        if any((base / p).exists() for p in spec.paths):  # it, or an accepted alternative, is there
            continue
        if fetch_url(spec.url, base / spec.paths[0], spec.md5, retries=retries, log=log):
            fetched.append(base / spec.paths[0])
    return fetched


# --- Hugging Face datasets: huggingface_hub ----------------------------------------------------------------


def fetch_hf(source, files: set[str], patterns: set[str], raw_root: Path, log=print) -> list[Path]:
    """Fetch the needed files of a Hugging Face dataset (exact paths, and the files the patterns match) that are
    absent or of another size, each verified against the Hub's listing before it is moved into place."""
    from huggingface_hub import HfApi, hf_hub_download

    repo = hf_repo(source)
    endpoint = os.environ.get("HF_ENDPOINT") or None  # read now: huggingface_hub reads it once, at its import
    api = HfApi(endpoint=endpoint)
    base = Path(raw_root) / source.raw_dir
    staging = base / STAGING
    try:
        commit = api.dataset_info(repo).sha
        listing = {
            entry.path: entry
            for entry in api.list_repo_tree(repo, repo_type="dataset", recursive=True, revision=commit)
            if hasattr(entry, "blob_id")
        }
        chosen = sorted(p for p in listing if p in files or any(fnmatch.fnmatch(p, pat) for pat in patterns))
        absent = sorted(files - listing.keys())
        if absent:
            more = f" and {len(absent) - 1} more" if absent[1:] else ""
            raise RawDataError(f"{repo} (commit {commit}) has no file {absent[0]}{more}; the release names it")
        needed, whole = sum(listing[p].size for p in chosen), sum(e.size for e in listing.values())
        log(f"{repo}: {len(chosen)} needed files, {needed} bytes, of the dataset's {len(listing)} files, {whole} bytes")
        fetched = []
        for path in chosen:
            entry, target = listing[path], base / path
            if not target.resolve().is_relative_to(base.resolve()):  # a listing's path never leaves the folder
                raise RawDataError(f"{repo}: the listed path {path!r} leads outside {base}; not fetched")
            if target.is_file() and target.stat().st_size == entry.size:
                continue
            staged = Path(
                hf_hub_download(repo, path, repo_type="dataset", revision=commit, local_dir=staging, endpoint=endpoint)
            )
            _verify(staged, entry, f"{repo}/{path}")
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staged, target)
            fetched.append(target)
            log(f"downloaded {path} ({entry.size} bytes)")
    except Exception as exc:
        error = hub_error(repo, exc)
        if error is None:
            raise
        raise error from None
    finally:
        # verified files were moved out, and huggingface_hub keeps no partial file between runs: what is left
        # is its metadata
        shutil.rmtree(staging, ignore_errors=True)
    return fetched


def _verify(path: Path, entry, where: str) -> None:
    """The Hub's own identity of the file: the SHA-256 of an LFS file, else the git blob id (sha1 of a header
    and the bytes). A mismatch removes the staged file: nothing is placed."""
    expected, actual = hub_hashes(path, entry)
    if actual != expected:
        path.unlink()
        raise RawDataError(
            f"downloaded {where} has hash {actual}, the Hub lists {expected}; it was removed and nothing was placed. "
            "Run again"
        )


def hub_hashes(path: Path, entry) -> tuple[str, str]:
    """(the Hub's hash of a listed file, the same hash of the bytes at `path`): the SHA-256 of an LFS file, else
    the git blob id."""
    if entry.lfs is not None:
        return entry.lfs.sha256, _digest(path, "sha256")
    digest = hashlib.sha1(f"blob {path.stat().st_size}\0".encode())
    return entry.blob_id, _digest(path, digest=digest)


def _digest(path: Path, name: str = "", digest=None) -> str:
    digest = digest or hashlib.new(name)
    with open(path, "rb") as handle:
        while block := handle.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def hub_error(repo: str, exc: Exception) -> RawDataError | None:
    """What a failed exchange with the Hub means for the user, and what to do (None: `exc` is no such failure,
    the caller raises it as it is). Shared by every command that fetches from the Hub."""
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError, OfflineModeIsEnabled

    if isinstance(exc, HfHubHTTPError):
        status = exc.response.status_code if exc.response is not None else None
        if status in (401, 403):
            return RawDataError(
                f"{repo}: HTTP {status}, access refused. Sign in to Hugging Face, accept the conditions on "
                f"https://huggingface.co/datasets/{repo} and give this machine your token (`hf auth login`, or "
                "HF_TOKEN); then run again"
            )
        return RawDataError(f"{repo}: {_first_line(exc)}; run again to resume")
    if isinstance(exc, OfflineModeIsEnabled):  # before LocalEntryNotFoundError's transport cases: nothing was asked
        return RawDataError(
            f"{repo}: Hugging Face's offline mode is on (HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE is set), so nothing "
            "can be fetched; unset it for this command, then run again"
        )
    if isinstance(exc, LocalEntryNotFoundError):  # the Hub did not answer a file's metadata request
        return RawDataError(f"{repo}: {_first_line(exc)}; run again to resume")
    if type(exc).__module__.split(".")[0] in ("httpx", "httpx2", "httpcore"):  # the HTTP client's transport errors
        return RawDataError(f"{repo}: cannot reach the Hub ({_first_line(exc)}); run again to resume")
    return None


def download(need, raw_root: Path, config: str | None = None, log=print) -> list[str]:
    """Fetch what a source's need lists, by the means its site allows; the commands to run by hand (with the
    need list) where no library can fetch it: empty when everything was fetched here."""
    source = need.source
    if any(spec.url for spec in source.files):
        fetch_open(source, raw_root, wanted=need.files, log=log)
        left = [p for p in sorted(need.files) if not (Path(raw_root) / source.raw_dir / p).exists()]
        return [f"no direct URL for {p}: see `medheb info {source.id}`" for p in left]
    if hf_repo(source) is not None:
        fetch_hf(source, need.files, need.patterns, raw_root, log=log)
        return []
    return commands(source, raw_root, f"{source.id}-urls.txt", config)
