"""MedMNIST npz archives to PNG files: 2D images into class folders, 3D volumes into slice series.

2D params (kind npz_unpack_2d):
  flag        file id of the archive in the source (bloodmnist, ...)
  splits      splits to unpack (default [test]: the benchmark's image roots hold the test split)
  labels      the label dictionary, index -> class name
  split_dir   folder of one split, relative to the subset folder (default output_images/{split})
  folder      class folder template (default "{label}": the class name)
  name        file name template (default "{split}{index}_{labels}.png", the naming of `medmnist save`)
  no_finding  multi-label archives (ChestMNIST): folder of images with no positive label; an image with
              positive labels is hard-linked into the folder of each of them
3D params (kind npz_slices_3d):
  flag, splits  as above; every volume becomes {split}_slides/sample_{index:05d}/slice_{k:02d}.png along
                axis 0, and {split}_labels.csv holds sample_index,label_index
"""

from __future__ import annotations

import multiprocessing
import os
import time
from pathlib import Path

import numpy as np

from preprocess.convert.base import write_output
from preprocess.errors import RawDataError
from preprocess.fsutil import atomic_write_text
from preprocess.npzio import NpzFile, structure_problems
from preprocess.pngio import encode_png

# Arrays of the split being written, shared with forked workers (read-only).
_SHARED: dict = {}


def _archive(ctx) -> tuple[Path, dict]:
    source = ctx.source(ctx.params.get("source"))
    spec = source.file(ctx.params["flag"])
    path = ctx.raw_dir(source.id) / spec.paths[0]
    problems = structure_problems(path, spec.npz)
    if problems:
        raise RawDataError(f"{path} does not match the registry: " + "; ".join(problems))
    return path, spec.npz


def plan(ctx) -> list[tuple[str, int]]:
    _, spec = _archive(ctx)
    return [(split, index) for split in ctx.params.get("splits", ["test"]) for index in range(spec["counts"][split])]


