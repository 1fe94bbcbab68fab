"""MedMNIST npz archives to PNG files: 2D images into class folders, 3D volumes into slice series.

Every output name is a template of the subset's registry entry (fields in preprocess/registry/kinds.yaml).
2D (kind npz_unpack_2d): one PNG per image, `split_dir`/`folder`/`name`; pixels as stored (uint8, L or RGB).
  Multi-label archives (ChestMNIST): an image with positive labels is hard-linked into the folder of each of
  them, one with none goes to the `no_finding` folder. `label_table`, when given, lists every placed file.
3D (kind npz_slices_3d): every volume of the `splits` becomes a folder `series` of `slice` PNGs along axis 0
  (at most `max_slices`, evenly spaced when there are more); uint8 slices as stored, other dtypes min-max
  scaled per slice to 0..255 and truncated; `labels_csv` (sample_index,label_index) for every `label_splits`.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import time
from pathlib import Path

import numpy as np

from preprocess.convert.executor import run_items
from preprocess.convert.outputs import Data, HardLink, Png, Result
from preprocess.errors import PreprocessError, RawDataError
from preprocess.formats.npzio import NpzFile, structure_problems
from preprocess.formats.pngio import encode_filtered, sub_filter

# The split being written (its context, name, arrays, inflation progress), shared with forked helpers.
_SHARED: dict = {}


def _archive(ctx) -> tuple[Path, dict]:
    source = ctx.source(ctx.params.get("source"))
    spec = source.file(ctx.params["flag"])
    path = ctx.raw_file(ctx.raw_dir(source.id) / spec.paths[0])
    problems = structure_problems(path, spec.npz)
    if problems:
        raise RawDataError(f"{path} does not match the registry: " + "; ".join(problems))
    return path, spec.npz


def plan(ctx) -> list[tuple[str, int]]:
    _, spec = _archive(ctx)
    return [(split, index) for split in ctx.params.get("splits", ["test"]) for index in range(spec["counts"][split])]


def _chunks(indices: list[int], workers: int, item_bytes: int) -> list[list[int]]:
    """Small chunks keep the workers evenly loaded to the end: 8 per worker at least, and at most 64 images
    or 1 MiB of pixels (6 images at 224 px RGB), so that helpers start as soon as the first MiB is inflated."""
    largest = max(1, min(64, (1 << 20) // max(1, item_bytes)))
    pieces = max(1, min(len(indices), max(workers * 8, -(-len(indices) // largest))))
    return [chunk.tolist() for chunk in np.array_split(np.array(indices, dtype=np.int64), pieces) if len(chunk)]


def _run_split(ctx, path: Path, split: str, indices: list[int], produce, labels_done=None) -> None:
    """Load one split and write produce's outputs for its images; call labels_done() once its labels are read.

    With N workers, N - 1 forked helpers start on the first images while this process is still inflating the
    rest into shared memory (one deflate stream cannot be split); then this process takes chunks too.
    """
    with NpzFile(path) as archive:
        info = archive.info(f"{split}_images")
        item_bytes = int(np.prod(info.shape[1:], dtype=np.int64)) * info.dtype.itemsize
        labels = archive.array(f"{split}_labels")
        bad = bad_labels(ctx, path, split, labels, indices)
        indices = [index for index in indices if index not in bad]
        _SHARED.update(ctx=ctx, split=split, labels=labels, ready=None, bad=bad)

        def prepare(start) -> None:
            if start is None:  # one worker: the whole array at once
                _SHARED["images"] = archive.array(f"{split}_images")
            else:
                _SHARED["ready"] = multiprocessing.get_context("fork").Value("q", 0, lock=False)
                archive.inflate_into(f"{split}_images", lambda images, nbytes: _inflated(images, nbytes, start))
            if labels_done is not None:  # while the helpers are busy with images
                labels_done()

        def _inflated(images: np.ndarray, nbytes: int, start) -> None:
            _SHARED["images"] = images
            _SHARED["ready"].value = nbytes // max(1, item_bytes)
            start()  # forks the helpers at the first call: the shared array exists now

        chunks = _chunks(indices, ctx.workers, item_bytes)
        run_items(ctx, indices, produce, chunks, prepare, source=str(path))


def label_problems(labels: np.ndarray, names: list[str]) -> dict[int, str]:
    """{row: what is wrong} for the label rows outside the registry's label set: one value per row is a class
    index 0..len(names)-1, several values per row (multi-label) are each 0 or 1."""
    if labels.size == 0:
        return {}
    values = labels.reshape(len(labels), -1)
    multi = values.shape[1] > 1
    highest = 1 if multi else len(names) - 1
    rows = np.flatnonzero(((values < 0) | (values > highest)).any(axis=1)).tolist()
    allowed = (
        "0 or 1 (multi-label)" if multi else f"a class index 0..{highest} ({len(names)} class names in the registry)"
    )
    return {row: f"label {values[row].tolist()} is not {allowed}" for row in rows}


def bad_labels(ctx, path: Path, split: str, labels: np.ndarray, indices) -> set[int]:
    """The rows whose labels are outside the label set: each one is bad input of its image (named by archive,
    key and row), stopping the job or skipped and counted as on_bad_input says."""
    problems = label_problems(labels, ctx.params["labels"])
    for row in sorted(set(indices) & problems.keys()):
        item = f"{path}[{split}_labels] row {row}"
        with ctx.guard(item):
            raise RawDataError(f"{item}: {problems[row]}; the archive is not the published one, download it again")
    return set(problems)


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
            wanted = ctx.shard == 0 and "label_table" in ctx.params
            manifest = (lambda split=split: _write_label_manifest(ctx, split, spec)) if wanted else None
            _run_split(ctx, path, split, indices, _produce_2d, manifest)


class _Placer:
    """Where each image of one split belongs (relative to the split folder), from the registry's templates."""

    def __init__(self, params: dict, split: str):
        self.split = split
        self.names = params["labels"]
        self.name_template = params["name"]
        self.no_finding = params.get("no_finding")
        template = params["folder"]
        self.folders = {
            name: template.format(label=name, index=number).replace("/", "-") for number, name in enumerate(self.names)
        }
        if self.no_finding is not None:
            self.folders.setdefault(self.no_finding, template.format(label=self.no_finding, index=-1).replace("/", "-"))
        self._by_labels: dict[tuple[int, ...], tuple[str, list[str]]] = {}  # label values -> text, folders

    def __call__(self, index: int, values: tuple[int, ...]) -> list[str]:
        """The places of image `index` whose label values are `values` (a tuple of ints)."""
        labels, folders = self.labels(values)
        file_name = self.name_template.format(split=self.split, index=index, labels=labels)
        return [f"{folder}/{file_name}" for folder in folders]

    def labels(self, values: tuple[int, ...]) -> tuple[str, list[str]]:
        """The label values as file names write them ("0_1_0") and the class folders they place an image in."""
        if values in self._by_labels:
            return self._by_labels[values]
        if len(values) == 1:
            if not 0 <= values[0] < len(self.names):
                raise RawDataError(f"label {values[0]} is outside the {len(self.names)} class names of the registry")
            classes = [self.names[values[0]]]
        else:
            classes = [self.names[i] for i, value in enumerate(values) if value] or [self._no_finding(values)]
        self._by_labels[values] = "_".join(str(v) for v in values), [self.folders[c] for c in classes]
        return self._by_labels[values]

    def _no_finding(self, values: tuple[int, ...]) -> str:
        if self.no_finding is None:
            raise PreprocessError(
                f"an image has no positive label ({values}) and the registry entry gives no no_finding folder; "
                "add params.no_finding to the subset"
            )
        return self.no_finding


