"""The pipeline's steps as functions: the Snakemake rules and the CLI both call these."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from preprocess import layout, reports, tables, validate
from preprocess.convert import ConversionContext, kind_module, run_conversion
from preprocess.errors import PreprocessError, RawDataError
from preprocess.fsutil import atomic_write_bytes, atomic_write_json, atomic_write_text
from preprocess.manifest import read_manifest
from preprocess.plan import SKIP, SubsetPlan, explain_blocked, plan_from_json, plan_subsets, plan_to_json
from preprocess.rawcheck import SourceCheck, check_all, subset_missing
from preprocess.validate import Failure, JsonReport


def check_sources(settings, registry, source_ids, results: Path, report_dir: Path | None = None):
    checks = check_all(registry, settings, source_ids, results)
    if report_dir is not None:
        for source_id, check in checks.items():
            atomic_write_json(report_dir / f"{source_id}.json", check.to_json())
    return checks


def read_checks(paths) -> dict[str, SourceCheck]:
    checks = {}
    for path in paths:
        check = SourceCheck.from_json(json.loads(Path(path).read_text(encoding="utf-8")))
        checks[check.source] = check
    return checks


def make_plan(
    settings, registry, checks, plan_out: Path, instructions_out: Path, table_out: Path | None = None
) -> list[SubsetPlan]:
    """Decide what is built; print the check and plan tables; write instructions for what is missing."""
    print(reports.check_table(registry, checks))
    if table_out is not None:
        headers = ["source", "status", "access", "problems", "instructions"]
        rows = [
            [
                source_id,
                check.status,
                registry.source(source_id).access,
                "; ".join(check.reasons[:3]),
                f"python -m preprocess info {source_id}",
            ]
            for source_id, check in sorted(checks.items())
        ]
        atomic_write_text(table_out, "\n".join("\t".join(row) for row in [headers, *rows]) + "\n")
        present = sum(1 for row in rows if row[1] == "present")
        note = f"{present} of {len(rows)} raw downloads present. The last column prints what to download and where."
        page = tables.html_page("Raw downloads", headers, rows, note)
        atomic_write_text(Path(table_out).with_suffix(".html"), page)
    plans = plan_subsets(registry, settings.subsets, checks)
    print()
    print(reports.plan_table(plans, checks, registry))
    instructions = reports.instructions_text(registry, checks) or "Every checked source is present.\n"
    atomic_write_text(instructions_out, instructions)
    print(f"\nWhat to download for the subsets not built, step by step: {instructions_out}")
    atomic_write_json(plan_out, plan_to_json(plans))
    return plans


def convert(
    settings,
    registry,
    subset_name: str,
    conversion_name: str | None,
    shard: int,
    shards: int,
    results: Path | None,
    manifest: Path | None = None,
    checks: dict | None = None,
    workers: int = 1,
    progress_bar: bool = False,
) -> list:
    """Build one subset (or one conversion shard of it) after making sure its raw data is whole.

    `results` holds the checksum cache and the default manifest place; `checks` skips re-checking;
    `workers` processes share the work of one job; `progress_bar` draws a bar on a terminal instead of
    writing progress lines.
    """
    subset = registry.subset(subset_name)
    if subset.is_text:
        print(f"{subset.key} is a text subset: nothing to convert")
        return []
    named = [c for c in subset.conversions if conversion_name in (None, c.name)]
    if not named:
        names = ", ".join(c.name for c in subset.conversions)
        raise PreprocessError(f"{subset.key} has no conversion {conversion_name!r} (it has: {names})")
    # A conversion that names its source (the MIMIC-CXR links of ChestImagrome) needs only that one.
    needed = {s for c in named for s in ([c.params["source"]] if "source" in c.params else subset.source_ids)}
    if checks is None:
        checks = check_all(registry, settings, sorted(needed), results)
    problems = subset_missing(registry, subset, checks, only=needed)
    if problems:
        instructions = {s: checks[s].instructions for s in {p.split(":")[0] for p in problems}}
        raise RawDataError(
            explain_blocked([SubsetPlan(subset.key, SKIP, "raw data not complete", problems, instructions)])
        )
    written = []
    for conversion in named:
        target = manifest
        if target is None and results is not None:
            target = layout.shard_manifest(results, subset, conversion.name, shard, shards)
        ctx = ConversionContext(
            registry, settings, subset, conversion, shard, shards, workers=workers, progress_bar=progress_bar
        )
        written += run_conversion(ctx, kind_module(registry.kinds[conversion.kind]), target)
    return written


def skipped_items(manifests) -> list[dict]:
    """The items a conversion left out under on_bad_input: skip (manifest rows of kind 'problem')."""
    rows = [row for manifest in manifests for row in read_manifest(manifest)]
    return [{"item": item, "problem": detail} for item, kind, detail in rows if kind == "problem"]


def validate_to_report(settings, registry, subset_name: str, report_out: Path, decode: str | None = None, manifests=()):
    subset = registry.subset(subset_name)
    subset_reports = validate.validate_subset(
        registry, subset, settings.data_basedir, settings.raw_root, decode or settings.validate_decode
    )
    print(reports.validation_table(subset_reports) if subset_reports else f"{subset.key}: no task files")
    atomic_write_json(
        report_out,
        {
            "subset": subset.key,
            "files": [
                {**r.row(), "failures": [asdict(f) for f in r.failures], "warnings": r.warnings} for r in subset_reports
            ],
            "skipped_items": skipped_items(manifests),
        },
    )
    return subset_reports


def contact_sheet(settings, manifests, out: Path, count: int = 16) -> None:
    """A grid of `count` outputs sampled from the subset's manifests: the files it wrote, and the images
    under the links it made (a symlink farm writes only links)."""
    from preprocess.contact import contact_sheet as draw
    from preprocess.contact import images_under_link, sample

    rows = [row for manifest in manifests for row in read_manifest(manifest)]
    paths = [path for path, kind, _ in rows if kind == "file"]
    links = [path for path, kind, _ in rows if kind == "symlink"]
    shortest: dict[Path, str] = {}  # one image reached by two links (files/p10/x and p10/x): the shorter path
    for link in links:
        for path in images_under_link(settings.data_basedir, link):
            target = (settings.data_basedir / path).resolve()
            if target not in shortest or (path.count("/"), path) < (shortest[target].count("/"), shortest[target]):
                shortest[target] = path
    paths += shortest.values()
    chosen = sample(paths, count)
    why = "" if chosen else "no images: the manifests list no image file" + (" under their links" if links else "")
    print(f"{len(chosen)} of {len(paths)} images on the sheet" + (f" ({why})" if why else ""))
    atomic_write_bytes(out, draw(settings.data_basedir, chosen, empty_note=why))


def read_reports(paths) -> list[JsonReport]:
    found = []
    for path in paths:
        for row in json.loads(Path(path).read_text(encoding="utf-8"))["files"]:
            failures = [Failure(**f) for f in row.pop("failures")]
            warnings = row.pop("warnings", [])
            found.append(JsonReport(**row, failures=failures, warnings=warnings))
    return found


def summarize(
    plan_file: Path,
    report_files,
    table_out: Path,
    json_out: Path,
    instructions: Path,
    on_bad_input: str = "fail",
    config: dict | None = None,
    dashboard_out: Path | None = None,
) -> dict:
    """One validation table over every built subset, and the build's front page (counts, what was not built
    and why, every failing path). Never raises: a failed validation is written down first, and the workflow's
    last rule (`validation_passed`) fails on it, so the report can always be built."""
    plans = plan_from_json(json.loads(Path(plan_file).read_text(encoding="utf-8")))
    all_reports = read_reports(report_files)
    by_item: dict[str, list[str]] = {}  # one raw item can be skipped by several conversions (CT slices, DRR)
    for path in report_files:
        for entry in json.loads(Path(path).read_text(encoding="utf-8")).get("skipped_items", []):
            by_item.setdefault(entry["item"], []).append(entry["problem"])
    bad_items = [{"item": item, "problem": problems[0], "times": len(problems)} for item, problems in by_item.items()]
    skipped = [f"{p.subset}: not built: {p.reason}" for p in plans if p.action == SKIP]
    failed = [r.file for r in all_reports if not r.passed]
    text = "Validation of every task file of the built subsets\n\n" + reports.validation_table(all_reports)
    failures = reports.failures_text(all_reports)
    if failures:
        text += "\n\nFailures:\n" + failures
    warnings = reports.warnings_text(all_reports)
    if warnings:
        text += "\n\n" + warnings
    text += f"\n\n{len(skipped)} subsets not built (what to download: {instructions}):\n"
    text += "\n".join(f"  {line}" for line in skipped)
    if bad_items:
        text += f"\n\n{len(bad_items)} bad raw items skipped (on_bad_input: skip):\n"
        text += "\n".join(f"  {item['item']}: {item['problem'][:200]}" for item in bad_items)
    text += f"\n\n{len(all_reports) - len(failed)} of {len(all_reports)} task files resolve every path.\n"
    print(text)
    atomic_write_text(table_out, text)
    columns = ["records", "bad_records", "paths", "ok", "missing", "unreadable", "unsafe"]
    rows = [[r.file] + [str(getattr(r, c)) for c in columns] for r in all_reports]
    atomic_write_text(
        Path(table_out).with_suffix(".tsv"),
        "\n".join("\t".join(row) for row in [["task file", *columns], *rows]) + "\n",
    )
    resolved = len(all_reports) - len(failed)
    note = f"{resolved} of {len(all_reports)} task files resolve every path; {len(skipped)} subsets not built."
    page = tables.html_page("Validation of every task file", ["task file", *columns], rows, note)
    atomic_write_text(Path(table_out).with_suffix(".html"), page)
    summary = {
        "files": [r.row() for r in all_reports],
        "not_built": skipped,
        "skipped_items": bad_items,
        "failed": failed,
        "failures": [{"file": r.file, **asdict(f)} for r in all_reports for f in r.failures],
        "must_pass": on_bad_input != "skip",
    }
    summary["front"] = reports.front_counts(plans, all_reports, bad_items)
    summary["config"] = config or {}
    atomic_write_json(json_out, summary)
    if dashboard_out is not None:
        reports.write_dashboard(Path(dashboard_out), summary, plans, config or {})
    return summary
