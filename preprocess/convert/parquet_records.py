"""Images out of VQA parquet files, written at the paths the release's records name (no public script gives
these names: RadImageNet-VQA, PathVQA, VQA-RAD, MedPix).

params:
  dataset   a recipe (the kind's `recipes` in a dataset folder's recipes.yaml): the image column, the text columns and
            how a row's question, answers and choices are read from them (its code, in recordmatch.py)
  files     glob patterns of the parquet files under the source's raw folder (all of them are read)
  records   whose records name the outputs: test (the subset's task JSONs, each path joined to its task
            file's image root) or train (the Train_Data JSONLs, paths relative to DATA_BASEDIR)
  source    source id, when the subset has several
  train_dataset, train_files, train_records: the same for the train twin (splits: all)

A record is matched to the rows whose question is its question (preprocess/convert/recordmatch.py: normalised), and
whose answer and choices are its own where the record carries them. The rows a record matches must show one
image (by the sha256 of its bytes) together with the matches of every other record naming the same path: a
question shared by several images is decided by the path's other records. A record matching no row, a path
whose records point at different images, and a path its records leave undecided are bad items named by file
and record, with what was tried; never a guess. Bytes are written as the parquet holds them (PNG, JPEG, ...).
"""

from __future__ import annotations

import glob as globlib
import hashlib
import os
from collections import defaultdict
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from preprocess.convert import recordmatch
from preprocess.convert.outputs import Data, Result
from preprocess.convert.parquet_extract import image_bytes, row_count
from preprocess.errors import RawDataError
from preprocess.formats.parquet import iter_images
from preprocess.release import releasenames

QUERIES = {releasenames.TEST: recordmatch.task_query, releasenames.TRAIN: recordmatch.train_query}


def _parquet_files(ctx) -> list[Path]:
    base = ctx.raw_dir(ctx.params.get("source"))
    patterns = ctx.params["files"]
    found = sorted(
        {Path(p) for pattern in patterns for p in globlib.glob(os.path.join(globlib.escape(str(base)), pattern))}
    )
    if not found:
        raise RawDataError(f"{ctx.subset.key}: no parquet file matches {patterns} under {base}")
    kept = []
    for path in found:
        # Every file or none: a record is matched against all rows (a file left out could hold its image, or a
        # second one that makes it ambiguous), so a file that cannot be read stops the conversion's plan.
        path = ctx.raw_file(path)
        if row_count(path) == 0:
            ctx.log(f"{path}: 0 rows, no image to extract; download it again (left out)")
        else:
            kept.append(path)
    return kept


def _text_rows(path: Path, columns: list[str], batch_rows: int = 1024):
    """(row, {column: value}) of every row, the text columns only (the images are read for matches only)."""
    try:
        parquet = pq.ParquetFile(path, pre_buffer=False)
        names = parquet.schema_arrow.names
        absent = [c for c in columns if c not in names]
        if absent:
            raise RawDataError(f"{path}: no column {', '.join(absent)} (it has: {', '.join(names)})")
        row = 0
        for batch in parquet.iter_batches(batch_size=batch_rows, columns=columns, use_threads=False):
            values = {name: batch.column(name).to_pylist() for name in columns}
            for i in range(batch.num_rows):
                yield row, {name: column[i] for name, column in values.items()}
                row += 1
    except (pa.ArrowException, OSError) as exc:
        raise RawDataError(f"{path}: not a readable parquet file ({exc}); download it again") from None


class _Match:
    """The rows each record's query fits, and the image digest of each such row."""

    def __init__(self, files: list[Path], recipe: dict, queries: set[recordmatch.Query]):
        by_question: dict[str, list[recordmatch.Query]] = defaultdict(list)
        for query in queries:
            by_question[query.question].append(query)
        self.rows: dict[recordmatch.Query, list[tuple[str, int]]] = defaultdict(list)
        self.question_rows: dict[str, int] = defaultdict(int)  # rows with the question alone, for messages
        for path in files:
            for row, fields in _text_rows(path, recipe["columns"]):
                text = recipe["code"](fields)
                if text.question in by_question:
                    self.question_rows[text.question] += 1
                for query in by_question.get(text.question, ()):
                    if recordmatch.fits(query, text):
                        self.rows[query].append((str(path), row))
        self.digest: dict[tuple[str, int], str | None] = {}
        wanted = defaultdict(set)
        for found in self.rows.values():
            for file, row in found:
                wanted[file].add(row)
        for file, rows in wanted.items():
            for image in iter_images(Path(file), recipe["image"], rows=rows):  # their row groups only
                self.digest[(file, image.row)] = None if image.data is None else hashlib.sha256(image.data).hexdigest()

    def images(self, query: recordmatch.Query) -> dict[str, tuple[str, int]]:
        """digest -> the first row showing that image, over the rows the query fits (rows without image out)."""
        found: dict[str, tuple[str, int]] = {}
        for key in self.rows.get(query, ()):
            digest = self.digest.get(key)
            if digest is not None:
                found.setdefault(digest, key)
        return found


