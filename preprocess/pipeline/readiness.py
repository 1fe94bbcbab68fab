"""`check`: the raw downloads a build reads, whether they are whole, and what is still to fetch, before a build."""

from __future__ import annotations

import sys
from pathlib import Path

from preprocess.pipeline import names, steps
from preprocess.pipeline.settings import require_written
from preprocess.rawdata import need
from preprocess.readiness import buildable
from preprocess.release import holdings, releasenames
from preprocess.reports import summaries


def check(settings, registry, results: Path | None, sources: list[str] | None = None, report_dir: Path | None = None):
    """The check of each source named (default: those of the selected subsets), with one JSON report per
    source in `report_dir` when given."""
    for name in sources or []:
        names.source(registry, name)
    source_ids = sources or sorted({s for sub in registry.select(settings.subsets) for s in sub.source_ids})
    if report_dir is not None:
        require_written(settings, results, report_dir, "--report-dir", names=tuple(f"{s}.json" for s in source_ids))
    return steps.Build(settings, registry, results).check(sources=source_ids, report_dir=report_dir)


def print_check(settings, registry, checks: dict, results: Path | None, quiet: bool = False) -> None:
    """The check table, the subsets the release already holds, the release files missing, and the files
    needed; with the download instructions unless `quiet`."""
    for source_id in checks:
        if not settings.verifies_checksums(source_id):
            print(
                f"warning: checksum verification is off for {source_id} (verify_checksums in the config)",
                file=sys.stderr,
            )
    print(summaries.check_table(registry, checks))
    found = summaries.layout_text(checks)
    if found:
        print("\n" + found)
    unusable = summaries.unusable_text(checks)
    if unusable:
        print("\n" + unusable)
    chosen = registry.select(settings.subsets)
    lacking = {subset.key: releasenames.missing_for_build(registry, subset, settings) for subset in chosen}
    unreadable = {
        key for key, lines in lacking.items() if buildable.release_reason(lines) == buildable.RELEASE_UNREADABLE
    }
    released = holdings.released_subsets(registry, settings, results) - unreadable  # plan skips those
    if released:
        print(f"\n{holdings.FROM_RELEASE} ({holdings.NOT_NEEDED}): {', '.join(sorted(released))}")
    text = summaries.instructions_text(registry, checks, released, chosen)
    if text and not quiet:
        print("\n" + text)
    missing = [f"  {key}: {line}" for key, lines in lacking.items() if key not in released for line in lines]
    if missing:
        heading = (
            "Release files missing or unreadable (one that cannot be read stops its subset's build; a missing "
            "one, a record-driven subset's, whose images it alone names):"
        )
        print(f"\n{heading}\n" + "\n".join(missing))
    counted = need.needs(settings, registry, list(checks), results)
    counted = need.check_lines(counted, settings.raw_root, results)
    print("\nNeeded files (`medheb need SOURCE` lists them, from the release's records):\n" + "\n".join(counted))
