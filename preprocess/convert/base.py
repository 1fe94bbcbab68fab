"""What every conversion shares: its context, sharding, safe placement of files, the manifest."""

from __future__ import annotations

import contextlib
import errno
import gc
import hashlib
import multiprocessing
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from preprocess import layout
from preprocess.errors import OutputConflictError, PreprocessError, RawDataError
from preprocess.fsutil import atomic_write_text, file_digest, is_within, same_bytes
from preprocess.progress import Progress, terminal_stream
from preprocess.registry import Conversion, Registry, Source, Subset


@dataclass
class ConversionContext:
    registry: Registry
    settings: object
    subset: Subset
    conversion: Conversion
    shard: int = 0
    shards: int = 1
    written: list[tuple[str, str, str]] = field(default_factory=list)  # (path, kind, detail)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (item, what was wrong), on_bad_input: skip
    log: object = field(default=lambda text: print(text, flush=True))
    progress_bar: bool = False  # a tqdm bar on the terminal instead of progress lines
    progress: Progress | None = None

    @property
    def params(self) -> dict:
        return self.conversion.params

    workers: int = 1

    @property
    def image_root(self) -> Path:
        return layout.image_root(self.settings.data_basedir, self.subset)

    @property
    def subset_dir(self) -> Path:
        """The subset's top folder under 2D_Images/ or 3D_Images/ (the image root may be deeper)."""
        return layout.subset_dir(self.settings.data_basedir, self.subset)

    def add_records(self, records) -> None:
        self.written.extend(records)

    def track(self, items):
        """Iterate over items, counting each towards the progress lines once its loop body is done."""
        for item in items:
            yield item
            self.advance()

    def advance(self, items: int = 1) -> None:
        """Count finished (or skipped) items towards the job's progress lines."""
        if self.progress is not None:
            self.progress.advance(items)

    @contextlib.contextmanager
    def guard(self, item: str):
        """Bad input in this block stops the job (on_bad_input: fail) or skips the item and records it (skip)."""
        try:
            yield
        except RawDataError as exc:
            self.bad_input(item, exc)

    def bad_input(self, item: str, error: RawDataError) -> None:
        if self.settings.on_bad_input != "skip":
            raise error
        self.problems.append((item, str(error).replace("\t", " ").replace("\n", " ")))
        self.log(f"skipped {item}: {error}")

    def source(self, source_id: str | None = None) -> Source:
        if source_id is None:
            if len(self.subset.sources) != 1:
                raise PreprocessError(
                    f"{self.subset.key}/{self.conversion.name}: several sources, name one in params.source"
                )
            source_id = self.subset.sources[0].source
        return self.registry.source(source_id)

    def raw_dir(self, source_id: str | None = None) -> Path:
        return layout.raw_dir(self.settings.raw_root, self.source(source_id))

    def mine(self, items: list) -> list:
        """This shard's items: position modulo the shard count, over a stable order."""
        return [item for index, item in enumerate(items) if index % self.shards == self.shard]

    def output_path(self, relative: str) -> Path:
        root = self.image_root
        target = Path(os.path.normpath(root / relative))
        if not is_within(target, [Path(os.path.normpath(root))]):
            raise OutputConflictError(f"{self.subset.key}: output {relative!r} would land outside {root}")
        return target

    def place_file(self, source_file: Path, relative: str) -> None:
        """Hard-link (same file system) or copy a raw file into the image root, atomically."""
        target = self.output_path(relative)
        if target.exists() or target.is_symlink():
            if self._holds_same_file(target, source_file):
                self._record(target, "file")
                return
            if not self.settings.overwrite_existing:
                raise OutputConflictError(
                    f"{target} already exists with other content than {source_file}; the pipeline does not "
                    "overwrite it. Move it away, or set overwrite_existing: true to replace it"
                )
            print(f"replacing {target}: it held other content (overwrite_existing: true)")
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
        os.close(fd)
        os.unlink(tmp)
        try:
            try:
                os.link(source_file, tmp)
            except OSError as exc:
                if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EACCES, errno.EMLINK):
                    raise
                shutil.copyfile(source_file, tmp)
            os.replace(tmp, target)
        except FileNotFoundError as exc:
            Path(tmp).unlink(missing_ok=True)
            raise RawDataError(f"raw file vanished while placing it: {source_file}") from exc
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self._record(target, "file")

    @staticmethod
    def _holds_same_file(target: Path, source_file: Path) -> bool:
        if target.is_symlink() or not target.is_file():
            return False
        return os.path.samefile(target, source_file) or same_bytes(target, source_file)

    def place_symlink(self, link: Path, target: Path) -> None:
        """Create link -> target, keep it if it already points there, refuse to replace anything else."""
        if not target.exists():
            raise RawDataError(f"link target {target} does not exist; check the raw download")
        if link.is_symlink():
            if Path(os.readlink(link)) == target:
                self._record(link, "symlink", str(target))
                return
            raise OutputConflictError(
                f"{link} is a link to {os.readlink(link)}, not to {target}; remove that link yourself "
                "if it is stale (the pipeline never deletes what it did not create)"
            )
        if link.exists():
            raise OutputConflictError(
                f"{link} is a real {'folder' if link.is_dir() else 'file'} where a link to {target} belongs; "
                "move it away (the pipeline never deletes it)"
            )
        link.parent.mkdir(parents=True, exist_ok=True)
        tmp = link.with_name(f".{link.name}.{os.getpid()}.link")
        tmp.unlink(missing_ok=True)
        os.symlink(target, tmp)
        os.replace(tmp, link)
        self._record(link, "symlink", str(target))

    def _record(self, path: Path, kind: str, detail: str | None = None) -> None:
        relative = str(path.relative_to(self.settings.data_basedir))
        if detail is None:
            detail = f"{path.stat().st_size}:{file_digest(path, 'sha256')}"
        self.written.append((relative, kind, detail))


