"""What every conversion shares: its context (settings, params, folders, sharding, the bad-input policy) and
the run of one shard: plan, produce and write (preprocess.convert.executor), the manifest written last."""

from __future__ import annotations

import contextlib
import errno
import gc
import importlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from preprocess.convert.executor import run_items
from preprocess.convert.journal import Journal, fingerprint, journal_path
from preprocess.convert.outputs import remove_parts, require_inside, set_ours_folder, set_part_tag, write, write_error
from preprocess.convert.progress import Progress, terminal_stream
from preprocess.errors import OutputConflictError, PreprocessError, RawDataError
from preprocess.formats import unpacked
from preprocess.formats.fsutil import is_within
from preprocess.formats.manifest import write_manifest
from preprocess.formats.rawroot import Boundary
from preprocess.registry import layout
from preprocess.registry.config import Settings
from preprocess.registry.model import Conversion, Registry, Source, Subset

SHOWN_BAD = 5  # bad items a stopping error lists (it counts all of them)


@dataclass
class ConversionContext:
    registry: Registry
    settings: Settings
    subset: Subset
    conversion: Conversion
    shard: int = 0
    shards: int = 1
    written: list[tuple[str, str, str]] = field(default_factory=list)  # (path, kind, detail)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (item, what was wrong), on_bad_input: skip
    log: object = field(default=lambda text: print(text, flush=True))
    progress_bar: bool = False  # a tqdm bar on the terminal instead of progress lines
    progress: Progress | None = None
    journal: Journal | None = None  # the shard's finished items (set while a job with a manifest runs)
    _boundary: Boundary | None = None  # where this subset's raw files may resolve to (made on first use)

    @property
    def params(self) -> dict:
        return self.conversion.params

    workers: int = 1

    @property
    def recipe(self) -> dict:
        """The recipe this conversion's recipe parameter names (for a {source variant: name} value, the chosen
        variant's): its entry of a dataset folder's recipes.yaml, with `code` the object it names, imported here."""
        kind = self.registry.kinds[self.conversion.kind]
        chosen = self.params[kind.recipe_param]
        if isinstance(chosen, dict):
            variant = self.source(self.params.get("source")).variant
            if variant not in chosen:
                raise PreprocessError(
                    f"{self.subset.key}/{self.conversion.name}: no recipe for source variant {variant!r} "
                    f"(has: {', '.join(sorted(chosen))})"
                )
            chosen = chosen[variant]
        entry = kind.recipe(chosen, f"{self.subset.key}/{self.conversion.name}")
        reference = kind.code_reference(chosen)
        return entry if reference is None else {**entry, "code": load_object(reference)}

    @property
    def image_root(self) -> Path:
        return layout.image_root(self.settings.data_basedir, self.subset)

    @property
    def subset_dir(self) -> Path:
        """The subset's top folder under 2D_Images/ or 3D_Images/ (the image root may be deeper)."""
        return layout.subset_dir(self.settings.data_basedir, self.subset)

    def advance(self, items: int = 1) -> None:
        """Count finished (or skipped) items towards the job's progress lines."""
        if self.progress is not None:
            self.progress.advance(items)

    def guard(self, item: str, problems: list | None = None) -> _Guard:
        """Bad input in this block stops the job (on_bad_input: fail) or skips the item and records it in
        `problems` (default: this context's) when on_bad_input is skip. An unexpected error of one item counts
        as its bad input, named by the item; a full disk or a read-only DATA_BASEDIR stops the job."""
        return _Guard(self, item, problems)

    def _judge(self, item: str, exc: BaseException, problems: list | None) -> bool:
        """What guard does with an exception of its block: raise (another one, or it again: False) or record
        the skipped item (True)."""
        if isinstance(exc, RawDataError):
            self._bad(item, exc, problems)
        elif isinstance(exc, PreprocessError) or not isinstance(exc, Exception):
            return False
        elif isinstance(exc, OSError):
            if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS) or self._in_data_basedir(exc.filename):
                raise write_error(exc.filename or item, exc) from None
            self._bad(
                item, RawDataError(f"{item}: {exc}; check the file, or skip it with on_bad_input: skip"), problems
            )
        else:
            message = f"{item}: unexpected {type(exc).__name__}: {exc}; the raw item may be damaged: check it, or "
            self._bad(item, RawDataError(message + "skip it with on_bad_input: skip"), problems)
        return True

    def _in_data_basedir(self, filename) -> bool:
        """A path of DATA_BASEDIR: an error there is the output side's, never the raw item's."""
        if not isinstance(filename, str | bytes | os.PathLike):
            return False
        base = Path(os.path.abspath(self.settings.data_basedir))
        return is_within(Path(os.path.abspath(os.fsdecode(filename))), [base])

    def _bad(self, item: str, exc: RawDataError, problems: list | None) -> None:
        if self.settings.on_bad_input != "skip":
            raise exc
        (self.problems if problems is None else problems).append((item, str(exc)))
        self.log(f"skipped {item}: {exc}")

    def bad_items(self, bad: list[tuple[str, str]], where: str) -> None:
        """Bad items a plan found all at once, (item, message) each: recorded and logged with on_bad_input:
        skip, else one error that counts them and shows the first SHOWN_BAD."""
        if not bad:
            return
        if self.settings.on_bad_input == "skip":
            for item, message in bad:
                self.problems.append((item, message))
                self.log(f"skipped {item}: {message}")
            return
        shown = "\n  ".join(message for _, message in bad[:SHOWN_BAD])
        more = f"\n  ... and {len(bad) - SHOWN_BAD} more" if len(bad) > SHOWN_BAD else ""
        raise RawDataError(
            f"{self.subset.key}/{self.conversion.name}: {len(bad)} bad items in {where}:\n  {shown}{more}\n"
            "check that both the release's files and the raw download are the published ones (or build the rest "
            "with on_bad_input: skip)"
        )

    def name(self, param: str, **fields) -> str:
        """The output name template `param` of this conversion, filled with an item's fields."""
        where = f"{self.subset.key}/{self.conversion.name}: param {param}"
        return layout.fill(self.params[param], fields, where)

    def put(self, output) -> None:
        """Write one output outside any item (a labels table of the whole split) and record its row."""
        self.written.append(write(output, self.settings.data_basedir, self.settings.overwrite_existing))

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

    def raw_file(self, path, folder: bool = False) -> Path:
        """`path` when it can be read as a raw file (a folder, when `folder`) of this subset's sources: a regular
        file, readable, that resolves inside the raw root or a source's folder (preprocess.formats.rawroot); else
        RawDataError naming it, bad input of the item being built."""
        return self._raw_boundary().check(path, folder)

    def raw_content(self, folder, holds) -> Path:
        """The level of raw folder `folder` that holds its content (globs `holds`, a file spec's): the folder
        itself, or the folder of its own name inside it where the download was unpacked one level deeper
        (preprocess.formats.unpacked); else RawDataError naming the folder expected."""
        return unpacked.require(Path(folder), holds, self._raw_boundary())

    def _raw_boundary(self) -> Boundary:
        if self._boundary is None:
            folders = [self.raw_dir(source_id) for source_id in self.subset.source_ids]
            self._boundary = Boundary(self.settings.raw_root, *folders)
        return self._boundary

    def mine(self, items: list) -> list:
        """This shard's items: position modulo the shard count, over a stable order."""
        return [item for index, item in enumerate(items) if index % self.shards == self.shard]

    def output_path(self, relative: str) -> Path:
        """A name under the image root (refused if it would climb out)."""
        return _inside(self.image_root, relative, self.subset.key)

    def subset_path(self, relative: str) -> Path:
        """A name under the subset's folder (refused if it would climb out)."""
        return _inside(self.subset_dir, relative, self.subset.key)


