"""`medheb download release`: the benchmark's release (task files, Train_Data, the images of chosen subsets)
from its Hugging Face dataset into DATA_BASEDIR, with huggingface_hub.

The repository is listed at one commit and filtered with the Hub's own `allow_patterns` matching. Every listed
path is checked before anything is fetched: relative, inside DATA_BASEDIR, through no folder link out of it.
Each file lands in a staging folder inside DATA_BASEDIR (same file system), is checked against the listing's
hash (fetch.py: the one check for every Hub download) and is then linked to its name, which never replaces
anything. A file already at a name is never touched: with the listed bytes it counts as already there, with
other bytes it is kept and reported. The staging folder is removed at the end, whatever happened."""

from __future__ import annotations

import errno
import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

from preprocess.checks import fetch
from preprocess.convert.outputs import ready_folder
from preprocess.errors import OutputConflictError, RawDataError
from preprocess.formats.fsutil import file_type, safe_relative
from preprocess.registry import layout

SHOWN = 20  # kept files listed by name; the rest are counted


def default_patterns(registry) -> list[str]:
    """The task files of every group and Train_Data: what `download release` takes without a selection (the
    images are most of the release's size)."""
    groups = sorted({subset.group for subset in registry.subsets})
    return [*(f"{group}/**" for group in groups), "Train_Data/**"]


def subset_patterns(registry, subset) -> list[str]:
    """A subset's task folder, its Train_Data files by the registry's names, and its image folder."""
    patterns = [f"{subset.group}/{subset.folder}/**"]
    patterns += [f"Train_Data/{path}" for path, key in sorted(registry.train_files.items()) if key == subset.key]
    if not subset.is_text:
        patterns.append(f"{layout.image_folder(subset)}/**")
    return patterns


def selection(registry, include: list[str], subsets) -> list[str]:
    """The allow_patterns of a run: the --include patterns and those of each --subset; the default without any."""
    patterns = [*include, *(p for subset in subsets for p in subset_patterns(registry, subset))]
    return list(dict.fromkeys(patterns)) or default_patterns(registry)


@dataclass
class Outcome:
    fetched: int = 0
    fetched_bytes: int = 0
    there: int = 0
    kept: list[tuple[str, str]] = field(default_factory=list)  # (path, how it differs from the release's)

    def summary(self) -> str:
        return (
            f"{self.fetched} files fetched ({self.fetched_bytes} bytes), {self.there} already there, "
            f"{len(self.kept)} kept with other bytes"
        )

    def kept_lines(self) -> list[str]:
        """The kept files, the first SHOWN by name, each with how it differs."""
        lines = [f"  {path}: {what}" for path, what in self.kept[:SHOWN]]
        if len(self.kept) > SHOWN:
            lines.append(f"  ... and {len(self.kept) - SHOWN} more")
        return lines

    def kept_message(self, data_basedir: Path) -> str:
        return (
            f"{len(self.kept)} files already in {data_basedir} differ from the release's and were kept as they are: "
            "this command never overwrites a file there, the release's or yours. To take the release's copy of "
            "one, move yours away, then run again"
        )


