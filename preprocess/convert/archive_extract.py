"""Only the images a subset needs, out of zip archives (PMC-VQA, OmniMedVQA).

params:
  dataset   pmc_vqa: images named by the Figure_path column of the test CSV(s), looked up in images*.zip
            (members figures/<Figure_path>), written as <Figure_path> under the image root;
            omnimedvqa: images named by image_path in the QA_information JSON records, looked up in
            OmniMedVQA.zip (members OmniMedVQA/<image_path>) or an extracted OmniMedVQA/ folder, written as
            <image_path> under the image root.
Members with absolute names, '..' escapes or links are never extracted; they are listed in the log.
Names that the CSV or JSON lists but no archive holds are counted in the log (PMC-VQA has about 31).
"""

from __future__ import annotations

import csv
import glob as globlib
import json
import os
from pathlib import Path

from preprocess.convert.base import write_output
from preprocess.errors import RawDataError, UnsafePathError
from preprocess.extract.archive import SafeArchive
from preprocess.fsutil import safe_relative


def _glob(base: Path, pattern: str) -> list[Path]:
    return sorted(Path(p) for p in globlib.glob(os.path.join(globlib.escape(str(base)), pattern), recursive=True))


def _wanted(ctx) -> list[str]:
    base = ctx.raw_dir(ctx.params.get("source"))
    names: list[str] = []
    if ctx.params["dataset"] == "pmc_vqa":
        for table in _glob(base, "test*.csv"):
            with open(table, encoding="utf-8-sig", newline="") as handle:
                reader = csv.DictReader(handle)
                if "Figure_path" not in (reader.fieldnames or []):
                    raise RawDataError(f"{table}: no Figure_path column (it has: {reader.fieldnames})")
                names += [row["Figure_path"].strip() for row in reader if row["Figure_path"].strip()]
    else:
        documents = [path.read_bytes() for path in _glob(base, "**/QA_information/*/*.json")]
        if not documents:  # still zipped: read the records out of the archive
            for archive in _archives(ctx):
                documents += [
                    archive.read(m) for m in sorted(archive.members) if "/QA_information/" in m and m.endswith(".json")
                ]
                archive.close()
        for document in documents:
            names += [str(record["image_path"]).strip() for record in json.loads(document)]
    return sorted(set(names))


def plan(ctx) -> list[str]:
    return _wanted(ctx)


def _archives(ctx) -> list[SafeArchive]:
    base = ctx.raw_dir(ctx.params.get("source"))
    pattern = "images*.zip" if ctx.params["dataset"] == "pmc_vqa" else "OmniMedVQA.zip"
    return [SafeArchive(path) for path in _glob(base, pattern)]


def _member_for(name: str, dataset: str, index: dict[str, tuple]) -> tuple | None:
    candidates = [f"figures/{name}", name] if dataset == "pmc_vqa" else [f"OmniMedVQA/{name}", name]
    for candidate in candidates:
        if candidate in index:
            return index[candidate]
    return None


def build(ctx, items) -> None:
    dataset = ctx.params["dataset"]
    archives = _archives(ctx)
    index = {name: (archive, name) for archive in archives for name in archive.members}
    for archive in archives:
        for member, problem in sorted(archive.refused.items()):
            ctx.log(f"refused member {member!r} of {archive.path}: {problem}")
    folder = ctx.raw_dir(ctx.params.get("source"))
    root = ctx.image_root
    data_basedir, overwrite = ctx.settings.data_basedir, ctx.settings.overwrite_existing
    absent = 0
    try:
        for name in ctx.track(items):
            try:
                relative = safe_relative(name, f"{dataset} image name")
            except UnsafePathError as exc:
                ctx.log(f"refused: {exc}")
                continue
            found = _member_for(name, dataset, index)
            if found is not None:
                data = found[0].read(found[1])
            elif dataset == "omnimedvqa" and (folder / "OmniMedVQA" / relative).is_file():
                data = (folder / "OmniMedVQA" / relative).read_bytes()
            else:
                absent += 1
                continue
            ctx.add_records([write_output(root / relative, data, data_basedir, overwrite)])
    finally:
        for archive in archives:
            archive.close()
    if absent:
        ctx.log(f"{absent} listed images are in no archive and were skipped")