def _split_dir(ctx, split: str) -> Path:
    return ctx.subset_dir / ctx.params["split_dir"].format(split=split)


def _produce_2d(ctx, indices: list[int]):
    """One Result per image: the PNG in its class folder (multi-label: hard links in the other folders).

    The images' rows are PNG-filtered a block at a time (sub_filter), each image deflated as its item is
    written: for 28 px images the filter's numpy calls cost more per image than the file's bytes."""
    split, images, labels = _SHARED["split"], _SHARED["images"], _SHARED["labels"]
    base = os.fspath(_split_dir(ctx, split))  # a text path: joined once per image, tens of thousands a split
    place = _Placer(ctx.params, split)
    channels, sample_bytes = (3 if images.ndim == 4 else 1), images.dtype.itemsize
    block = max(1, min(_BLOCK_IMAGES, _BLOCK_BYTES // max(1, images[0].nbytes))) if len(images) else 1
    _wait_for(indices[-1])
    for start in range(0, len(indices), block):
        chosen = indices[start : start + block]
        filtered = sub_filter(images[chosen])
        for row, index in zip(filtered, chosen, strict=True):
            outputs = _image_outputs(base, place, index, row, channels, sample_bytes, labels[index])
            yield Result(f"{split} image {index}", outputs)


_BLOCK_IMAGES, _BLOCK_BYTES = 256, 1 << 20


def _image_outputs(base: str, place, index: int, filtered, channels: int, sample_bytes: int, label_row):
    data = encode_filtered(filtered, channels, sample_bytes)
    first, *others = place(index, tuple(label_row.tolist()))
    yield Data(f"{base}/{first}", data)
    detail = f"{len(data)}:{hashlib.sha256(data).hexdigest()}" if others else None
    for other in others:  # multi-label: the same file in each positive class folder
        yield HardLink(Path(base, other), Path(base, first), detail)


def _write_label_manifest(ctx, split: str, spec: dict) -> None:
    """split,index,path,labels for every image of the split (one row per place a multi-label image is in)."""
    labels = [tuple(row) for row in _SHARED["labels"].tolist()]
    place = _Placer(ctx.params, split)
    rows = ["split,index,path,labels"]
    for index in range(spec["counts"][split]):
        if index in _SHARED["bad"]:  # named in the log by the job of its shard
            continue
        values = place.labels(labels[index])[0]
        rows += [f'{split},{index},"{p}",{values}' for p in place(index, labels[index])]
    target = ctx.subset_path(ctx.params["label_table"].format(split=split))
    ctx.put(Data(target, ("\n".join(rows) + "\n").encode(), kind="labels"))


class Slices3D:
    """npz_slices_3d: every volume of a split as a folder of 2D slices along axis 0."""

    plan = staticmethod(plan)

    @staticmethod
    def build(ctx, items) -> None:
        path, _ = _archive(ctx)
        if ctx.shard == 0:
            _write_3d_labels(ctx, path)
        for split in ctx.params.get("splits", ["test"]):
            indices = [index for item_split, index in items if item_split == split]
            _run_split(ctx, path, split, indices, _produce_3d)


def _write_3d_labels(ctx, path: Path) -> None:
    """sample_index,label_index of every volume, for each of `label_splits` (sliced or not)."""
    with NpzFile(path) as archive:
        for split in ctx.params.get("label_splits", []):
            labels = archive.array(f"{split}_labels").reshape(-1)
            bad = bad_labels(ctx, path, split, labels, range(len(labels)))
            rows = ["sample_index,label_index"] + [
                f"{i},{int(value)}" for i, value in enumerate(labels.tolist()) if i not in bad
            ]
            target = ctx.subset_path(ctx.params["labels_csv"].format(split=split))
            ctx.put(Data(target, ("\n".join(rows) + "\n").encode(), kind="labels"))


def slice_indices(count: int, keep: int) -> np.ndarray:
    """All slices when there are at most `keep`, else `keep` evenly spaced ones (floor of linspace)."""
    return np.arange(count) if count <= keep else np.linspace(0, count - 1, keep, dtype=int)


def to_uint8(plane: np.ndarray) -> np.ndarray:
    """uint8 as it is; any other dtype min-max scaled to 0..255 and truncated (a constant slice is black)."""
    if plane.dtype == np.uint8:
        return plane
    low, high = plane.min(), plane.max()
    if high <= low:
        return np.zeros(plane.shape, np.uint8)
    return ((plane - low) / (high - low) * 255.0).astype(np.uint8)


def _produce_3d(ctx, indices: list[int]):
    """One Result per volume: its slices as PNGs in the volume's series folder."""
    split, volumes = _SHARED["split"], _SHARED["images"]
    _wait_for(indices[-1])
    for index in indices:
        folder = ctx.subset_dir / ctx.params["series"].format(split=split, index=index)
        yield Result(f"{split} volume {index}", _slice_outputs(ctx, folder, volumes[index]))


def _slice_outputs(ctx, folder: Path, volume: np.ndarray):
    for k, depth in enumerate(slice_indices(len(volume), ctx.params.get("max_slices", 64)).tolist()):
        yield Png(folder / ctx.params["slice"].format(k=k), to_uint8(volume[depth]))