def _where(record) -> str:
    return f"{record.file} record {record.number}"


def plan(ctx) -> list[tuple[str, str, int]]:
    """(path under the subset folder, parquet file, row) per path the records name; bad items go to the
    problems (on_bad_input: skip) or stop the job, all of them listed and counted."""
    side, recipe = ctx.params["records"], ctx.recipe
    data_basedir = Path(ctx.settings.data_basedir)
    named = releasenames.named_records(data_basedir, ctx.registry, ctx.subset, side)
    if not named:
        raise RawDataError("; ".join(releasenames.missing(data_basedir, ctx.registry, ctx.subset, side)))
    files = _parquet_files(ctx)
    queries = [QUERIES[side](r.record) for r in named]  # by position: a record holds a dict, never hashed
    match = _Match(files, recipe, {q for q in queries if q is not None})
    tried = f"the {len(files)} files {ctx.params['files']} of {ctx.raw_dir(ctx.params.get('source'))}"
    bad: list[tuple[str, str]] = releasenames.unsafe_items(named)
    by_path: dict[str, list[int]] = defaultdict(list)
    for index, record in enumerate(named):
        for path in record.paths:
            by_path[path].append(index)
        query = queries[index]
        if not record.paths:  # its paths are all unsafe: a bad item already, no image to find
            continue
        if query is None:
            field = "qry_text" if side == releasenames.TEST else "its last user message"
            bad.append((_where(record), f"{_where(record)}: no question text to match (in {field})"))
        elif not match.images(query):
            asked, imageless = match.question_rows.get(query.question, 0), len(match.rows.get(query, ()))
            if imageless:
                why = f"its {imageless} matching rows have no image"
            elif asked:
                why = f"{asked} rows have its question but not its answer/choices"
            else:
                why = "no row has its question"
            bad.append((_where(record), f"{_where(record)}: matches no row of {tried} ({why}); tried {query.shown()}"))
    items = []
    subset_dir = Path(os.path.normpath(ctx.subset_dir))
    for path, indices in sorted(by_path.items()):
        found = [(named[i], match.images(queries[i])) for i in indices if queries[i] is not None]
        item = _decide(path, [(record, images) for record, images in found if images], bad)
        if item is None:
            continue
        relative = os.path.relpath(data_basedir / path, subset_dir)
        if relative.startswith(".."):
            bad.append((path, f"{_where(named[indices[0]])}: path {path!r} is outside {subset_dir}"))
            continue
        items.append((relative, *item))
    ctx.bad_items(bad, "the release's records")
    return items


def _decide(path: str, per_record: list, bad: list) -> tuple[str, int] | None:
    """The one image that every matched record of the path fits, as (file, row); None, with a bad item, when
    they disagree or leave it open (a record matching nothing is a bad item of its own)."""
    if not per_record:
        return None
    common = set.intersection(*(set(images) for _, images in per_record))
    if len(common) == 1:
        return per_record[0][1][common.pop()]
    where = ", ".join(
        f"record {r.number} -> rows {sorted(f'{Path(k[0]).name}:{k[1]}' for k in images.values())}"
        for r, images in per_record
    )
    files = ", ".join(sorted({str(r.file) for r, _ in per_record}))
    if not common:
        bad.append((path, f"{path}: its records in {files} point at different images ({where})"))
    else:
        bad.append(
            (path, f"{path}: its records in {files} fit {len(common)} images alike ({where}); which one is not known")
        )
    return None


def produce(ctx, items):
    wanted: dict[str, dict[int, list[str]]] = defaultdict(lambda: defaultdict(list))
    for relative, file, row in items:
        wanted[file][row].append(relative)
    image = ctx.recipe["image"]
    for file, rows in wanted.items():
        for found in iter_images(Path(file), image, rows=set(rows)):
            for relative in rows[found.row]:
                yield Result(relative, _output(ctx, relative, found), (Path(file),))


def _output(ctx, relative: str, found):
    data, _ = image_bytes(found)
    yield Data(ctx.subset_path(relative), data)
