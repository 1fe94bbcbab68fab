"""Record what a user's own raw copy holds (MD5s, counts) as a registry override file."""

from __future__ import annotations

from pathlib import Path

import yaml

from preprocess import layout
from preprocess.errors import RawDataError
from preprocess.fsutil import atomic_write_text, file_digest
from preprocess.rawcheck import _glob


def observed_files(source, raw_root: Path) -> list[dict]:
    """The source's file specs with MD5s and counts measured on the copy at hand."""
    base = layout.raw_dir(raw_root, source)
    specs = []
    for spec in source.files:
        if spec.glob:
            count = len(_glob(base, spec.glob))
            if count == 0:
                raise RawDataError(f"{source.id}: nothing under {base} matches {spec.glob}")
            specs.append({"id": spec.id, "glob": spec.glob, "min_count": count})
            continue
        found = next((p for p in spec.paths if (base / p).exists()), None)
        if found is None:
            raise RawDataError(f"{source.id}: none of {list(spec.paths)} exists under {base}")
        specs.append({"id": spec.id, "path": found, "md5": file_digest(base / found, "md5")})
    return specs


def register_source(registry, settings, source_id: str, out: Path) -> str:
    source = registry.source(source_id)
    document = {"sources": {}}
    if out.exists():
        document = yaml.safe_load(out.read_text(encoding="utf-8")) or {"sources": {}}
    document.setdefault("sources", {})[source_id] = {"files": observed_files(source, settings.raw_root)}
    text = yaml.safe_dump(document, sort_keys=True)
    atomic_write_text(out, text)
    return f"registered {source_id} in {out}; set registry_overrides: {out} in your config"
