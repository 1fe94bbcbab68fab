"""An output that is already in DATA_BASEDIR with other bytes than this build makes: the release's own file (its
images were written by another encoder) or an earlier build's. It is decoded and compared with ours, and kept as
it is either way; `overwrite_existing: true` replaces it instead, saying so.

The manifest row of a kept file has the kind KEPT and the detail `<size>:<sha256> <verdict>`: the size and digest
of the file in place (a resumed job checks that it is unchanged and never removes it) and SAME or `differs: ...`
(shapes and dtypes, how many pixels differ, the largest difference). The summary gathers these rows
(preprocess/reports/release.py)."""

from __future__ import annotations

import io
import os

import numpy as np

KEPT = "kept"  # the manifest kind of a file that was there with other bytes and stays as it is
SAME = "same pixels"
DIFFERS = "differs"


def verdict(path: str, ours) -> str:
    """SAME, or `differs: ...`, comparing the decoded file at `path` with `ours` (an array, or the bytes of an
    image this build would write as they are)."""
    mine = ours if isinstance(ours, np.ndarray) else _decode(io.BytesIO(ours))
    if not isinstance(mine, np.ndarray):
        return f"{DIFFERS}: other bytes, and this build's file is not an image to compare by pixels"
    theirs = read_in_place(path)
    if not isinstance(theirs, np.ndarray):
        return f"{DIFFERS}: the file in place {theirs}"
    if theirs.ndim == 3 and mine.ndim == 2 and _grey(theirs):
        theirs = theirs[..., 0]  # a grey image stored as RGB (or a grey palette) holds the same values
    if theirs.shape != mine.shape or theirs.dtype != mine.dtype:
        return f"{DIFFERS}: in place {_form(theirs)}, ours {_form(mine)}"
    gap = np.abs(theirs.astype(np.int64) - mine.astype(np.int64))
    per_pixel = gap.max(axis=-1) if gap.ndim == 3 else gap
    count = int(np.count_nonzero(per_pixel))
    if count == 0:
        return SAME
    return f"{DIFFERS}: {count} of {per_pixel.size} pixels, largest difference {int(gap.max())} ({_form(mine)})"


def not_a_file(what: str, overwrite: bool) -> str:
    """The verdict of an output whose name holds no regular file (`what`: a link and its target, a folder, a
    FIFO...): nothing is read from it, nothing written over it, and the build goes on with its other files."""
    if overwrite:  # only a folder is left in place under overwrite_existing: replacing it would lose what it holds
        return f"{DIFFERS}: {what} in its place, which overwrite_existing never replaces: move it away"
    return f"{DIFFERS}: {what} in its place, not a file: kept as it is, nothing read from it"


def not_a_file_detail(judged: str) -> str:
    """The manifest detail of such an output: no size or digest (nothing was read), then the verdict."""
    return f"{UNREAD} {judged}"


UNREAD = "-"  # the detail's first field where the thing in place was not read (a resumed job: is it still there)


def read_in_place(path) -> np.ndarray | str:
    """The pixels of the regular file at `path`, or why there are none ('is not an image Pillow decodes', ...).
    Never follows a link and never waits on a FIFO: what stands in place is the release's, not ours to trust."""
    from preprocess.formats.fsutil import open_regular

    try:
        with open_regular(path, follow_links=False) as handle:
            return _decode(handle)
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"


def _decode(handle) -> np.ndarray | str:
    from PIL import Image, UnidentifiedImageError

    from preprocess.formats.imagecheck import BOMB, pixel_limit_errors

    try:
        with pixel_limit_errors(), Image.open(handle) as image:
            if image.mode == "P":
                image = image.convert("RGBA" if "transparency" in image.info else "RGB")
            return np.asarray(image)
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        return f"declares {BOMB}"
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError):
        return "is not an image Pillow decodes"


def _grey(pixels: np.ndarray) -> bool:
    return pixels.shape[-1] == 3 and bool(
        (pixels[..., 0] == pixels[..., 1]).all() and (pixels[..., 1] == pixels[..., 2]).all()
    )


def _form(pixels: np.ndarray) -> str:
    return f"{'x'.join(map(str, pixels.shape))} {pixels.dtype}"


def kept_detail(path: str, judged: str) -> str:
    """The manifest detail of a kept file: its size and SHA-256, then the verdict."""
    from pathlib import Path

    from preprocess.formats.fsutil import file_digest

    return f"{os.stat(path).st_size}:{file_digest(Path(path), 'sha256')} {judged}"
