"""`medheb download release`: the benchmark's release (task files, Train_Data, the images of chosen subsets)
from its Hugging Face dataset into DATA_BASEDIR, with huggingface_hub.

The repository is listed at one commit and filtered with the Hub's own `allow_patterns` matching. Every listed
path is checked before anything is fetched: relative, inside DATA_BASEDIR, through no folder link out of it,
and the listing a tree of files (no path both a file and a folder, no name of the pipeline's temporaries:
partfile.check_listing). Each file comes through fetch.py's one bounded stream (its own part
`.<name>.medheb-download.part`, resumed only when a download of ours started it, opened without following a link, the
listed size its bound, the config's deadline), is checked against the listing's hash and is then given its
name without replacing anything. A file already at a name is never touched: with the listed bytes it counts
as already there, with other bytes it is kept and reported."""

from __future__ import annotations

import functools
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from preprocess.convert.outputs import ready_folder
from preprocess.errors import RawDataError
from preprocess.formats.fsutil import file_type, safe_relative
from preprocess.rawdata import fetch
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


def download_release(
    repo: str, revision: str | None, patterns: list[str], data_basedir: Path, bounds=None, log=print
) -> Outcome:
    """Fetch the files of the release `repo` (at `revision`, default its main branch) that `patterns` select and
    DATA_BASEDIR lacks, each within `bounds` (fetch.Limits; None: the schema's defaults)."""
    from huggingface_hub import hf_hub_url
    from huggingface_hub.utils import build_hf_headers, filter_repo_objects

    base = Path(data_basedir)
    endpoint = os.environ.get("HF_ENDPOINT") or None  # read now: huggingface_hub reads it once, at its import
    commit, listing = fetch.hub_listing(repo, endpoint, revision)
    chosen = sorted(filter_repo_objects(listing, allow_patterns=patterns))
    if not chosen:
        raise RawDataError(
            f"{repo} (commit {commit}) has no file that {', '.join(patterns)} selects; see its file list on "
            f"https://huggingface.co/datasets/{repo}/tree/main and choose others"
        )
    for path in chosen:  # all of them before any download: a bad path stops the run with nothing written
        ready_folder(os.path.dirname(base / safe_relative(path, f"{repo}: the listed file")), base, make=False)
    size, whole = sum(listing[p].size for p in chosen), sum(e.size for e in listing.values())
    log(f"{repo} (commit {commit}): {len(chosen)} files, {size} bytes, of its {len(listing)} files, {whole} bytes")
    headers, outcome = build_hf_headers(), Outcome()
    for path in chosen:
        entry, target = listing[path], base / path
        held = _held(target, entry)
        if held is None:
            url = hf_hub_url(repo, path, repo_type="dataset", revision=commit, endpoint=endpoint)
            fetch.fetch_file(
                url, target, base, bounds or fetch.limits(), size=entry.size,
                check=functools.partial(fetch.hub_problem, entry=entry), headers=headers,
                what=f"{repo}/{path}", denied=fetch.denied(repo), log=log,
            )  # fmt: skip
            outcome.fetched += 1
            outcome.fetched_bytes += entry.size
            log(f"downloaded {path} ({entry.size} bytes)")
        elif held is True:
            outcome.there += 1
        else:
            outcome.kept.append((path, held))
    return outcome


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
