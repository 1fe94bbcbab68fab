"""What the user reads: the check table, the plan, the validation summary."""

from __future__ import annotations

from pathlib import Path

from preprocess.convert.compare import SAME
from preprocess.formats import tables
from preprocess.rawdata.rawcheck import PRESENT, SourceCheck
from preprocess.readiness.buildable import BUILD, RELEASE, SKIP, VALIDATE, SubsetDecision
from preprocess.registry.model import Registry
from preprocess.release.holdings import FROM_RELEASE
from preprocess.verify.validate import JsonReport


def check_table(registry: Registry, checks: dict[str, SourceCheck]) -> str:
    rows = []
    for source_id, check in sorted(checks.items()):
        source = registry.source(source_id)
        first = check.reasons[0] if check.reasons else ""
        more = f" (+{len(check.reasons) - 1} more)" if len(check.reasons) > 1 else ""
        rows.append([source_id, check.status, source.access, (first + more)[:110]])
    return tables.render(["source", "status", "access", "problem"], rows)


def layout_text(checks: dict[str, SourceCheck]) -> str:
    """Which layout was found, for each source whose files the registry accepts in several (SourceCheck.layout)."""
    lines = [f"  {source_id}: {line}" for source_id, check in sorted(checks.items()) for line in check.layout]
    return "Layouts found (the registry accepts several for these):\n" + "\n".join(lines) if lines else ""


def unusable_text(checks: dict[str, SourceCheck]) -> str:
    """Every recorded raw file that is found but cannot be used (not a regular file inside the raw root)."""
    lines = []
    for source_id, check in sorted(checks.items()):
        count = sum(f.bad_count + (f.status == "unusable") for f in check.files)
        if count:
            lines.append(f"{source_id}: {count} raw files found cannot be used:")
            lines += [f"  {line}" for line in check.unusable]
    return "\n".join(lines)


def instructions_text(registry: Registry, checks: dict[str, SourceCheck], released=frozenset(), chosen=None) -> str:
    """Numbered steps for every source that is not present and that a conversion of the `chosen` subsets (None:
    every subset) reads. A source that only text subsets name (mimic_cxr_reports: MIMIC_f2i), or only subsets
    taken from the release (`released`: their images are in DATA_BASEDIR), is never downloaded for a build:
    their files are the release's, validated as they are."""
    converted = {
        source
        for subset in (registry.subsets if chosen is None else chosen)
        if not subset.is_text and subset.key not in released
        for source in subset.source_ids
    }
    blocks = []
    for source_id, check in sorted(checks.items()):
        if check.status == PRESENT or source_id not in converted:
            continue
        source = registry.source(source_id)
        lines = [f"## {source_id}: {check.status} ({source.name})", f"expected in: {check.raw_dir}"]
        lines += [f"- {reason}" for reason in check.reasons[:20]]
        lines += ["", check.instructions, ""]
        blocks.append("\n".join(lines))
    return "\n".join(blocks)


def plan_table(plans: list[SubsetDecision], checks: dict[str, SourceCheck], registry: Registry) -> str:
    rows = []
    for plan in plans:
        if plan.action == SKIP:
            hint = ""
            if plan.instructions:
                first = sorted(plan.instructions)[0]
                hint = f"; get {first}: {registry.source(first).download}"
            rows.append([plan.subset, f"not built: {plan.reason}{hint}"[:140]])
        else:
            reason = f": {plan.reason}" if plan.action == BUILD and plan.reason else ""
            rows.append([plan.subset, PLAN_WORDS[plan.action] + reason])
    return tables.render(["subset", "plan"], rows)


# What each plan action is called wherever a user reads it (plan table, status, report)
PLAN_WORDS = {BUILD: "build", VALIDATE: "validate", RELEASE: FROM_RELEASE, SKIP: "not built"}


# the counts of a task file's validation, as the tables show them
VALIDATION_COLUMNS = [
    "records",
    "bad_records",
    "paths",
    "ok",
    "missing",
    "unreadable",
    "unsafe",
    "no_subset",
    "not_built",
]


