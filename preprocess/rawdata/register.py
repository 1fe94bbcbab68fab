"""Record what a user's own raw copy holds (MD5s, counts) as a registry override file."""

from __future__ import annotations

from pathlib import Path

import yaml

from preprocess.errors import RawDataError
from preprocess.formats import textparse
from preprocess.formats.fsutil import atomic_write_text, file_digest
from preprocess.formats.npzio import SPLITS, NpzFile
from preprocess.formats.rawroot import Boundary
from preprocess.rawdata.rawcheck import _glob
from preprocess.registry import layout


def observed_files(source, raw_root: Path) -> tuple[list[dict], list[str]]:
    """The source's file specs with MD5s and counts measured on the copy at hand.

    Files the copy lacks keep their registry expectations; their ids are returned as the second value.
    """
    base = layout.raw_dir(raw_root, source)
    return _observed(source, base, Boundary(raw_root, base))


def _observed(source, base: Path, boundary: Boundary) -> tuple[list[dict], list[str]]:
    specs, absent = [], []
    for spec in source.files:
        entry, found = _observed_spec(spec, base, boundary)
        if not found:
            absent.append(spec.id)
        # an override replaces the whole spec: what the registry says beyond names and sums is kept (the split
        # that needs the file, what it holds, the content of a folder, a shard set, that upstream lacks it)
        split = spec.split if spec.split != "test" else None
        kept = {"split": split, "about": spec.about, "holds": list(spec.holds), "shards": spec.shards}
        kept["unpublished"] = spec.unpublished
        entry.update({key: value for key, value in kept.items() if value})
        specs.append(entry)
    return specs, absent


def _observed_spec(spec, base: Path, boundary: Boundary) -> tuple[dict, bool]:
    """(the spec as this copy holds it, whether the copy holds it). A file is hashed only where it can be read
    as a raw file: a link out of the raw root, a FIFO or a device is named (RawDataError), never opened."""
    if spec.glob:
        count = len(_glob(base, spec.glob))
        return {"id": spec.id, "glob": spec.glob, "min_count": count or spec.min_count}, count > 0
    found = next((p for p in spec.paths if (base / p).exists()), None)
    if found is None:
        entry = {"id": spec.id, "path": list(spec.paths)}
        if spec.md5:
            entry["md5"] = spec.md5
        if spec.npz:
            entry["npz"] = {k: v for k, v in spec.npz.items() if k != "size"}
    elif spec.holds and (base / found).is_dir():  # a folder has no checksum: its content is what the check looks for
        entry = {"id": spec.id, "path": found}
    else:
        real = boundary.check(base / found)
        entry = {"id": spec.id, "path": found, "md5": file_digest(real, "md5")}
        if spec.npz:
            entry["npz"] = _observed_npz(real, spec.npz)
    return entry, found is not None


def _observed_npz(path: Path, spec: dict) -> dict:
    """The npz description with the split sizes this copy holds (a subset copy, or the demo's)."""
    with NpzFile(path) as archive:
        counts = {split: archive.info(f"{split}_images").shape[0] for split in SPLITS}
    return {"dims": spec["dims"], "channels": spec["channels"], "labels": spec["labels"], "counts": counts}


def register_source(registry, settings, source_id: str, out: Path) -> str:
    source = registry.source(source_id)
    document = {"sources": {}}
    if out.exists():
        document = textparse.read_yaml(out) or {"sources": {}}
    files, absent = observed_files(source, settings.raw_root)
    if len(absent) == len(files):
        raise RawDataError(f"{source_id}: nothing of it is under {layout.raw_dir(settings.raw_root, source)}")
    document.setdefault("sources", {})[source_id] = {"files": files}
    atomic_write_text(out, yaml.safe_dump(document, sort_keys=True))
    note = f" (absent, kept as the registry expects them: {', '.join(absent)})" if absent else ""
    return f"registered {source_id} in {out}{note}; set registry_overrides: {out} in your config"
