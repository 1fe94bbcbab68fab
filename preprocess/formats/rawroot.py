"""The raw root's promise, both ways: nothing is written into it, nothing is read from outside it, and nothing
is opened that is not a regular file.

- `require_apart`: the raw root, DATA_BASEDIR and the results folder are three separate trees (none inside
  another, symbolic links resolved). The CLI and the workflow call it before any job.
- `require_output`: a file a command writes where one of its options says (`--out`, `--report`, ...) is not in
  the raw root, not a link, not a file of DATA_BASEDIR the pipeline did not write.
- `link_out`: a folder link inside DATA_BASEDIR that leads out of it (into the raw root, or anywhere else).
  The top folders being apart is not enough: `DATA_BASEDIR/2D_Images/X -> raw/x` would carry the writes meant
  for X into the raw root. The writer (preprocess/convert/outputs.py) refuses such a folder, and validate
  calls no path under it valid.
- `Boundary.problem` / `Boundary.check`: a raw path is used only when it resolves, links included, to a
  regular file we may read inside the boundary of its source. The boundary is the raw root as configured,
  resolved, and the source's own folder (`<raw_root>/<raw_dir>`), resolved: a user who keeps one download on
  another disk links its folder into the raw root, and that link is the configuration saying where the source
  lives (as raw_root itself says where the raw root lives). Any link further down must stay inside: a
  `6cd606dc52e9.png -> /etc/passwd` is bad input, named, never opened.

The check runs where raw files are listed (rawcheck, for `check`) and where a conversion takes one
(ConversionContext.raw_file). Libraries (nibabel, SimpleITK, pyarrow) open the path again afterwards: a file
swapped for another between the check and that read is not caught; the raw root is the user's own tree.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from preprocess.errors import ConfigError, RawDataError
from preprocess.formats.fsutil import file_type


def _real(path: Path | str) -> Path:
    return Path(os.path.realpath(os.path.abspath(os.fspath(path))))


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def require_apart(raw_root: Path | None, data_basedir: Path, results: Path | None, builds: bool = True) -> None:
    """Raise ConfigError when two of the raw root, DATA_BASEDIR and the results folder overlap (one is, or is
    inside, another), after resolving links. `raw_root` None: a command that reads no raw file. `builds` False:
    a command that writes nothing into DATA_BASEDIR (validate, status, check) may keep its results folder there
    (`validate .` run inside the tree); the raw root is kept apart from both always."""
    folders = [("the raw root", "raw_root", raw_root), ("DATA_BASEDIR", "data_basedir", data_basedir)]
    folders.append(("the results folder", "--results", results))
    named = [(what, key, path, _real(path)) for what, key, path in folders if path is not None]
    for index, (what, key, path, real) in enumerate(named):
        for other_what, other_key, other_path, other_real in named[index + 1 :]:
            if real == other_real:
                relation = "is the same folder as"
            elif _inside(real, other_real):
                relation = "is inside"
            elif _inside(other_real, real):
                relation = "holds"
            else:
                continue
            if not builds and {key, other_key} == {"data_basedir", "--results"}:
                continue
            moved = _CHOOSE["--results" if "--results" in (key, other_key) else "data_basedir"]
            raise ConfigError(
                f"{what} {path} {relation} {other_what} {other_path}{_resolved(path, real, other_path, other_real)}:"
                f" the raw downloads, the built tree and the results must be three separate folders (the pipeline "
                f"never writes into the raw root); choose another {moved}"
            )


def require_outside(raw_root: Path | None, path: Path, what: str) -> None:
    """Raise ConfigError when a file or folder a command writes (`what`: its option) lies in the raw root."""
    if raw_root is not None and _inside(_real(path), _real(raw_root)):
        raise ConfigError(
            f"{what} {path} is inside the raw root {raw_root}: the pipeline never writes into the raw root; "
            f"choose another {what}"
        )


def require_output(
    path: Path, option: str, raw_root: Path | None, data_basedir: Path | None, results: Path | None,
    names: tuple[str, ...] | None = None,
) -> None:  # fmt: skip
    """The one check of a file a command writes where an option says (`--out`, `--report`, `--manifest`, ...),
    before anything is written: ConfigError naming the option and the path, with what to pass instead, when it
    lies in the raw root, is a link, is not a regular file, or is an existing file of DATA_BASEDIR outside the
    results folder (a release task JSON, a built image: files the pipeline never replaces). `names`: the option
    names a folder, and these are the files written into it (the folder is checked as a folder, each file as
    above). A new name in DATA_BASEDIR is allowed; an existing file elsewhere is replaced, atomically (the user
    named it). `raw_root`, `data_basedir`, `results` None: not known to the command, not checked."""
    require_outside(raw_root, path, option)
    if names is None:
        _require_file(path, option, data_basedir, results)
        return
    standing = _standing(path, option)
    if standing not in (None, "a folder"):
        raise ConfigError(f"{option} {path} is {standing}, not a folder; pass another {option}")
    for name in names:
        _require_file(path / name, option, data_basedir, results)


def _standing(path: Path, option: str) -> str | None:
    """What is at `path` in words (file_type), None when nothing is; ConfigError for a link."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(mode):
        raise ConfigError(
            f"{option} {path} is a symbolic link to {_real(path)}: the pipeline writes nothing through or over a "
            f"link; pass the place itself ({_real(path)}) or another name (rm {path} removes the link, its target "
            "is kept)"
        )
    return file_type(mode)


