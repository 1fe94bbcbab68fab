"""Images out of Hugging Face parquet files, named by the subset's `name` template (under the subset folder).
(The VQA tables whose names only the release's records give are preprocess/convert/parquet_records.py.)

params:
  dataset     a recipe (the kind's `recipes` in a dataset folder's recipes.yaml): which files (and in which
              order), which columns, which naming rule (NAMING_RULES below). Its `files` are paths or globs under
              the source's folder, or `{spec, split}` entries: the files of one of the source's file specs (its
              path, or its glob's matches in order: one complete set of shards when the spec says `shards`), named
              by `split`
  name        the output path under the subset folder; its fields depend on the recipe's rule:
                sequence     {split} (the entry's split, else the file stem before the first "-"), {seq} (one
                             counter over the rows of the files in the recipe's order, from 1), {ext} (ROCO-QA)
                split_table  {split} (from the split CSV), {label} (the class name of the label column),
                             {fold} (position of the file in the recipe's list, from 1), {row} (PanNuke)
  splits      sequence, split_table: the splits written (others are skipped, with a line in the log). The
              sequence rule reads the files of the written splits, the row counts (footers only) of the files
              before the last of them in the recipe's order, and nothing of the files after it
  labels      split_table: label value -> class name; a row whose label is null or outside 0..len(labels)-1 is
              skipped and counted in the log, as the PanNuke script skips it (a label of another type is bad input)
  split_keys  split_table: the CSV key of a row, templates tried in order (same fields as `name`)
  duplicate   split_table: the name used when `name` was already written by this job: {stem}, {k} (1, 2, ...),
              {suffix}
Bytes are written as they are when they are PNG, JPEG, GIF, BMP, TIFF or WebP; other bytes are decoded with
Pillow and written as PNG, or stop the job naming file and row. The split_table rule decodes every image and
writes PNG (modes Pillow writes as they are, others as RGB), as the benchmark's PanNuke script does.
Rows without an image are skipped and counted in the log.
"""

from __future__ import annotations

import glob as globlib
import hashlib
import io
import os
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from preprocess.convert.outputs import Data, Result
from preprocess.errors import RawDataError
from preprocess.formats import hfshards
from preprocess.formats.csvio import read_split_csv
from preprocess.formats.imagetype import image_extension
from preprocess.formats.parquet import iter_images
from preprocess.formats.pngio import encode_png
from preprocess.formats.rawroot import Boundary

_GLOB_CHARACTERS = set("*?[")


def _files(base: Path, patterns: list[str], what: str) -> list[Path]:
    """The files of a recipe: literal names in their order (each one required), or sorted glob matches."""
    if not any(_GLOB_CHARACTERS & set(p) for p in patterns):
        missing = [p for p in patterns if not os.path.lexists(base / p)]
        if missing:
            raise RawDataError(
                f"{what}: missing {', '.join(str(base / p) for p in missing)}; the benchmark reads all of "
                f"{', '.join(patterns)} (in that order): download them again, keeping the upstream names"
            )
        return [base / p for p in patterns]
    files = sorted(
        {Path(p) for pattern in patterns for p in globlib.glob(os.path.join(globlib.escape(str(base)), pattern))}
    )
    if not files:
        raise RawDataError(f"{what}: no parquet file matches {patterns} under {base}")
    return files


def row_count(path: Path) -> int:
    try:
        return pq.ParquetFile(path).metadata.num_rows
    except Exception as exc:  # pyarrow raises several types for a damaged footer
        raise RawDataError(f"{path}: not a readable parquet file ({exc}); download it again") from None


def list_rows(base: Path, patterns: list[str], what: str, log=print, raw_file=None) -> list[tuple[str, int]]:
    """(file, row) of every row of the recipe's files, in the recipe's file order, from their footers only.
    Each file passes `raw_file` first (ConversionContext.raw_file: a readable regular file inside the raw root;
    default: inside `base`). A file without rows is bad input when the recipe names its files (it would shift a
    counter over them), else a line in the log."""
    raw_file = raw_file or Boundary(base).check
    rows = []
    for path in _files(base, patterns, what):
        count = row_count(raw_file(path))
        if count == 0:
            message = f"{path}: 0 rows, no image to extract; download it again"
            if not any(_GLOB_CHARACTERS & set(p) for p in patterns):
                raise RawDataError(f"{message} (the recipe reads {', '.join(patterns)} in that order)")
            log(f"{message} (left out)")
        rows += [(str(path), row) for row in range(count)]
    return rows


def _spec_files(ctx, base: Path, file_id: str) -> list[Path]:
    """The files of one of the source's file specs: its first present path, or its glob's sorted matches (one
    complete set of shards when the spec says so); RawDataError naming the file and what it holds."""
    spec = ctx.source(ctx.params.get("source")).file(file_id)
    what = f"{ctx.subset.key}: {base / spec.label}" + (f" ({spec.about})" if spec.about else "")
    if spec.paths:
        found = [base / p for p in spec.paths if os.path.lexists(base / p)]
        if not found:
            raise RawDataError(f"{what} is missing; download it, keeping the upstream name")
        return found[:1]
    files = sorted(Path(p) for p in globlib.glob(os.path.join(globlib.escape(str(base)), spec.glob)))
    if not files:
        raise RawDataError(f"{what}: no file matches; download it, keeping the upstream names")
    problem = hfshards.set_problem([f.relative_to(base).as_posix() for f in files]) if spec.shards else None
    if problem is not None:
        raise RawDataError(f"{what}: {problem}")
    return files


