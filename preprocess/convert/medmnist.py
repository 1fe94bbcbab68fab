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
import mmap
import multiprocessing
import os
import time
from pathlib import Path

import numpy as np

from preprocess.convert.executor import HelpersStopped, run_items
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
    """Write produce's outputs for the images of one split; call labels_done() once its labels are read.

    The images are read once, in order, a chunk at a time (NpzFile.rows): memory holds a few chunks, whatever
    the size of the split. With one worker, produce reads its chunks from the archive itself. With N workers,
    N - 1 forked helpers take the chunks while this process inflates them (one deflate stream cannot be split)
    into a ring of shared slots (_Ring); then this process takes chunks too.
    """
    with NpzFile(path) as archive:
        key = f"{split}_images"
        info = archive.info(key)
        item_bytes = int(np.prod(info.shape[1:], dtype=np.int64)) * info.dtype.itemsize
        labels = archive.array(f"{split}_labels")
        bad = bad_labels(ctx, path, split, labels, indices)
        indices = [index for index in indices if index not in bad]
        chunks = _chunks(indices, ctx.workers, item_bytes)
        _SHARED.update(ctx=ctx, split=split, labels=labels, bad=bad, archive=archive, key=key, ring=None, places=None)
        _SHARED["block"] = max(1, min(_BLOCK_IMAGES, _BLOCK_BYTES // max(1, item_bytes)))

        def prepare(start) -> None:
            if start is not None:
                _SHARED["ring"] = _Ring(chunks, info, ctx.workers)
                _SHARED["ring"].fill(archive.rows(key, chunks), start)
            if labels_done is not None:  # several workers: while the helpers finish the last chunks
                labels_done()

        run_items(ctx, indices, produce, chunks, prepare, source=str(path))


class _Ring:
    """Shared slots through which the chunks of a split's images pass from the process that inflates them to
    the forked helpers: chunk n goes to slot n % slots once chunk n - slots is written out (`done`)."""

    def __init__(self, chunks: list[list[int]], info, workers: int):
        context = multiprocessing.get_context("fork")
        self.number = {chunk[0]: number for number, chunk in enumerate(chunks)}  # a chunk by its first index
        self.slots = 4 * max(1, workers)
        shape = (self.slots, max(len(chunk) for chunk in chunks), *info.shape[1:])
        size = int(np.prod(shape, dtype=np.int64)) * info.dtype.itemsize
        self.images = np.frombuffer(mmap.mmap(-1, max(size, 1)), np.uint8, count=size).view(info.dtype).reshape(shape)
        self.written = context.Value("q", 0, lock=False)  # chunks in their slots so far
        self.done = context.Array("b", len(chunks), lock=False)

    def fill(self, batches, start) -> None:
        """In the inflating process: put each chunk in its slot, waiting for the slot's last chunk to be done."""
        for number, batch in enumerate(batches):
            if number >= self.slots:
                self._wait_done(number - self.slots)
            self.images[number % self.slots, : len(batch)] = batch
            self.written.value = number + 1
            start()  # forks the helpers at the first call; later calls bring the progress lines up to date

    def _wait_done(self, number: int) -> None:
        while not self.done[number]:
            if not multiprocessing.active_children():  # the helpers stopped: run_items reports why
                raise HelpersStopped(f"the helper processes stopped before chunk {number} was written")
            time.sleep(0.002)

    def chunk(self, indices: list[int]) -> np.ndarray:
        """In a worker: the images of a chunk, once the inflating process has put them in their slot."""
        number = self.number[indices[0]]
        while self.written.value <= number:
            time.sleep(0.002)
        return self.images[number % self.slots, : len(indices)]

    def release(self, indices: list[int]) -> None:
        self.done[self.number[indices[0]]] = 1


def _batches(indices: list[int]):
    """(indices, their images) in blocks: a chunk's slot of the ring (several workers), or read from the
    archive a block at a time (one worker: produce gets every item of the job)."""
    ring = _SHARED["ring"]
    if ring is not None:
        try:
            yield indices, ring.chunk(indices)
        finally:  # its outputs are written: the slot can take the next chunk
            ring.release(indices)
        return
    block = _SHARED["block"]
    blocks = [indices[start : start + block] for start in range(0, len(indices), block)]
    yield from zip(blocks, _SHARED["archive"].rows(_SHARED["key"], blocks), strict=True)


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

    A block of images at a time: their rows PNG-filtered in one numpy pass (sub_filter; for 28 px images the
    filter's numpy calls cost more per image than the file's bytes), then all deflated, then their files
    written, so that the block's file creations run back to back as in the file-creation floor the benchmark
    measures (libdeflate clears a 128 kB hash table per image in between otherwise; what that costs the
    kernel's next file creation was within this machine's noise, docs/benchmarks.md). An image that an
    earlier, killed run finished (in the journal) is deflated only if its item is converted again. The
    images' places come from the label table when this process wrote it (formatted once for both), else are
    formatted here, from each block's labels read in one numpy call."""
    split, labels, places = _SHARED["split"], _SHARED["labels"], _SHARED["places"]
    base = os.fspath(_split_dir(ctx, split))  # a text path: joined once per image, tens of thousands a split
    place = _Placer(ctx.params, split)
    finished = ctx.journal.entries if ctx.journal is not None else {}
    for chosen, images in _batches(indices):
        channels, sample_bytes = (3 if images.ndim == 4 else 1), images.dtype.itemsize
        filtered = sub_filter(images)
        if places is None:
            where = [place(index, tuple(values)) for index, values in zip(chosen, labels[chosen].tolist(), strict=True)]
        else:
            where = [places[index] for index in chosen]
        items = [f"{split} image {index}" for index in chosen]
        pngs = [
            None if item in finished else encode_filtered(row, channels, sample_bytes)
            for item, row in zip(items, filtered, strict=True)
        ]
        for item, png, row, paths in zip(items, pngs, filtered, where, strict=True):
            yield Result(item, _image_outputs(base, paths, png, row, channels, sample_bytes))


_BLOCK_IMAGES, _BLOCK_BYTES = 256, 1 << 20


def _image_outputs(base: str, paths: list[str], data: bytes | None, filtered, channels: int, sample_bytes: int):
    """The outputs of one image: its PNG (`data`, or deflated from its `filtered` rows now) at its first
    place, hard links to it at the others."""
    if data is None:
        data = encode_filtered(filtered, channels, sample_bytes)
    first, *others = paths
    yield Data(f"{base}/{first}", data)
    detail = f"{len(data)}:{hashlib.sha256(data).hexdigest()}" if others else None
    for other in others:  # multi-label: the same file in each positive class folder
        yield HardLink(Path(base, other), Path(base, first), detail)


def _write_label_manifest(ctx, split: str, spec: dict) -> None:
    """split,index,path,labels for every image of the split (one row per place a multi-label image is in).
    The places are kept for this process's own images (_produce_2d): each name is formatted once."""
    labels = [tuple(row) for row in _SHARED["labels"].tolist()]
    place = _Placer(ctx.params, split)
    places: dict[int, list[str]] = {}
    rows = ["split,index,path,labels"]
    for index in range(spec["counts"][split]):
        if index in _SHARED["bad"]:  # named in the log by the job of its shard
            continue
        values = place.labels(labels[index])[0]
        places[index] = place(index, labels[index])
        rows += [f'{split},{index},"{p}",{values}' for p in places[index]]
    _SHARED["places"] = places
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
    split = _SHARED["split"]
    for chosen, volumes in _batches(indices):
        for index, volume in zip(chosen, volumes, strict=True):
            folder = ctx.subset_dir / ctx.params["series"].format(split=split, index=index)
            yield Result(f"{split} volume {index}", _slice_outputs(ctx, folder, volume))


def _slice_outputs(ctx, folder: Path, volume: np.ndarray):
    for k, depth in enumerate(slice_indices(len(volume), ctx.params.get("max_slices", 64)).tolist()):
        yield Png(folder / ctx.params["slice"].format(k=k), to_uint8(volume[depth]))