def load_object(reference: str):
    """The module "package.module", or the attribute of "package.module:attribute" (kinds.yaml's `module` and
    a recipe's `code`), imported."""
    module_name, _, attribute = reference.partition(":")
    module = importlib.import_module(module_name)
    return getattr(module, attribute) if attribute else module


def _inside(root: Path, relative: str, what: str) -> Path:
    target = Path(os.path.normpath(root / relative))
    if not is_within(target, [Path(os.path.normpath(root))]):
        raise OutputConflictError(f"{what}: output {relative!r} would land outside {root}")
    return target


class _Guard:
    """ConversionContext.guard's context manager: a plain class, as it wraps every item of every job."""

    __slots__ = ("ctx", "item", "problems")

    def __init__(self, ctx: ConversionContext, item: str, problems: list | None):
        self.ctx, self.item, self.problems = ctx, item, problems

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, exc, traceback) -> bool:
        return exc is not None and self.ctx._judge(self.item, exc, self.problems)


def run_conversion(ctx: ConversionContext, module, manifest: Path | None = None, ours: Path | None = None) -> list:
    """Plan, build this shard, write the manifest last (it doubles as the done-marker). `ours`: the folder that
    receives this build's file of each file in place whose pixels differ (the results folder's layout.OURS;
    None: none is kept). It is given, never derived from where the manifest is: a manifest may be named anywhere."""
    with _exclusive(ctx):
        return _run_locked(ctx, module, manifest, ours)