def _sequence_files(ctx) -> list[tuple[str, Path]]:
    """(the split its rows are named by, the file) of the recipe's files up to the last one of a written split
    (params.splits; default all), in the recipe's order: the files after it are not even looked for."""
    base, entries, wanted = ctx.raw_dir(ctx.params.get("source")), ctx.recipe["files"], ctx.params.get("splits")
    if all(isinstance(entry, str) for entry in entries):  # each file's stem before its first "-" names its split
        files = [(_stem_split(str(path)), path) for path in _files(base, entries, ctx.subset.key)]
    else:
        files = [(entry["split"], entry["spec"]) for entry in entries]
    last = max((i for i, (split, _) in enumerate(files) if wanted is None or split in wanted), default=-1)
    return [
        (split, path)
        for split, found in files[: last + 1]
        for path in ([found] if isinstance(found, Path) else _spec_files(ctx, base, found))
    ]


def numbered(ctx) -> list[tuple[str, Path, int, int]]:
    """(split, file, counter value of its row 0, rows) of the sequence rule's files up to the last one whose
    split is written: those before it are read for their row counts (the footer) alone, and the files after it
    not at all, so a split needs only the files its numbers depend on."""
    result, counted = [], 0
    for split, path in _sequence_files(ctx):
        rows = row_count(ctx.raw_file(path))
        if rows == 0:
            raise RawDataError(
                f"{path}: 0 rows, no image to extract; download it again (the benchmark numbers every image with "
                f"one counter over the rows of {_order(ctx)}, in that order)"
            )
        result.append((split, path, counted + 1, rows))
        counted += rows
    return result


def _order(ctx) -> str:
    source = ctx.source(ctx.params.get("source"))
    entries = ctx.recipe["files"]
    return ", ".join(e if isinstance(e, str) else source.file(e["spec"]).label for e in entries)


def plan(ctx) -> list[tuple[str, int]]:
    recipe = ctx.recipe
    if recipe["rule"] == "sequence":
        wanted = ctx.params.get("splits")
        return [
            (str(path), row)
            for split, path, _, rows in numbered(ctx)
            if wanted is None or split in wanted
            for row in range(rows)
        ]
    return list_rows(ctx.raw_dir(ctx.params.get("source")), recipe["files"], ctx.subset.key, ctx.log, ctx.raw_file)


def produce(ctx, items):
    recipe = ctx.recipe
    namer = NAMING_RULES[recipe["rule"]](ctx, recipe)
    wanted: dict[str, set[int]] = {}
    for file, row in items:
        wanted.setdefault(file, set()).add(row)
    without_image = []
    for file, rows in wanted.items():  # the plan's file order: the sequence rule counts in it
        for record in iter_images(Path(file), recipe["image"], recipe["fields"]):
            if record.row in rows:
                label = f"{record.file} row {record.row}"
                if record.data is None:
                    without_image.append(label)
                yield Result(label, _outputs(ctx, namer, record), (file,))
    if without_image:
        ctx.log(f"{len(without_image)} rows have no image and were skipped: {', '.join(without_image[:5])}")
    namer.close()


def _outputs(ctx, namer, record):
    if record.data is None:
        return
    named = namer(record)
    if named is not None:
        relative, data = named
        yield Data(ctx.subset_path(relative), data)


def image_bytes(record) -> tuple[bytes, str]:
    """The bytes as they are when they are a known image format, else decoded and written as PNG."""
    extension = image_extension(record.data)
    if extension:
        return record.data, extension
    with _open_image(record) as image:
        array = np.asarray(image.convert("RGB" if image.mode not in ("L", "I;16") else image.mode))
    return encode_png(array), ".png"


def _open_image(record):
    from PIL import Image, UnidentifiedImageError

    try:
        image = Image.open(io.BytesIO(record.data))
        image.load()
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise RawDataError(f"{record.file}: row {record.row} holds bytes that are not an image ({exc})") from None
    return image


# Modes Pillow writes to PNG as they are; any other is converted to RGB first (the benchmark's PanNuke rule).
_PNG_MODES = ("1", "L", "LA", "P", "RGB", "RGBA", "I", "I;16")


def _decoded_png(record) -> bytes:
    """The image decoded and saved as PNG: the same pixels and mode as Pillow's own save."""
    with _open_image(record) as image:
        if image.mode not in _PNG_MODES:
            image = image.convert("RGB")
        if image.mode in ("L", "RGB", "I;16"):  # the pipeline's deterministic encoder
            return encode_png(np.asarray(image))
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        return buffer.getvalue()


def _stem_split(file: str) -> str:
    return Path(file).stem.split("-")[0]