def _require_file(path: Path, option: str, data_basedir: Path | None, results: Path | None) -> None:
    standing = _standing(path, option)
    if standing is None:
        return
    if standing != "a regular file":
        raise ConfigError(f"{option} {path} is {standing}, not a file; pass a new file name as {option}")
    real = _real(path)
    in_tree = data_basedir is not None and _inside(real, _real(data_basedir))
    if in_tree and not (results is not None and _inside(real, _real(results))):
        where = f"in the results folder ({results}) or " if results is not None else ""
        raise ConfigError(
            f"{option} {path} is an existing file of DATA_BASEDIR {data_basedir} (a release file or a built "
            f"output): the pipeline never replaces a file it did not write there. Pass a new file name, or one "
            f"{where}outside DATA_BASEDIR"
        )


def link_out(data_basedir: Path | str, folder: Path | str) -> tuple[str, str] | None:
    """(the link, where it resolves) when `folder`, a path under DATA_BASEDIR, resolves outside the resolved
    DATA_BASEDIR; else None. The link named is the first one on the way down that leads out (a missing part
    counts as a plain folder: the writer makes it). DATA_BASEDIR itself may be a link: the configuration says
    where it lives, as for the raw root. Links that stay inside DATA_BASEDIR are fine."""
    base = os.path.abspath(os.fspath(data_basedir))
    real_base = os.path.realpath(base)
    text = os.path.abspath(os.fspath(folder))
    real = os.path.realpath(text)
    if _inside_text(real, real_base):
        return None
    # Resolved, a path leaves DATA_BASEDIR only at a link: the first prefix that resolves outside is that link.
    current = base
    for part in os.path.relpath(text, base).split(os.sep):
        current = os.path.join(current, part)
        if os.path.islink(current) and not _inside_text(os.path.realpath(current), real_base):
            return current, os.path.realpath(current)
    return text, real


def _inside_text(real: str, real_folder: str) -> bool:
    return real == real_folder or real.startswith(real_folder.rstrip(os.sep) + os.sep)


def link_out_message(link: str, real: str, data_basedir: Path | str) -> str:
    """What a folder link out of DATA_BASEDIR is, and what to do (one line)."""
    return (
        f"{link} is a link to {real}, outside DATA_BASEDIR {data_basedir}: the pipeline writes nothing through a "
        f"link out of DATA_BASEDIR (it could land in the raw root or another tree). Remove the link (rm {link}: "
        "its target is kept), then run again to build a real folder there"
    )


