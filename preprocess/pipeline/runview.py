"""The run-wide view a partial run updates: with `subsets:` a list, a run builds and validates those subsets
only, and its summaries (summary.txt/.json, the dashboard, check/sources.tsv, not-built.md) still cover every
subset an earlier run in this results folder checked or built. This run's subsets get new rows; every other
subset keeps what the files earlier runs left say: its sources' check reports (results/check/sources/), and
its validation report (results/validation/subsets/) when it was built. A run of every subset (`all`) is the
whole view by itself."""

from __future__ import annotations

from pathlib import Path

from preprocess.formats import textparse
from preprocess.rawdata.rawcheck import SourceCheck, current
from preprocess.readiness.buildable import SKIP, SubsetDecision, decide_subset
from preprocess.registry import layout


def partial(settings, results: Path | None) -> bool:
    return results is not None and settings.subsets != "all"


def _stored_checks(registry, results: Path) -> dict[str, SourceCheck]:
    """The check reports earlier runs left in the results folder, by source."""
    found = {}
    for source_id in checked_before(registry, results):
        report = layout.check_report(results, source_id)
        found[source_id] = SourceCheck.from_json(textparse.read_json(report, textparse.DATA_BYTES))
    return found


def checked_before(registry, results: Path) -> list[str]:
    """The sources whose check reports earlier runs left in the results folder."""
    return [s for s in sorted(registry.sources) if layout.check_report(results, s).is_file()]


def earlier_checks(registry, settings, results: Path, checked: dict[str, SourceCheck]) -> dict[str, SourceCheck]:
    """The check reports of the sources this run did not check, as the last run that checked them left them;
    one made for other splits is left out (never trusted), with a line saying so."""
    found = {}
    for source_id, check in _stored_checks(registry, results).items():
        if source_id in checked:
            continue
        if current(registry, settings, check):
            found[source_id] = check
        else:
            print(
                f"{layout.check_report(results, source_id)}: looked for other files than this run's splits ask "
                "for, not used (a run that checks the source again replaces it)"
            )
    return found


def checks(registry, settings, results: Path | None, checked: dict[str, SourceCheck]) -> dict[str, SourceCheck]:
    """This run's checks and, in a partial run, the earlier ones of every other source."""
    if not partial(settings, results):
        return checked
    return {**earlier_checks(registry, settings, results, checked), **checked}


def plans(registry, settings, results: Path | None, planned: list[SubsetDecision]) -> list[SubsetDecision]:
    """This run's plans and, in a partial run, every other subset whose sources were all checked before: not
    built and why (from those checks), or built when its validation report is there; in registry order."""
    if not partial(settings, results):
        return planned
    mine = {plan.subset: plan for plan in planned}
    known = earlier_checks(registry, settings, results, {})
    view = []
    for subset in registry.subsets:
        if subset.key in mine:
            view.append(mine[subset.key])
        elif all(source_id in known for source_id in subset.source_ids):
            plan = decide_subset(registry, subset, known, settings, results)
            if plan.action == SKIP or layout.subset_file(results, layout.SUBSET_REPORT, subset.key).is_file():
                view.append(plan)
    return view


def report_files(results: Path | None, view: list[SubsetDecision], mine) -> list[Path]:
    """This run's validation reports and those earlier runs left for the other built subsets of the view, in
    the view's order."""
    mine = [Path(path) for path in mine]
    if results is None:
        return mine
    ordered = []
    for plan in view:
        path = layout.subset_file(results, layout.SUBSET_REPORT, plan.subset)
        if plan.action != SKIP and (path in mine or path.is_file()):
            ordered.append(path)
    return ordered + [path for path in mine if path not in ordered]