class _Rule:
    """Names the rows of one job; `close()` writes its log lines."""

    def __init__(self, ctx, recipe: dict):
        self.ctx, self.recipe, self.template = ctx, recipe, ctx.params["name"]

    def close(self) -> None:
        pass


class _Sequence(_Rule):
    """{split}_sample_{seq}: one counter over every row of the recipe's files, in their fixed order."""

    def __init__(self, ctx, recipe):
        super().__init__(ctx, recipe)
        # file -> (the split its rows are named by, counter value of its row 0)
        self.first = {str(path): (split, first) for split, path, first, _ in numbered(ctx)}
        self.ids: dict[str, tuple[str, str]] = {}  # image_id -> (digest of its bytes, where first seen)
        self.reused: list[str] = []

    def __call__(self, record):
        data, extension = image_bytes(record)
        split, first = self.first[str(record.file)]
        self._note_id(record, data)
        return self.template.format(split=split, seq=first + record.row, ext=extension), data

    def _note_id(self, record, data: bytes) -> None:
        """An image_id met again with other bytes: both rows are written (the counter names them), and the
        log says so, since a reader that goes by ids would see only one of them."""
        image_id = record.fields.get("image_id")
        if image_id is None:
            return
        digest, where = hashlib.sha256(data).hexdigest(), f"{record.file} row {record.row}"
        first = self.ids.setdefault(str(image_id), (digest, where))
        if first[0] != digest:
            self.reused.append(f"{where}: image_id {image_id!r} also names {first[1]}, with other bytes")

    def close(self) -> None:
        if self.reused:
            shown = "; ".join(self.reused[:5]) + ("; ..." if len(self.reused) > 5 else "")
            self.ctx.log(
                f"{len(self.reused)} rows reuse an image_id with other bytes (each written by its counter): {shown}"
            )


class _SplitTable(_Rule):
    """Class folders of the label column, split from the split CSV; every image decoded and written as PNG.
    A recipe of this rule lists the parameters it reads (labels, split_keys, splits, duplicate) in its
    `requires`, so the registry's load checks that a subset gives them."""

    def __init__(self, ctx, recipe):
        super().__init__(ctx, recipe)
        base = ctx.raw_dir(ctx.params.get("source"))
        table = read_split_csv(base / recipe["split_csv"], ("image_path",))
        self.split = {key: value.lower() for key, value in table.items()}
        files = _files(base, recipe["files"], ctx.subset.key)
        self.fold = {str(path): number for number, path in enumerate(files, start=1)}
        self.written: set[str] = set()
        self.unsplit, self.other_split = 0, {}
        self.unlabelled: list[str] = []  # rows whose label is null or outside the label list

    def __call__(self, record):
        fields = self._fields(record)
        if fields is None:
            return None
        relative = self._free(self.template.format(**fields))
        self.written.add(relative)
        return relative, _decoded_png(record)

    def _fields(self, record) -> dict | None:
        labels, column = self.ctx.params["labels"], self.recipe["label_column"]
        cell = record.fields[column]
        if cell is not None and (not isinstance(cell, int) or isinstance(cell, bool)):
            raise RawDataError(
                f"{record.file} row {record.row}: {column} {cell!r} is not a label value 0..{len(labels) - 1} "
                f"({', '.join(labels)}); the file is not the published one, download it again"
            )
        if cell is None or not 0 <= cell < len(labels):
            # the benchmark's script warns and skips a row whose label is empty or not in its name table
            self.unlabelled.append(f"{record.file} row {record.row} ({column} {cell!r})")
            return None
        fields = {"label": labels[cell], "fold": self.fold[str(record.file)], "row": record.row}
        split = next((self.split[k] for k in self._keys(fields) if k in self.split), None)
        if split is None:
            self.unsplit += 1
            return None
        if split not in self.ctx.params["splits"]:
            self.other_split[split] = self.other_split.get(split, 0) + 1
            return None
        return {**fields, "split": split}

    def _keys(self, fields: dict):
        return (template.format(**fields) for template in self.ctx.params["split_keys"])

    def _free(self, relative: str) -> str:
        """`relative`, or the first `duplicate` name not written yet when this job has written it already."""
        folder, name = os.path.split(relative)
        stem, suffix = os.path.splitext(name)
        k = 1
        while relative in self.written:
            relative = os.path.join(folder, self.ctx.params["duplicate"].format(stem=stem, k=k, suffix=suffix))
            k += 1
        return relative

    def close(self) -> None:
        if self.unlabelled:
            shown = "; ".join(self.unlabelled[:5]) + ("; ..." if len(self.unlabelled) > 5 else "")
            last = len(self.ctx.params["labels"]) - 1
            self.ctx.log(
                f"{len(self.unlabelled)} rows have no {self.recipe['label_column']} in 0..{last} and were skipped, "
                f"as the benchmark's script skips them: {shown}"
            )
        if self.unsplit:
            self.ctx.log(f"{self.unsplit} rows are not in {self.recipe['split_csv']} and were skipped")
        for split, count in sorted(self.other_split.items()):
            self.ctx.log(f"{count} rows of split {split!r} were skipped (params.splits: {self.ctx.params['splits']})")


NAMING_RULES = {"sequence": _Sequence, "split_table": _SplitTable}
