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

import multiprocessing
import os
import time
from pathlib import Path

import numpy as np

from preprocess.convert.base import write_output
from preprocess.errors import PreprocessError, RawDataError
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


def _chunks(indices: list[int], workers: int, item_bytes: int) -> list[list[int]]:
    """Small chunks keep the workers evenly loaded to the end: 8 per worker at least, and at most 64 images
    or 1 MiB of pixels (6 images at 224 px RGB), so that helpers start as soon as the first MiB is inflated."""
    largest = max(1, min(64, (1 << 20) // max(1, item_bytes)))
    pieces = max(1, min(len(indices), max(workers * 8, -(-len(indices) // largest))))
    return [chunk.tolist() for chunk in np.array_split(np.array(indices, dtype=np.int64), pieces) if len(chunk)]


def _run_split(ctx, path: Path, split: str, indices: list[int], chunk_function, labels_done=None) -> None:
    """Load one split and run chunk_function over index chunks; call labels_done() once the split is loaded.

    With N workers, N - 1 forked helpers start on the first images while this process is still inflating the
    rest (inflation is one serial deflate stream); then this process takes chunks too. Chunks are claimed
    from a shared counter, so exactly N processes are busy at any time.
    """
    _SHARED["placement"] = (ctx, split)
    _SHARED.pop("ready", None)
    with NpzFile(path) as archive:
        info = archive.info(f"{split}_images")
        item_bytes = int(np.prod(info.shape[1:], dtype=np.int64)) * info.dtype.itemsize
        chunks = _chunks(indices, ctx.workers, item_bytes) if indices else []
        _SHARED["labels"] = archive.array(f"{split}_labels")
        if ctx.workers <= 1 or len(chunks) <= 1:
            _SHARED["images"] = archive.array(f"{split}_images")
            if labels_done is not None:
                labels_done()
            for chunk in chunks:
                ctx.add_records(chunk_function(chunk))
                ctx.advance(len(chunk))
            return
        context = multiprocessing.get_context("fork")
        shared = {
            "ready": context.Value("q", 0, lock=False),  # images inflated so far
            "claimed": context.Value("q", 0),  # next chunk to take
            "finished": context.Value("q", 0),  # images done, for the progress lines
        }
        helpers = None  # started once the shared array exists
        reported = [0]

        def report() -> None:
            done = shared["finished"].value
            ctx.advance(done - reported[0])
            reported[0] = done

        def progress(images: np.ndarray, nbytes: int) -> None:
            nonlocal helpers
            if helpers is None:  # the shared array exists now: fork the helpers
                _SHARED.update(shared, images=images, chunks=chunks, function=chunk_function)
                helpers = _Helpers(context, ctx.workers - 1)
            shared["ready"].value = nbytes // max(1, item_bytes)
            report()

        try:
            archive.inflate_into(f"{split}_images", progress)
            if labels_done is not None:  # while the helpers are busy with images
                labels_done()
            done = dict(_claim_chunks(on_chunk=report))
            done.update(helpers.results(path))
        finally:
            if helpers is not None:
                helpers.stop()
        for number in range(len(chunks)):
            ctx.add_records(done[number])
        report()


class _Helpers:
    """Forked processes that claim chunks as this one does and send their rows back through a pipe each.

    Plain processes rather than a multiprocessing.Pool: a Pool replaces a worker that was killed (by the
    out-of-memory killer, say) and waits for its result forever; here the pipe's end tells at once.
    """

    def __init__(self, context, count: int):
        self.members = []
        for _ in range(count):
            receiver, sender = context.Pipe(duplex=False)
            process = context.Process(target=_help, args=(sender,), daemon=True)
            process.start()
            sender.close()
            self.members.append((process, receiver))

    def results(self, path: Path) -> dict[int, list]:
        done = {}
        for process, receiver in self.members:
            try:
                outcome = receiver.recv()
            except EOFError:
                process.join()
                raise PreprocessError(
                    f"{path}: a helper process stopped without its results (exit code {process.exitcode}); "
                    "run the job again, with fewer workers if memory ran out"
                ) from None
            if isinstance(outcome, BaseException):
                raise outcome
            done.update(outcome)
        return done

    def stop(self) -> None:
        for process, receiver in self.members:
            if process.is_alive():
                process.terminate()
            process.join()
            receiver.close()


def _help(sender) -> None:
    """In a helper: claim chunks until none is left; send the rows, or the exception that stopped it."""
    try:
        outcome = _claim_chunks()
    except BaseException as exc:  # raised again in the job's own process
        outcome = exc
    try:
        sender.send(outcome)
    except Exception:  # an exception that cannot be pickled
        sender.send(PreprocessError(f"a helper process failed: {outcome!r}"))


def _claim_chunks(on_chunk=None) -> list[tuple[int, list]]:
    """Take the next unclaimed chunk until none is left; return (chunk number, manifest rows) pairs."""
    claimed, finished, chunks = _SHARED["claimed"], _SHARED["finished"], _SHARED["chunks"]
    results = []
    while True:
        with claimed.get_lock():
            number = claimed.value
            claimed.value += 1
        if number >= len(chunks):
            return results
        results.append((number, _SHARED["function"](chunks[number])))
        with finished.get_lock():
            finished.value += len(chunks[number])
        if on_chunk is not None:
            on_chunk()


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
            _run_split(ctx, path, split, indices, _write_2d_chunk, manifest)


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


def _write_2d_chunk(indices: list[int]) -> list[tuple[str, str, str]]:
    ctx, split = _SHARED["placement"]
    images, labels = _SHARED["images"], _SHARED["labels"]
    base = f"{_split_dir(ctx, split)}/"
    place = _Placer(ctx.params, split)
    data_basedir, overwrite = ctx.settings.data_basedir, ctx.settings.overwrite_existing
    records = []
    _wait_for(indices[-1])
    for index in indices:
        data = encode_png(images[index])
        first, *others = place(index, tuple(labels[index].tolist()))
        records.append(write_output(base + first, data, data_basedir, overwrite))
        for other in others:  # multi-label: the same file in each positive class folder
            records.append(_link(Path(base + first), Path(base + other), data_basedir, overwrite, records[-1][2]))
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
    labels = [tuple(row) for row in _SHARED["labels"].tolist()]
    place = _Placer(ctx.params, split)
    rows = ["split,index,path,labels"]
    for index in range(spec["counts"][split]):
        values = place.labels(labels[index])[0]
        rows += [f'{split},{index},"{p}",{values}' for p in place(index, labels[index])]
    target = ctx.subset_dir / ctx.params["label_table"].format(split=split)
    atomic_write_text(target, "\n".join(rows) + "\n")
    ctx.written.append((str(target.relative_to(ctx.settings.data_basedir)), "labels", str(len(rows) - 1)))


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
            _run_split(ctx, path, split, indices, _write_3d_chunk)


def _write_3d_labels(ctx, path: Path) -> None:
    """sample_index,label_index of every volume, for each of `label_splits` (sliced or not)."""
    with NpzFile(path) as archive:
        for split in ctx.params.get("label_splits", []):
            labels = archive.array(f"{split}_labels").reshape(-1)
            rows = ["sample_index,label_index"] + [f"{i},{int(value)}" for i, value in enumerate(labels.tolist())]
            target = ctx.subset_dir / ctx.params["labels_csv"].format(split=split)
            atomic_write_text(target, "\n".join(rows) + "\n")
            ctx.written.append((str(target.relative_to(ctx.settings.data_basedir)), "labels", str(len(labels))))


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


def _write_3d_chunk(indices: list[int]) -> list[tuple[str, str, str]]:
    ctx, split = _SHARED["placement"]
    volumes = _SHARED["images"]
    series, slice_name = ctx.params["series"], ctx.params["slice"]
    keep = ctx.params.get("max_slices", 64)
    data_basedir, overwrite = ctx.settings.data_basedir, ctx.settings.overwrite_existing
    records = []
    _wait_for(indices[-1])
    for index in indices:
        folder = ctx.subset_dir / series.format(split=split, index=index)
        volume = volumes[index]
        for k, depth in enumerate(slice_indices(len(volume), keep).tolist()):
            data = encode_png(to_uint8(volume[depth]))
            records.append(write_output(folder / slice_name.format(k=k), data, data_basedir, overwrite))
    return records