def validation_table(reports: list[JsonReport]) -> str:
    rows = [[r.file] + [getattr(r, c) for c in VALIDATION_COLUMNS] + ["ok" if r.passed else "FAIL"] for r in reports]
    return tables.render(["task file", *VALIDATION_COLUMNS, "result"], rows)


def failures_text(reports: list[JsonReport], limit: int = 20) -> str:
    lines = []
    for report in reports:
        for failure in report.failures[:limit]:
            where = f"record {failure.record}" if failure.record is not None else "file"
            hint = f" (did you mean {', '.join(failure.suggestions)}?)" if failure.suggestions else ""
            lines.append(
                f"{report.file}: {where}, {failure.field}: {failure.problem}: {failure.path!r} {failure.reason}{hint}"
            )
        if len(report.failures) > limit:
            lines.append(f"{report.file}: ... {len(report.failures) - limit} more failures in the JSON report")
    return "\n".join(lines)


def warnings_text(reports: list[JsonReport]) -> str:
    """Loadability warnings: the file validates, but older `datasets` versions cannot load it."""
    lines = [f"{report.file}: {warning}" for report in reports for warning in report.warnings]
    if not lines:
        return ""
    note = (
        "Loadability: these fields change type across records; the evaluation's datasets.load_dataset('json') "
        "fails on them with datasets 3.6 (4.8 and later load them as untyped JSON):"
    )
    return "\n".join([note, *(f"  {line}" for line in lines)])


UNLOADABLE_SHOWN = 20  # record numbers per task file and reason; the JSON reports hold them all
UNLOADABLE_NOTE = (
    "Warning: the evaluation's loader for these task files cannot read some records as published (kept as the "
    "release has them; the first one stops the evaluation of its file: see docs/conversions/subsets.md):"
)


def unloadable_line(file: str, records: int, unloadable: list[dict]) -> str:
    """One task file's records its evaluation loader cannot read: how many, their numbers, why."""
    by_reason: dict[str, list[int]] = {}
    for item in unloadable:
        by_reason.setdefault(item["reason"], []).append(item["record"])
    parts = []
    for reason, numbers in by_reason.items():
        shown = ", ".join(str(n) for n in numbers[:UNLOADABLE_SHOWN])
        more = f" and {len(numbers) - UNLOADABLE_SHOWN} more" if len(numbers) > UNLOADABLE_SHOWN else ""
        parts.append(f"record{'s' if len(numbers) > 1 else ''} {shown}{more}: {reason}")
    return f"{file}: {len(unloadable)} of {records} records: {'; '.join(parts)}"


def unloadable_text(reports: list[JsonReport]) -> str:
    lines = [unloadable_line(r.file, r.records, r.unloadable) for r in reports if r.unloadable]
    return "\n".join([UNLOADABLE_NOTE, *(f"  {line}" for line in lines)]) if lines else ""


UNPRODUCED_SHOWN = 5  # paths per subset in the table; the JSON reports hold them all


def unproduced_rows(reports: list[JsonReport], limit: int = UNPRODUCED_SHOWN) -> list[dict]:
    """Per subset: how many Train_Data paths no rule produces, and the first `limit` of them."""
    by_subset: dict[str, list[str]] = {}
    for report in reports:
        if report.unproduced:
            by_subset.setdefault(report.subset or "-", []).extend(report.unproduced)
    return [{"subset": k, "count": len(v), "paths": v[:limit]} for k, v in sorted(by_subset.items())]


def unproduced_text(reports: list[JsonReport]) -> str:
    rows = unproduced_rows(reports)
    if not rows:
        return ""
    lines = []
    for row in rows:
        more = row["count"] - len(row["paths"])
        paths = row["paths"] + ([f"... and {more} more (in the subset's JSON report)"] if more > 0 else [])
        lines += [[row["subset"], str(row["count"]), path] for path in paths[:1]]
        lines += [["", "", path] for path in paths[1:]]
    note = "Train_Data JSONL paths that no rule of the pipeline produces (not built, not counted as missing):\n"
    return note + tables.render(["subset", "paths", "path"], lines)