def write_output(target: Path | str, data: bytes, data_basedir: Path, overwrite: bool) -> tuple[str, str, str]:
    """Write bytes atomically unless the file already holds them; return the manifest row.

    Plain os calls on text paths: this runs once per output image (millions for a full build).
    """
    path = os.fspath(target)
    base = os.fspath(data_basedir).rstrip(os.sep) + os.sep
    if not path.startswith(base):
        raise OutputConflictError(f"{path} would land outside DATA_BASEDIR {data_basedir}")
    relative = path[len(base) :]
    detail = f"{len(data)}:{hashlib.sha256(data).hexdigest()}"
    try:
        if os.stat(path).st_size == len(data) and _read_bytes(path) == data:
            return relative, "file", detail
        if not overwrite:
            raise OutputConflictError(
                f"{path} already exists with other content; the pipeline does not overwrite it. "
                "Move it away, or set overwrite_existing: true to replace it"
            )
        print(f"replacing {path}: it held other content (overwrite_existing: true)")
    except FileNotFoundError:
        pass
    folder, name = os.path.split(path)
    tmp = f"{folder}/.{name}.{os.getpid()}.part"
    try:
        descriptor = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o666)
    except FileNotFoundError:
        os.makedirs(folder, exist_ok=True)
        descriptor = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o666)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(descriptor, view) :]
        finally:
            os.close(descriptor)
        os.rename(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return relative, "file", detail


def _read_bytes(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


_CASE_CONTEXT: dict = {}


def _run_case(job):
    function, item = job
    try:
        return function(_CASE_CONTEXT["ctx"], item), None
    except RawDataError as exc:  # travels back to the parent, which applies the on_bad_input policy
        return [], str(exc)


def for_each_item(ctx: ConversionContext, items: list, function) -> None:
    """Run function(ctx, item) -> manifest rows for every item, in forked workers when ctx.workers > 1.

    Items are handed out one at a time in order (a volume is a lot of work); rows are kept in item order.
    """
    if ctx.workers <= 1 or len(items) <= 1:
        for item in items:
            with ctx.guard(_label(item)):
                ctx.add_records(function(ctx, item))
            ctx.advance()
        return
    _CASE_CONTEXT["ctx"] = ctx
    with multiprocessing.get_context("fork").Pool(min(ctx.workers, len(items))) as pool:
        jobs = [(function, item) for item in items]
        for item, (records, error) in zip(items, pool.imap(_run_case, jobs, chunksize=1), strict=True):
            if error is not None:
                ctx.bad_input(_label(item), RawDataError(error))
            ctx.add_records(records)
            ctx.advance()


def _label(item) -> str:
    return str(getattr(item, "source", item))


def run_conversion(ctx: ConversionContext, module, manifest: Path | None = None) -> list:
    """Plan, build this shard, write the manifest last (it doubles as the done-marker)."""
    with _exclusive(ctx):
        return _run_locked(ctx, module, manifest)


@contextlib.contextmanager
def _exclusive(ctx: ConversionContext):
    """One writer per (subset, conversion, shard): a second run on the same DATA_BASEDIR stops at once."""
    import fcntl

    folder = ctx.settings.data_basedir / ".medheb-locks"
    folder.mkdir(parents=True, exist_ok=True)
    name = f"{ctx.subset.group}__{ctx.subset.folder}__{ctx.conversion.name}.{ctx.shard}-of-{ctx.shards}.lock"
    with open(folder / name, "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise PreprocessError(
                f"another run is building {ctx.subset.key}/{ctx.conversion.name} in {ctx.settings.data_basedir} "
                f"(lock {folder / name}); wait for it to finish, or give each run its own DATA_BASEDIR"
            ) from None
        yield


def _run_locked(ctx: ConversionContext, module, manifest: Path | None) -> list:
    started = time.monotonic()
    # The registry, schemas and modules loaded so far live as long as the process. Frozen, the garbage
    # collector stops rescanning them: a full collection, set off by the records that workers send back,
    # cost 17 ms of a 220 ms two-worker BloodMNIST run. Forked workers also keep sharing their pages.
    gc.freeze()
    with ctx.guard(f"{ctx.subset.key}/{ctx.conversion.name}"):  # a whole-source fault (an unreadable archive)
        items = ctx.mine(module.plan(ctx))
        label = f"{ctx.subset.key}/{ctx.conversion.name} shard {ctx.shard + 1}/{ctx.shards}"
        ctx.log(f"{label}: {len(items)} items")
        ctx.progress = Progress(
            label,
            len(items),
            ctx.log,
            ctx.settings.progress_interval,
            terminal_stream() if ctx.progress_bar else None,
        )
        try:
            module.build(ctx, items)
        finally:
            ctx.progress.close()
    ctx.written.sort()
    ctx.log(f"wrote {len(ctx.written)} entries in {time.monotonic() - started:.3f} s")
    if ctx.problems:
        ctx.log(f"{len(ctx.problems)} bad items skipped (on_bad_input: skip), listed in the manifest")
    if manifest is not None:
        problems = [(item, "problem", message) for item, message in ctx.problems]
        lines = ["path\tkind\tdetail"] + ["\t".join(row) for row in ctx.written + problems]
        atomic_write_text(manifest, "\n".join(lines) + "\n")
        ctx.log(f"manifest: {manifest}")
    return ctx.written
