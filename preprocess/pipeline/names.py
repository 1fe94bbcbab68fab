"""Subsets and sources by the name a user types: an unknown one answered with the names it may mean."""

from __future__ import annotations

import re
from pathlib import Path

from preprocess.errors import PreprocessError, RegistryError, quoted


def _normal(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def suggestions(registry, name: str) -> list[str]:
    """Names that `name` means when case, '-', '_' and '.' are ignored: subsets, sources, MedMNIST flags."""
    key = _normal(name)
    found = [f"{s.key} (subset)" for s in registry.subsets if key in (_normal(s.key), _normal(s.folder))]
    for source in registry.sources.values():
        stems = {re.sub(r"_\d+$", "", Path(f.label).name.split(".")[0]) for f in source.files if "*" not in f.label}
        if key == _normal(source.id):
            found.append(f"{source.id} (source)")
        elif key in {_normal(stem) for stem in stems}:
            found.append(f"{source.id} (source; {name.lower()} is one of its files)")
    return found


def _unknown(registry, name: str, exc: Exception) -> PreprocessError:
    hits = suggestions(registry, name)
    if not hits:
        return exc if isinstance(exc, PreprocessError) else PreprocessError(str(exc))
    return PreprocessError(f"unknown name {quoted(name)}: did you mean {' or '.join(hits)}?")


def subset(registry, name: str):
    try:
        return registry.subset(name)
    except RegistryError as exc:
        if "ambiguous" in str(exc):
            raise
        raise _unknown(registry, name, exc) from None


def source(registry, name: str):
    try:
        return registry.source(name)
    except RegistryError as exc:
        raise _unknown(registry, name, exc) from None
