"""Only the images a subset needs, out of zip archives (PMC-VQA, OmniMedVQA).

params:
  dataset   a recipe (the kind's `recipes` in a dataset folder's recipes.yaml): where the list of needed images is (its
            code: pmc_names, omnimedvqa_names), which archives hold them, under which member names (and, for
            OmniMedVQA, an extracted folder that may hold them instead)
  name      the output path under the subset folder: {path}, the image name as the list gives it
Recipes:
  pmc_vqa      the Figure_path column of the test CSV(s); members figures/<Figure_path> of images*.zip
  omnimedvqa   image_path of the QA_information JSON records; members OmniMedVQA/<image_path> of OmniMedVQA.zip,
               or the extracted OmniMedVQA/ folder
Members with absolute names, '..' escapes, links, NUL bytes, backslashes or components over 255 bytes are never
extracted; they are listed in the log, and a listed image that only such a member holds is bad input of its
item (named; on_bad_input applies). Names that
the list gives but no archive holds are counted in the log (PMC-VQA has about 31).
"""

from __future__ import annotations

import csv
import glob as globlib
import os
from pathlib import Path

from preprocess.convert.outputs import Data, Result
from preprocess.errors import RawDataError, UnsafePathError
from preprocess.formats import textparse
from preprocess.formats.archive import SafeArchive, meant_name
from preprocess.formats.fsutil import safe_relative


def _glob(base: Path, pattern: str) -> list[Path]:
    return sorted(Path(p) for p in globlib.glob(os.path.join(globlib.escape(str(base)), pattern), recursive=True))


def pmc_names(ctx, base: Path) -> list[str]:
    names: list[str] = []
    for table in _glob(base, "test*.csv"):
        try:
            with open(ctx.raw_file(table), encoding="utf-8-sig", newline="") as handle:
                reader = csv.DictReader(handle)
                if "Figure_path" not in (reader.fieldnames or []):
                    raise RawDataError(f"{table}: no Figure_path column (it has: {reader.fieldnames})")
                for row in reader:
                    if row["Figure_path"] is None:
                        raise RawDataError(f"{table} line {reader.line_num}: no Figure_path cell; fix the row")
                    if row["Figure_path"].strip():
                        names.append(row["Figure_path"].strip())
        except (OSError, UnicodeDecodeError, csv.Error) as exc:
            raise RawDataError(f"{table}: not a readable UTF-8 CSV ({exc}); download it again") from None
    return names


def omnimedvqa_names(ctx, base: Path) -> list[str]:
    found = [(path, ctx.raw_file(path).read_bytes()) for path in _glob(base, "**/QA_information/*/*.json")]
    if not found:  # still zipped: read the records out of the archive
        for archive in _archives(ctx):
            members = sorted(m for m in archive.members if "/QA_information/" in m and m.endswith(".json"))
            found += [(f"{archive.path}: {m}", archive.read(m)) for m in members]
            archive.close()
    documents = [textparse.json_value(data, where) for where, data in found]
    return [str(record["image_path"]).strip() for document in documents for record in document]


def plan(ctx) -> list[str]:
    return sorted(set(ctx.recipe["code"](ctx, ctx.raw_dir(ctx.params.get("source")))))


def _archives(ctx) -> list[SafeArchive]:
    base = ctx.raw_dir(ctx.params.get("source"))
    return [SafeArchive(ctx.raw_file(path)) for path in _glob(base, ctx.recipe["archives"])]


def _read(name: str, recipe: dict, index: dict[str, SafeArchive], folder: Path, raw_file) -> bytes | None:
    for template in recipe["members"]:
        member = template.format(path=name)
        if member in index:
            return index[member].read(member)
    if "folder" in recipe and os.path.lexists(folder / recipe["folder"] / name):  # an extracted copy
        return raw_file(folder / recipe["folder"] / name).read_bytes()
    return None


def produce(ctx, items):
    recipe = ctx.recipe
    archives = _archives(ctx)
    index = {name: archive for archive in archives for name in archive.members}
    refused = {}  # the plain name a refused member stands for -> (archive, member as stored, why)
    for archive in archives:
        for member, problem in sorted(archive.refused.items()):
            ctx.log(f"refused member {member!r} of {archive.path}: {problem}")
            refused.setdefault(meant_name(member), (archive.path, member, problem))
    folder = ctx.raw_dir(ctx.params.get("source"))
    absent = []
    reads = tuple(archive.path for archive in archives)
    try:
        for name in items:
            yield Result(name, _outputs(ctx, name, recipe, (index, refused), folder, absent), reads)
    finally:
        for archive in archives:
            archive.close()
    if absent:
        ctx.log(f"{len(absent)} listed images are in no archive and were skipped")


def _refuse_if_unsafe(name: str, recipe: dict, refused: dict) -> None:
    """A listed image that only a refused member holds is bad input of its item, named (not 'absent')."""
    for template in recipe["members"]:
        if template.format(path=name) in refused:
            archive, member, problem = refused[template.format(path=name)]
            raise RawDataError(
                f"{archive}: member {member!r} (the image {name}) is never extracted: its name {problem}; "
                "the archive is damaged or not the published one, download it again"
            )


def _outputs(ctx, name: str, recipe: dict, indexes: tuple[dict, dict], folder: Path, absent: list):
    try:
        relative = safe_relative(name, f"{ctx.params['dataset']} image name")
        target = safe_relative(ctx.name("name", path=relative), "output name")
    except UnsafePathError as exc:  # bad input of this item: it stops the job or is skipped and counted
        raise RawDataError(f"{exc}; the image list is damaged or not the published one") from None
    index, refused = indexes
    data = _read(name, recipe, index, folder, ctx.raw_file)
    if data is None:
        _refuse_if_unsafe(name, recipe, refused)
        absent.append(name)
        return
    yield Data(ctx.subset_path(target), data)