def _chunks(indices: list[int], workers: int) -> list[list[int]]:
    """At least 4 chunks per worker, and at most ~512 images per chunk (steady progress lines)."""
    pieces = max(1, min(len(indices), max(workers * 4, -(-len(indices) // 512))))
    return [chunk.tolist() for chunk in np.array_split(np.array(indices, dtype=np.int64), pieces) if len(chunk)]


def _run_split(ctx, path: Path, split: str, indices: list[int], chunk_function) -> None:
    """Load one split and run chunk_function over index chunks; with several workers, overlap the
    (serial) inflation of the images with the encoding by forked workers that wait for their images."""
    _SHARED["placement"] = (ctx, split)
    _SHARED.pop("ready", None)
    chunks = _chunks(indices, ctx.workers) if indices else []
    with NpzFile(path) as archive:
        _SHARED["labels"] = archive.array(f"{split}_labels")
        if ctx.workers <= 1 or len(chunks) <= 1:
            _SHARED["images"] = archive.array(f"{split}_images")
            for chunk in chunks:
                ctx.add_records(chunk_function(chunk))
                ctx.advance(len(chunk))
            return
        context = multiprocessing.get_context("fork")
        ready = context.Value("q", 0, lock=False)
        running = {}

        def progress(images: np.ndarray, nbytes: int) -> None:
            if not running:  # the shared array exists now: fork the workers
                _SHARED.update(images=images, ready=ready)
                running["pool"] = context.Pool(min(ctx.workers, len(chunks)))
                running["results"] = running["pool"].imap(chunk_function, chunks, chunksize=1)
            item_bytes = max(1, images[0].nbytes) if len(images) else 1
            ready.value = nbytes // item_bytes

        try:
            archive.inflate_into(f"{split}_images", progress)
            for chunk, records in zip(chunks, running["results"], strict=True):
                ctx.add_records(records)
                ctx.advance(len(chunk))
        finally:
            if running:
                running["pool"].terminate()
                running["pool"].join()


def _wait_for(index: int) -> None:
    """In a worker: block until the parent has inflated image `index`."""
    ready = _SHARED.get("ready")
    while ready is not None and ready.value <= index:
        time.sleep(0.002)


class Unpack2D:
    """npz_unpack_2d: one PNG per image, in the folder of its class."""

    plan = staticmethod(plan)

    @staticmethod
    def build(ctx, items) -> None:
        path, spec = _archive(ctx)
        for split in ctx.params.get("splits", ["test"]):
            indices = [index for item_split, index in items if item_split == split]
            _run_split(ctx, path, split, indices, _write_2d_chunk)
            if ctx.shard == 0:
                _write_label_manifest(ctx, split, spec)


def _placements(ctx, split: str, index: int, label_row: np.ndarray) -> list[str]:
    """Relative paths (under the split folder) where one image belongs."""
    params = ctx.params
    names = params["labels"]
    values = "_".join(str(int(v)) for v in label_row)
    file_name = params.get("name", "{split}{index}_{labels}.png").format(split=split, index=index, labels=values)
    folder = params.get("folder", "{label}")
    if len(label_row) == 1:
        classes = [names[int(label_row[0])]]
    else:
        classes = [names[i] for i, value in enumerate(label_row) if value] or [params.get("no_finding", "no finding")]
    return [
        f"{folder.format(label=c, index=names.index(c) if c in names else -1).replace('/', '-')}/{file_name}"
        for c in classes
    ]


def _split_dir(ctx, split: str) -> Path:
    return ctx.subset_dir / ctx.params.get("split_dir", "output_images/{split}").format(split=split)


def _write_2d_chunk(indices: list[int]) -> list[tuple[str, str, str]]:
    ctx, split = _SHARED["placement"]
    images, labels = _SHARED["images"], _SHARED["labels"]
    base = _split_dir(ctx, split)
    data_basedir, overwrite = ctx.settings.data_basedir, ctx.settings.overwrite_existing
    records = []
    _wait_for(indices[-1])
    for index in indices:
        data = encode_png(images[index])
        first, *others = _placements(ctx, split, index, labels[index])
        records.append(write_output(base / first, data, data_basedir, overwrite))
        for other in others:  # multi-label: the same file in each positive class folder
            target = base / other
            records.append(_link(base / first, target, data_basedir, overwrite, records[-1][2]))
    return records


def _link(existing: Path, target: Path, data_basedir: Path, overwrite: bool, detail: str):
    relative = str(target.relative_to(data_basedir))
    if target.exists() and os.path.samefile(existing, target):
        return relative, "file", detail
    if target.exists() and not overwrite:
        return write_output(target, existing.read_bytes(), data_basedir, overwrite)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.link")
    tmp.unlink(missing_ok=True)
    os.link(existing, tmp)
    os.replace(tmp, target)
    return relative, "file", detail


def _write_label_manifest(ctx, split: str, spec: dict) -> None:
    """split,index,path,labels for every image of the split (one row per place a multi-label image is in)."""
    labels = _SHARED["labels"]
    rows = ["split,index,path,labels"]
    for index in range(spec["counts"][split]):
        values = "_".join(str(int(v)) for v in labels[index])
        rows += [f'{split},{index},"{p}",{values}' for p in _placements(ctx, split, index, labels[index])]
    target = _split_dir(ctx, split).parent / f"labels_{split}.csv"
    atomic_write_text(target, "\n".join(rows) + "\n")
    ctx.written.append((str(target.relative_to(ctx.settings.data_basedir)), "labels", str(len(rows) - 1)))


class Slices3D:
    """npz_slices_3d: every volume of a split as a folder of 2D slices along axis 0."""

    plan = staticmethod(plan)

    @staticmethod
    def build(ctx, items) -> None:
        path, _ = _archive(ctx)
        for split in ctx.params.get("splits", ["test"]):
            indices = [index for item_split, index in items if item_split == split]
            _run_split(ctx, path, split, indices, _write_3d_chunk)
            if ctx.shard == 0:
                labels = _SHARED["labels"]
                rows = ["sample_index,label_index"] + [f"{i},{int(labels[i][0])}" for i in range(len(labels))]
                target = ctx.subset_dir / f"{split}_labels.csv"
                atomic_write_text(target, "\n".join(rows) + "\n")
                ctx.written.append((str(target.relative_to(ctx.settings.data_basedir)), "labels", str(len(labels))))


def _write_3d_chunk(indices: list[int]) -> list[tuple[str, str, str]]:
    ctx, split = _SHARED["placement"]
    volumes = _SHARED["images"]
    base = ctx.subset_dir / f"{split}_slides"
    data_basedir, overwrite = ctx.settings.data_basedir, ctx.settings.overwrite_existing
    records = []
    _wait_for(indices[-1])
    for index in indices:
        folder = base / f"sample_{index:05d}"
        for k, plane in enumerate(volumes[index]):
            records.append(write_output(folder / f"slice_{k:02d}.png", encode_png(plane), data_basedir, overwrite))
    return records
