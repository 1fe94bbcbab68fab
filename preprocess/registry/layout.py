"""The one place that builds paths: raw folders, image roots, task files, workflow results."""

from __future__ import annotations

import os
from pathlib import Path

from preprocess.errors import RawDataError, RegistryError
from preprocess.formats.fsutil import name_problem
from preprocess.registry.model import Source, Subset, Task

RESULTS = Path("results")  # the workflow's results folder, relative to its working directory
# The workflow's files, relative to the results folder, with the rules' wildcards: the rules and the steps
# take them from here.
CHECK_REPORT = "check/sources/{source}.json"
NEED_MISSING = "need/{source}-missing.txt"  # the needed raw files `check` did not find (medheb need)
SHARD_MANIFEST = "convert/{group}/{folder}/{conversion}.{shard}-of-{shards}.tsv"
SUBSET_REPORT = "validation/subsets/{group}/{folder}.json"
# a shard of a subset's validation: the answers of its slice of the paths, of which the merge makes SUBSET_REPORT
VALIDATE_SHARD = "validation/shards/{group}/{folder}/{shard}-of-{shards}.json"
CONTACT_SHEET = "report/contact/{group}/{folder}.png"
PLAN = "plan.json"
NOT_BUILT = "not-built.md"
SUMMARY = "validation/summary.json"
SUMMARY_TEXT = "validation/summary.txt"
COMPARED = "validation/compared.tsv"  # the files found in place with other bytes, kept, and how they compare
OURS = "compared"  # this build's file of each one whose pixels differ, at its DATA_BASEDIR path
PASSED = "validation/passed.txt"
EVAL_CONFIG = "eval-config/{group}.yaml"
FINGERPRINTS = "fingerprints.tsv"  # the pixel fingerprints of the built tree (preprocess/verify/attest.py)
SUBSET_FINGERPRINTS = "attest/{group}/{folder}.tsv"  # one subset's, of which the workflow makes FINGERPRINTS
ATTEST_SHARD = "attest/shards/{group}/{folder}/{shard}-of-{shards}.tsv"  # a slice of them, merged into that


def raw_dir(raw_root: Path, source: Source) -> Path:
    """The folder that holds the source's files: `<raw_root>/<raw_dir>`, or the project folder inside it that a
    whole-project download adds (sources.yaml `project_folder`) when that is a folder there, not a link (a link
    further down than the source's folder would carry reads out of the raw root)."""
    base = raw_root / source.raw_dir
    if source.project_folder:
        project = base / source.project_folder
        if project.is_dir() and not project.is_symlink():
            return project
    return base


def image_root(data_basedir: Path, subset: Subset) -> Path | None:
    return None if subset.image_root is None else data_basedir / subset.image_root


# What the release leaves in each image folder of a subset it may not redistribute (`redistributed: false`).
PLACEHOLDER = "LICENSE_NOTICE.md"


def placeholder_only(folder: Path) -> bool:
    """Whether `folder` holds nothing but the release's placeholder: a restricted subset not built yet."""
    with os.scandir(folder) as entries:
        return all(entry.name == PLACEHOLDER for entry in entries)


def task_image_root(data_basedir: Path, task: Task) -> Path | None:
    """The folder a task file's record paths are joined to, as the benchmark's evaluation joins them."""
    return None if task.image_root is None else data_basedir / task.image_root


def subset_dir(data_basedir: Path, subset: Subset) -> Path:
    """The first folder of the image root under 2D_Images/ or 3D_Images/ (e.g. 2D_Images/BloodMNIST)."""
    return data_basedir / image_folder(subset)


def image_folder(subset: Subset) -> str:
    """subset_dir relative to DATA_BASEDIR, as text ('2D_Images/BloodMNIST'): every image of the subset, test
    and train, and the release's placeholder of a restricted one, lie under it."""
    return "/".join(Path(subset.image_root).parts[:2])


def task_dir(data_basedir: Path, subset: Subset) -> Path:
    return data_basedir / subset.group / subset.folder


def task_files(data_basedir: Path, subset: Subset) -> list[Path]:
    return [task_dir(data_basedir, subset) / name for name in subset.task_files]


def subset_slug(subset: Subset) -> str:
    """A file-name-safe form of the subset key (group and folder joined by '__')."""
    return f"{subset.group}__{subset.folder}"


def shard_manifest(results: Path, subset: Subset, conversion: str, shard: int, shards: int) -> Path:
    fields = {"group": subset.group, "folder": subset.folder, "conversion": conversion}
    return results / SHARD_MANIFEST.format(**fields, shard=shard, shards=shards)


def stage_shards(results: Path, pattern: str, subset: Subset, shards: int) -> list[Path]:
    """The files of a subset's validation (VALIDATE_SHARD) or fingerprint (ATTEST_SHARD) cut into `shards`."""
    fields = {"group": subset.group, "folder": subset.folder, "shards": shards}
    return [results / pattern.format(**fields, shard=shard) for shard in range(shards)]


def check_report(results: Path, source_id: str) -> Path:
    return results / CHECK_REPORT.format(source=source_id)


def subset_file(results: Path, pattern: str, subset_key: str) -> Path:
    """A per-subset result (SUBSET_REPORT, CONTACT_SHEET) of the subset 'group/folder'."""
    group, folder = subset_key.split("/")
    return results / pattern.format(group=group, folder=folder)


def need_missing(results: Path, source_id: str) -> Path:
    return results / NEED_MISSING.format(source=source_id)


def checksum_cache(results: Path, source_id: str) -> Path:
    return results / "check" / "md5-cache" / f"{source_id}.json"


def fill(template: str, fields: dict, where: str) -> str:
    """A name template of the registry filled with an item's fields; a template asking for a field the
    recipe does not give is named (`where`: the subset, conversion and parameter)."""
    try:
        name = template.format(**fields)
    except (KeyError, IndexError, ValueError, AttributeError) as exc:
        raise RegistryError(
            f"{where} {template!r} uses a field this recipe does not fill ({type(exc).__name__}: {exc}); "
            f"its fields are {', '.join(sorted(fields)) or 'none'}"
        ) from None
    problem = name_problem(name)
    if problem is not None:  # a field taken from raw data (a CSV cell, a parquet column, an archive member)
        raise RawDataError(
            f"{where}: the name {name[:120]!r} made from the raw data {problem}; the raw file is damaged or not "
            "the published one (leave the item out with on_bad_input: skip)"
        )
    return name


def shard_manifests(results: Path | None, subset: Subset) -> list[Path]:
    """The subset's shard manifests in a workflow results folder (none when there is no such folder)."""
    if results is None:
        return []
    folder = shard_manifest(Path(results), subset, "x", 0, 1).parent
    return sorted(folder.glob("*.tsv")) if folder.is_dir() else []
