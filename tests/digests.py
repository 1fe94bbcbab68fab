"""The digest of a tree, for the tests that compare two builds or a tree before and after a command."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def tree_digests(base: Path, links_from: Path | None = None) -> dict[str, str]:
    """Every file under base by its path below base: the SHA-256 of a regular file's bytes, "link:" and the target
    of a link (not followed; relative to `links_from` when given, so two builds in two folders compare equal)."""
    found = {}
    for path in sorted(base.rglob("*")):
        relative = str(path.relative_to(base))
        if path.is_symlink():
            target = os.readlink(path)
            found[relative] = "link:" + (target if links_from is None else os.path.relpath(target, links_from))
        elif path.is_file():
            found[relative] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found