def download_release(repo: str, revision: str | None, patterns: list[str], data_basedir: Path, log=print) -> Outcome:
    """Fetch the files of the release `repo` (at `revision`, default its main branch) that `patterns` select and
    DATA_BASEDIR lacks."""
    from huggingface_hub import HfApi, hf_hub_download
    from huggingface_hub.utils import filter_repo_objects

    base = Path(data_basedir)
    staging = base / fetch.STAGING
    _require_staging(staging, base)
    endpoint = os.environ.get("HF_ENDPOINT") or None  # read now: huggingface_hub reads it once, at its import
    api = HfApi(endpoint=endpoint)
    outcome = Outcome()
    try:
        commit = api.dataset_info(repo, revision=revision).sha
        tree = api.list_repo_tree(repo, repo_type="dataset", recursive=True, revision=commit)
        listing = {entry.path: entry for entry in tree if hasattr(entry, "blob_id")}
        chosen = sorted(filter_repo_objects(listing, allow_patterns=patterns))
        if not chosen:
            raise RawDataError(
                f"{repo} (commit {commit}) has no file that {', '.join(patterns)} selects; see its file list on "
                f"https://huggingface.co/datasets/{repo}/tree/main and choose others"
            )
        for path in chosen:  # all of them before any download: a bad path stops the run with nothing written
            _require_target(repo, path, base)
        size, whole = sum(listing[p].size for p in chosen), sum(e.size for e in listing.values())
        log(f"{repo} (commit {commit}): {len(chosen)} files, {size} bytes, of its {len(listing)} files, {whole} bytes")
        for path in chosen:
            entry = listing[path]
            held = _held(base / path, entry)
            if held is None:
                staged = hf_hub_download(
                    repo, path, repo_type="dataset", revision=commit, local_dir=staging, endpoint=endpoint
                )
                fetch._verify(Path(staged), entry, f"{repo}/{path}")
                if _place(Path(staged), base / path, base):
                    outcome.fetched += 1
                    outcome.fetched_bytes += entry.size
                    log(f"downloaded {path} ({entry.size} bytes)")
                    continue
                held = _held(base / path, entry)  # a file came to that name while this one was fetched
            if held is True:
                outcome.there += 1
            else:
                outcome.kept.append((path, held))
    except Exception as exc:
        error = fetch.hub_error(repo, exc)
        if error is None:
            raise
        raise error from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # checked above to be a real folder of DATA_BASEDIR
    return outcome


def _require_staging(staging: Path, base: Path) -> None:
    """The staging folder is removed at the end: it must be a real folder inside DATA_BASEDIR, or absent."""
    if os.path.islink(staging):
        raise OutputConflictError(
            f"{staging} is a link to {os.path.realpath(staging)}: this command stages its downloads there and "
            f"removes that folder at the end, so it must be a real folder inside DATA_BASEDIR {base}. Remove the "
            f"link (rm {staging}: its target is kept), then run again"
        )
    if os.path.lexists(staging) and not os.path.isdir(staging):
        raise OutputConflictError(
            f"{staging} is {file_type(os.lstat(staging).st_mode)}: this command stages its downloads in a folder "
            "of that name and removes it at the end; move that file away, then run again"
        )


def _require_target(repo: str, path: str, base: Path) -> None:
    """A listed path is relative, does not climb out, is not in the staging folder, and its folder resolves
    inside DATA_BASEDIR (ready_folder: no folder link out of it on the way)."""
    relative = safe_relative(path, f"{repo}: the listed file")
    if relative.parts[0] == fetch.STAGING:
        raise OutputConflictError(
            f"{repo}: the listed file {path!r} lies in {fetch.STAGING}/, the staging folder this command removes at "
            "the end; leave it out of the selection (--include)"
        )
    ready_folder(os.path.dirname(base / relative), base, make=False)


def _held(target: Path, entry) -> bool | str | None:
    """What is at `target`: None (nothing), True (a file with the listed bytes), else how it differs."""
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        return f"a link to {os.readlink(target)}, not a file (the release's file is {entry.size} bytes)"
    if not stat.S_ISREG(info.st_mode):
        return f"{file_type(info.st_mode)}, not a file (the release's file is {entry.size} bytes)"
    if info.st_size != entry.size:
        return f"{info.st_size} bytes here, {entry.size} in the release"
    expected, actual = fetch.hub_hashes(target, entry)
    return True if actual == expected else f"{info.st_size} bytes here and in the release, other bytes"


def _place(staged: Path, target: Path, base: Path) -> bool:
    """Move a verified file to its name unless something is there (False then): a hard link never replaces a
    name; where hard links cannot be made, a move after a last look."""
    ready_folder(os.path.dirname(target), base)
    try:
        os.link(staged, target, follow_symlinks=False)
    except FileExistsError:
        return False
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EXDEV, errno.EMLINK):
            raise
        if os.path.lexists(target):
            return False
        shutil.move(staged, target)
        return True
    staged.unlink()
    return True
