"""The one executor of a conversion: it runs a kind's `produce` over the items of a shard, writes what it
yields (outputs.write), records the manifest rows, advances the progress lines and applies on_bad_input to
each item.

With ctx.workers = N > 1 the items are cut into chunks; N - 1 forked helpers and this process claim chunks
from a shared counter, so exactly N processes are busy until the last chunk. Helpers are plain processes
with a pipe each, not a multiprocessing.Pool: a Pool replaces a worker that was killed (by the out-of-memory
killer, say) and waits for its result forever; here the pipe's end tells at once.

A kind whose input arrives while it is being read (MedMNIST inflates one deflate stream) passes `prepare`:
it runs in this process before this process takes chunks, and calls `start()` as soon as helpers may begin
(and again as the input grows, which brings the progress lines up to date); with one worker it gets None.

With a journal (ctx.journal, preprocess/convert/journal.py) each finished item is recorded as it ends (written
in batches, and at the end of every chunk), and an item an earlier, killed run of the shard finished is taken
from it when the raw files it reads (Result.reads) and the files it wrote are unchanged: its outputs are
never evaluated.
"""

from __future__ import annotations

import multiprocessing

from preprocess.convert.forks import ctrl_c_held, let_ctrl_c_through
from preprocess.convert.outputs import write
from preprocess.errors import PreprocessError

_SHARED: dict = {}  # what forked helpers inherit: the context, the chunks, produce, the counters


class HelpersStopped(PreprocessError):
    """Raised by a `prepare` that waits on the helpers when none is left: run_items reports their reason."""


def run_items(ctx, items: list, produce, chunks: list[list] | None = None, prepare=None, source=None) -> None:
    """Write the outputs of `produce(ctx, items)` (one Result per item).

    With one worker, produce sees all items at once; with several, each chunk of `chunks` (default: one item a
    chunk) in whichever process claims it, so a kind whose names depend on what its job wrote before (PanNuke's
    `_1`) keeps `threads: 1`. `source` names the input in messages (default: the subset and conversion)."""
    chunks = [[item] for item in items] if chunks is None else chunks
    if ctx.workers <= 1 or len(chunks) <= 1:
        if prepare is not None:
            prepare(None)
        rows, problems, _ = _consume(ctx, produce(ctx, items))
        ctx.written.extend(rows)
        ctx.problems.extend(problems)
        return
    pool = _Helpers(ctx, chunks, produce, source or f"{ctx.subset.key}/{ctx.conversion.name}")
    try:
        if prepare is not None:
            try:
                prepare(pool.start)
            except HelpersStopped:
                pool.collect()  # raises what stopped them
                raise
        pool.start()
        pool.take_part()
        pool.collect()
    finally:
        pool.stop()


def _consume(ctx, results, count_each: bool = True) -> tuple[list, list, int]:
    """Write each result's outputs; bad input in one item stops the job or skips that item (on_bad_input).
    Returns the rows, the problems and the number of items (counted in the progress lines as they go when
    `count_each`, else by the caller: a helper adds a chunk's count to the shared counter at once)."""
    rows, problems, items = [], [], 0
    data_basedir, overwrite, journal = ctx.settings.data_basedir, ctx.settings.overwrite_existing, ctx.journal
    try:
        for result in results:
            done = None
            if journal is not None:  # the raw files' identity is taken before they are read
                inputs = journal.inputs(result.reads) if result.reads else ""
                if journal.entries:  # a fresh shard's journal has none: no look-up per item
                    done = journal.finished(result.label, inputs)
            if done is None:
                item_rows, item_problems = [], []
                with ctx.guard(result.label, item_problems):
                    item_rows = [write(output, data_basedir, overwrite) for output in result.outputs]
                if journal is not None:
                    journal.record(result.label, item_rows, item_problems, inputs)
            else:  # finished by an earlier run of this shard: its outputs are not produced again
                item_rows, item_problems = done
            rows.extend(item_rows)
            problems.extend(item_problems)
            items += 1
            if count_each:
                ctx.advance()
    finally:  # a chunk's finished items are in the journal before its rows leave this process
        if journal is not None:
            journal.flush()
    return rows, problems, items


class _Helpers:
    """N - 1 forked processes that claim chunks as this one does and send their rows back through a pipe."""

    def __init__(self, ctx, chunks: list[list], produce, source: str):
        self.ctx, self.source, self.members, self.reported = ctx, source, [], 0
        self.context = multiprocessing.get_context("fork")
        _SHARED.update(
            ctx=ctx,
            chunks=chunks,
            produce=produce,
            claimed=self.context.Value("q", 0),  # the next chunk to take
            finished=self.context.Value("q", 0),  # items done, for the progress lines
        )

    def start(self) -> None:
        """Fork the helpers (once); later calls only bring the progress lines up to date."""
        if self.members:
            self.report()
            return
        with ctrl_c_held():  # the helpers let it through in _help
            for _ in range(min(self.ctx.workers, len(_SHARED["chunks"])) - 1):
                receiver, sender = self.context.Pipe(duplex=False)
                process = self.context.Process(target=_help, args=(sender,), daemon=True)
                process.start()
                sender.close()
                self.members.append((process, receiver))

    def report(self) -> None:
        done = _SHARED["finished"].value
        self.ctx.advance(done - self.reported)
        self.reported = done

    def take_part(self) -> None:
        rows, problems = _claim(on_chunk=self.report)
        self.ctx.written.extend(rows)
        self.ctx.problems.extend(problems)

    def collect(self) -> None:
        for process, receiver in self.members:
            try:
                outcome = receiver.recv()
            except EOFError:
                process.join()
                raise PreprocessError(
                    f"{self.source}: a helper process stopped without its results (exit code {process.exitcode}); "
                    "run the job again, with fewer workers if memory ran out"
                ) from None
            if isinstance(outcome, BaseException):
                raise outcome
            rows, problems = outcome
            self.ctx.written.extend(rows)
            self.ctx.problems.extend(problems)
        self.report()

    def stop(self) -> None:
        for process, receiver in self.members:
            if process.is_alive():
                process.terminate()
            process.join()
            receiver.close()


def _help(sender) -> None:
    """In a helper: claim chunks until none is left; send the rows, or the exception that stopped it."""
    try:
        let_ctrl_c_through()
        outcome = _claim()
    except BaseException as exc:  # raised again in the job's own process
        outcome = exc
    try:
        sender.send(outcome)
    except Exception:  # an exception that cannot be pickled
        sender.send(PreprocessError(f"a helper process failed: {outcome!r}"))


def _claim(on_chunk=None) -> tuple[list, list]:
    """Take the next unclaimed chunk until none is left."""
    ctx, chunks, produce = _SHARED["ctx"], _SHARED["chunks"], _SHARED["produce"]
    claimed, finished = _SHARED["claimed"], _SHARED["finished"]
    rows, problems = [], []
    while True:
        with claimed.get_lock():
            number = claimed.value
            claimed.value += 1
        if number >= len(chunks):
            return rows, problems
        chunk_rows, chunk_problems, items = _consume(ctx, produce(ctx, chunks[number]), count_each=False)
        rows.extend(chunk_rows)
        problems.extend(chunk_problems)
        with finished.get_lock():
            finished.value += items
        if on_chunk is not None:
            on_chunk()
