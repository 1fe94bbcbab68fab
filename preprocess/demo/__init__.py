"""The embedded demo: a tiny raw root, a tiny release tree and the config that builds them."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path, PurePosixPath

import yaml

from preprocess import layout
from preprocess.demo.sources import WRITERS
from preprocess.errors import PreprocessError
from preprocess.register import observed_files
from preprocess.registry import Registry, load_registry

MARKER = ".medheb-demo"
# The demo's release tree as literal data: task JSONs (and Train_Data JSONL) in the benchmark's record shapes,
# whose image paths are written out by hand from the reference names, never produced by the naming code.
RELEASE = Path(__file__).parent / "release"


def fingerprint() -> str:
    """A digest of what the demo is made from (its writers, release files and the registry): a demo folder
    written by another version of the package is written again."""
    digest = hashlib.sha256()
    package = Path(__file__).parents[1]
    for path in sorted([*Path(__file__).parent.rglob("*.py"), *RELEASE.rglob("*"), *package.glob("registry/*")]):
        if path.is_file():
            digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def write_demo(directory: Path, force: bool = False) -> Path:
    """Write DIR/raw, DIR/DATA_BASEDIR (task JSONs only) and DIR/registry-overrides.yaml, atomically; an
    existing demo folder of this version is kept as it is."""
    directory = Path(directory).resolve()
    marker = directory / MARKER
    if marker.exists() and not force and marker.read_text(encoding="utf-8").split()[-1] == fingerprint():
        return directory
    if directory.exists() and any(directory.iterdir()) and not (directory / MARKER).exists():
        raise PreprocessError(f"{directory} exists and is not a demo folder; choose an empty or new folder")
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=directory.parent))
    try:
        _write(staging)
        if directory.exists():
            shutil.rmtree(directory)
        os.replace(staging, directory)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return directory


def _write(out: Path) -> None:
    registry = load_registry()
    raw_root, data_basedir = out / "raw", out / "DATA_BASEDIR"
    referenced: dict[str, list[str]] = {}
    overrides = {}
    for source_id, writer in WRITERS.items():
        source = registry.source(source_id)
        referenced.update(writer(layout.raw_dir(raw_root, source)))
        overrides[source_id] = {"files": observed_files(source, raw_root)[0]}
    (out / "registry-overrides.yaml").write_text(
        "# The demo's own expectations: its copies are tiny, so counts and MD5s differ from the real ones.\n"
        + yaml.safe_dump({"sources": overrides}, sort_keys=True), encoding="utf-8")
    _write_release(registry, data_basedir, referenced)
    (out / MARKER).write_text(f"written by python -m preprocess demo, version {fingerprint()}\n", encoding="utf-8")


def _write_release(registry: Registry, data_basedir: Path, referenced: dict[str, list[str]]) -> None:
    literal = sorted(p.relative_to(RELEASE) for p in RELEASE.rglob("*.json*"))
    for relative in literal:
        (data_basedir / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(RELEASE / relative, data_basedir / relative)
    for key, images in sorted(referenced.items()):
        subset = registry.subset(key)
        for task in subset.tasks:
            name = task.file
            if Path(subset.group, subset.folder, name) in literal:
                continue
            records = _records(task.parser, _rebase(images, subset.image_root, task.image_root)) if images else _text_records()
            path = layout.task_dir(data_basedir, subset) / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(records, indent=1) + "\n", encoding="utf-8")


def _rebase(images: list, subset_root: str | None, task_root: str | None) -> list:
    """Paths relative to the subset folder, made relative to the task's own image root."""
    if subset_root is None or task_root is None:
        return images
    base, target = PurePosixPath(subset_root), PurePosixPath(task_root)

    def move(path):
        if isinstance(path, list):
            return [move(p) for p in path]
        full = base / path
        return str(full.relative_to(target)) if full.is_relative_to(target) else path

    return [move(p) for p in images if _under(base / _first(p), target)]


def _first(path):
    return path[0] if isinstance(path, list) else path


def _under(path: PurePosixPath, root: PurePosixPath) -> bool:
    return path.is_relative_to(root)


def _records(parser: str, images: list[str]) -> list[dict]:
    """Records shaped like the benchmark's: image->text, image->image, text->image."""
    if parser.endswith("t2i"):
        return [{"qry_inst": "Find the image that matches the description:", "qry_text": f"finding {n}",
                 "qry_img_path": "", "tgt_text": ["" for _ in images], "tgt_img_path": images}
                for n in range(2)]
    if "i2i" in parser:
        return [{"qry_inst": "Find the same category image with the provided image:", "qry_text": "",
                 "qry_img_path": image, "tgt_text": ["" for _ in images[:3]], "tgt_img_path": images[:3]}
                for image in images]
    return [{"qry_inst": "Classify the image:", "qry_text": "", "qry_img_path": image,
             "tgt_text": ["normal", "abnormal"], "qry_modality": "image"} for image in images]


def _text_records() -> list[dict]:
    return [{"qry_inst": "Find the answer to the question:", "qry_text": "What helps dehydration?",
             "qry_img_path": "", "tgt_text": ["Drink water.", "Sleep."]}]