def write_text(path: Path, text: str) -> None:
    from preprocess.formats.fsutil import atomic_write_text

    atomic_write_text(path, text)


def origin_counts(plans: list[SubsetDecision]) -> dict:
    """Validated subsets by where their files come from: the release (its images in place, or a text subset's
    task files alone) or this build."""
    from_release = sum(p.action in (RELEASE, VALIDATE) for p in plans)
    return {"from_release": from_release, "built": sum(p.action == BUILD for p in plans)}


def front_counts(plans: list[SubsetDecision], all_reports: list[JsonReport], bad_items: list[dict]) -> dict:
    """The numbers of the report's first page: subsets built, from the release, failed (a path does not
    resolve), not built."""
    failed_subsets = {r.subset for r in all_reports if not r.passed}
    planned = [p.subset for p in plans if p.action != SKIP]
    released = {p.subset for p in plans if p.action in (RELEASE, VALIDATE)}
    return {
        "subsets": len(plans),
        "built": sum(s not in failed_subsets and s not in released for s in planned),
        "from_release": sum(s not in failed_subsets and s in released for s in planned),
        "failed": sum(s in failed_subsets for s in planned),
        "not_built": len(plans) - len(planned),
        "task_files": len(all_reports),
        "task_files_ok": sum(r.passed for r in all_reports),
        "failing_paths": sum(len(r.failures) for r in all_reports),
        "bad_items": len(bad_items),
    }


def write_dashboard(
    out: Path, summary: dict, plans: list[SubsetDecision], config: dict, front_out: Path | None = None
) -> None:
    """The build's front page twice: `out` standalone (links to the table files), and `front_out` (default:
    `front.html` beside it), the fragment Snakemake's report shows on its first page (links open the report's
    own views)."""
    from datetime import datetime

    from preprocess.reports.dashboard import page

    date = datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    write_text(out, page(summary, plans, config, date, standalone=True))
    front_out = front_out if front_out is not None else out.with_name("front.html")
    write_text(front_out, page(summary, plans, config, date, standalone=False))


def compared_counts(kept: list[dict], rebuilt: set[str] = frozenset()) -> dict:
    """Files found in place with other bytes (the release's), kept: how many hold the same pixels as ours; and
    of the subsets rebuilt over files in place (`rebuilt`, and those with a kept file), how many match the
    release in every file (no kept file differs: the others were byte for byte the same)."""
    same = sum(entry["verdict"] == SAME for entry in kept)
    differing = {entry["subset"] for entry in kept if entry["verdict"] != SAME}
    compared = set(rebuilt) | {entry["subset"] for entry in kept}
    return {
        "same": same,
        "differ": len(kept) - same,
        "same_subsets": len(compared - differing),
        "subsets": len(compared),
    }


def compared_text(kept: list[dict], table: Path, rebuilt: set[str] = frozenset(), page: Path | None = None) -> str:
    """The summary's lines on the files kept as they were: subsets and files that match the release, where the
    table is, the first files that differ and, when some do, the page that shows them (`page`)."""
    counts = compared_counts(kept, rebuilt)
    text = (
        f"\n\n{counts['same_subsets']} of {counts['subsets']} subsets rebuilt over the release's files: the same "
        f"pixels in every file. {len(kept)} files were in DATA_BASEDIR with other bytes and are kept as they are: "
        f"{counts['same']} hold the same pixels as this build's, {counts['differ']} differ ({table})"
    )
    differ = [entry for entry in kept if entry["verdict"] != SAME]
    text += "".join(f"\n  {entry['path']}: {entry['verdict']}" for entry in differ[:20])
    if differ and page is not None:
        text += f"\n  each side by side with ours and their difference: {page} (and in snakemake --report)"
    return text