@contextlib.contextmanager
def _exclusive(ctx: ConversionContext):
    """One writer per (subset, conversion, shard): a second run on the same DATA_BASEDIR stops at once. Holding
    the lock, every temporary file of this job's tag is a leftover of an earlier run (killed between write and
    rename): they go before anything is written. The lock file goes when the job ends, so none pile up."""
    folder = ctx.settings.data_basedir / LOCKS
    tag = f"{ctx.conversion.name}-{ctx.shard}of{ctx.shards}"
    path = folder / f"{ctx.subset.group}__{ctx.subset.folder}__{ctx.conversion.name}.{ctx.shard}-of-{ctx.shards}.lock"
    # Before the lock file and the leftovers' removal: neither may follow a link out of DATA_BASEDIR.
    for inside in (folder, ctx.subset_dir):
        require_inside(inside, ctx.settings.data_basedir)
    handle = _lock(path, ctx)
    try:
        if ctx.subset_dir.is_dir():
            left = remove_parts(ctx.subset_dir, tag)
            if left:
                ctx.log(f"removed {len(left)} temporary files an interrupted run left, e.g. {left[0]}")
        set_part_tag(tag)
        yield
    finally:
        path.unlink(missing_ok=True)  # still holding it: a run that opened this file sees it gone (below)
        handle.close()
        with contextlib.suppress(OSError):  # other jobs' locks are still there
            folder.rmdir()


LOCKS = ".medheb-locks"


def _lock(path: Path, ctx: ConversionContext):
    """The open lock file at `path`, locked. A lock taken on a file that its holder removed before letting go
    locks nothing: the file at `path` must still be the one locked, else it is opened again."""
    import fcntl

    while True:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            handle = open(path, "a+")  # noqa: SIM115 (held for the whole job; closed by _exclusive)
        except FileNotFoundError:  # the folder went with the last job's lock between mkdir and open
            continue
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise PreprocessError(
                f"another run is building {ctx.subset.key}/{ctx.conversion.name} in {ctx.settings.data_basedir} "
                f"(lock {path}); wait for it to finish, or give each run its own DATA_BASEDIR"
            ) from None
        try:
            same = os.stat(path).st_ino == os.fstat(handle.fileno()).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return handle
        handle.close()


def _run_locked(ctx: ConversionContext, module, manifest: Path | None, ours: Path | None) -> list:
    started = time.monotonic()
    # The registry, schemas and modules loaded so far live as long as the process. Frozen, the garbage
    # collector stops rescanning them when the rows that helpers send back set off a full collection (the
    # README's MedMNIST speed section has the cost); forked helpers also keep sharing their pages.
    gc.freeze()
    set_ours_folder(ours)
    if manifest is not None:  # a killed run of this shard left a journal: its finished items are not redone
        ctx.journal = Journal(journal_path(Path(manifest)), fingerprint(ctx), ctx.settings.data_basedir, ctx.log)
    try:
        _build(ctx, module, started)
    finally:
        if ctx.journal is not None:
            ctx.journal.close()
    if manifest is not None:
        # sorted, as the rows are: with several workers the skipped items arrive in the order they finished
        problems = sorted((item, "problem", message) for item, message in ctx.problems)
        write_manifest(manifest, ctx.written + problems)
        ctx.log(f"manifest: {manifest}")
        ctx.journal.close(remove=True)
    return ctx.written


def _build(ctx: ConversionContext, module, started: float) -> None:
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
            if hasattr(module, "build"):  # a kind that runs the executor itself (MedMNIST: one split at a time)
                module.build(ctx, items)
            else:
                run_items(ctx, items, module.produce)
        finally:
            ctx.progress.close()
    ctx.written.sort()
    ctx.log(f"wrote {len(ctx.written)} entries in {time.monotonic() - started:.3f} s")
    if ctx.problems:
        ctx.log(f"{len(ctx.problems)} bad items skipped (on_bad_input: skip), listed in the manifest")