_CHOOSE = {  # what to move, in the words of where it is set
    "data_basedir": "data_basedir (in the config, or --data-basedir)",
    "--results": "results folder (--results; the workflow's is results/ in its working directory)",
}


def _resolved(path, real: Path, other_path, other_real: Path) -> str:
    shown = [f"{p} is {r}" for p, r in ((path, real), (other_path, other_real)) if _real(p) != Path(os.fspath(p))]
    return f" ({'; '.join(shown)})" if shown else ""


class Boundary:
    """Where the raw files of some sources may resolve to: inside the raw root or one of the sources' folders.

    Text paths and plain os calls: `check` looks at every file of a glob (hundreds of thousands for MIMIC-CXR),
    one lstat and one open each; a folder is resolved once for all its files."""

    def __init__(self, raw_root: Path, *source_dirs: Path):
        self.roots = tuple(dict.fromkeys(str(_real(p)) for p in (raw_root, *source_dirs)))
        self._folders: dict[str, str] = {}  # folder as listed -> resolved

    def inside(self, real: str) -> bool:
        return any(real == root or real.startswith(root.rstrip("/") + "/") for root in self.roots)

    def problem(self, path, folder: bool = False) -> str | None:
        """What keeps `path` from being read as a raw file (a folder, when `folder`), or None."""
        return self._judge(os.fspath(path), folder)[0]

    def check(self, path, folder: bool = False) -> Path:
        """`path` resolved (links followed: a hard link made from it links the file itself) when it can be read
        as a raw file (a folder, when `folder`); else RawDataError naming it."""
        problem, real = self._judge(os.fspath(path), folder)
        if problem is not None:
            raise RawDataError(f"raw file {path} {problem} (or leave it out with on_bad_input: skip)")
        return Path(real)

    def _judge(self, text: str, folder: bool) -> tuple[str | None, str | None]:
        """(the problem or None, the resolved path). Nothing outside the boundary is opened; a file inside is
        opened without blocking to see that it can be read."""
        try:
            mode = os.lstat(text).st_mode
        except FileNotFoundError:
            return "does not exist", None
        except OSError as exc:
            return f"cannot be looked at ({exc.strerror or exc})", None
        if stat.S_ISLNK(mode):
            real = os.path.realpath(text)
        else:  # the folder resolved once for all its files
            parent, name = os.path.split(os.path.abspath(text))
            real_parent = self._folders.get(parent)
            if real_parent is None:
                real_parent = self._folders[parent] = os.path.realpath(parent)
            real = os.path.join(real_parent, name)
        if not self.inside(real):
            return (
                f"is a link to {real}, outside the raw root {self.roots[0]}: nothing outside it is read; copy the "
                "file into the raw root (links inside it are fine)"
            ), real
        if stat.S_ISLNK(mode):
            try:
                mode = os.stat(real).st_mode
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    return "is a link loop: fix or delete the link", real
                if exc.errno == errno.ENOENT:
                    return f"is a dangling link (its target {real} does not exist): fix the link or download it", real
                return f"cannot be looked at ({exc.strerror or exc})", real
        if folder:
            return (None if stat.S_ISDIR(mode) else f"is {file_type(mode)}, not a folder"), real
        if not stat.S_ISREG(mode):
            return f"is {file_type(mode)}, not a regular file: replace it with the downloaded file", real
        return _unreadable(real), real


def _unreadable(real: Path) -> str | None:
    """Why a regular file cannot be opened for reading, or None. O_NONBLOCK: a FIFO put in its place since the
    look does not block the open; fstat then tells what was opened."""
    try:
        descriptor = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW)
    except PermissionError:
        return "cannot be read (permission denied): fix its permissions (chmod a+r) or the owner"
    except OSError as exc:
        return f"cannot be opened ({exc.strerror or exc})"
    try:
        mode = os.fstat(descriptor).st_mode
    finally:
        os.close(descriptor)
    return None if stat.S_ISREG(mode) else f"is {file_type(mode)}, not a regular file"
