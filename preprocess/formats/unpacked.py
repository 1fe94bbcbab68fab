"""A downloaded folder as the user unpacked it: where an archive whose members already start with a folder is
extracted into a folder of its own name (a file manager's "extract here" of scene_graph.zip, `unzip -d PNG`
of the CheXpert Plus chunks), its content lies one level deeper than the upstream's layout says:
`scene_graph/scene_graph/*_SceneGraph.json`, `PNG/PNG/train/...`.

The registry says what the top of such a folder holds (a file spec's `holds`: globs, one of which matches
there); `content_folder` finds the level that holds it, the folder itself first. Every reader asks it: the raw
check, the link farm that points an image root at the folder, the scene-graph reader, `need`. A level is
used only when it is a folder inside the raw root (rawroot.Boundary), so a deeper level that is a link out of
the raw root is named, never listed.
"""

from __future__ import annotations

import glob as globlib
import os
from pathlib import Path

from preprocess.errors import RawDataError


def levels(folder: Path) -> tuple[Path, Path]:
    """The folder as named, and the folder of its own name inside it (the one extra level an unpacking adds)."""
    return folder, folder / folder.name


def _holds(folder: Path, patterns) -> bool:
    """Whether one of `patterns` matches below `folder` (stops at the first match: a folder may hold
    hundreds of thousands of files)."""
    escaped = globlib.escape(str(folder))
    return any(next(globlib.iglob(os.path.join(escaped, p), recursive=True), None) is not None for p in patterns)


def content_folder(folder: Path, holds, boundary) -> tuple[Path | None, str | None]:
    """(the level of `folder` that holds one of the globs `holds`, None) or (None, what is wrong, naming the
    folder expected). `boundary` (rawroot.Boundary): a level that is not a folder inside the raw root is not
    listed; its problem is the answer when no level holds the content."""
    problems = []
    for level in levels(folder):
        if not os.path.lexists(level):
            continue
        problem = boundary.problem(level, folder=True)
        if problem is not None:
            problems.append(f"{level} {problem}")
            continue
        if _holds(level, holds):
            return level, None
    if problems:
        return None, "; ".join(problems)
    return None, expected(folder, holds)


def expected(folder: Path, holds) -> str:
    """What a folder without its content lacks, and where it is looked for."""
    return (
        f"{folder} holds no {' or '.join(holds)} (nor does {folder / folder.name}): extract the download again "
        "so that one of them does"
    )


def require(folder: Path, holds, boundary) -> Path:
    """`content_folder`'s level, or RawDataError naming the folder expected."""
    found, problem = content_folder(folder, holds, boundary)
    if found is None:
        raise RawDataError(problem)
    return found
