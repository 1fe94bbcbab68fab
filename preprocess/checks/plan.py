"""Which subsets a run builds, and why the others are not built."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from preprocess.checks.rawcheck import SourceCheck, subset_missing
from preprocess.errors import RawDataError
from preprocess.registry import releasenames
from preprocess.registry.loader import Registry

BUILD, VALIDATE, SKIP = "build", "validate", "skip"
RELEASE_MISSING = "release file missing"  # a record-driven subset without the release file naming its outputs
RELEASE_UNREADABLE = "release file unreadable"  # ... with one that exists but cannot be read


def release_reason(lines: list[str]) -> str:
    """Why a record-driven subset is not built, from releasenames.missing's lines."""
    return RELEASE_UNREADABLE if any(releasenames.UNREADABLE in line for line in lines) else RELEASE_MISSING


@dataclass
class SubsetPlan:
    subset: str
    action: str  # build | validate (text subsets: nothing to convert) | skip
    reason: str = ""
    problems: list[str] = field(default_factory=list)
    instructions: dict[str, str] = field(default_factory=dict)


def plan_subsets(registry: Registry, selection, checks: dict[str, SourceCheck], settings=None) -> list[SubsetPlan]:
    """One plan per selected subset (for the splits `settings` asks for; None: test); a subset named explicitly
    that cannot be built raises RawDataError."""
    plans = [plan_subset(registry, subset, checks, settings) for subset in registry.select(selection)]
    if selection != "all":
        blocked = [p for p in plans if p.action == SKIP]
        if blocked:
            raise RawDataError(explain_blocked(blocked))
    return plans


def plan_subset(registry: Registry, subset, checks: dict[str, SourceCheck], settings=None) -> SubsetPlan:
    """Build, validate (a text subset) or skip one subset, given the checks of its sources."""
    if subset.is_text:
        return SubsetPlan(subset.key, VALIDATE, "text only: nothing to convert")
    problems = subset_missing(registry, subset, checks, settings=settings)
    release = releasenames.missing_for_build(registry, subset, settings) if settings is not None else []
    if release and not problems:
        return SubsetPlan(subset.key, SKIP, release_reason(release), release)
    if not problems:
        return SubsetPlan(subset.key, BUILD)
    bad = sorted({p.split(":")[0] for p in problems})
    reason = f"raw {'/'.join(sorted({checks[s].status for s in bad}))}"
    return SubsetPlan(subset.key, SKIP, reason, problems, {s: checks[s].instructions for s in bad})


def explain_blocked(blocked: list[SubsetPlan]) -> str:
    lines = ["these subsets were asked for but cannot be built:"]
    for plan in blocked:
        lines.append(f"\n{plan.subset}: not built: {plan.reason}")
        lines += [f"  - {p}" for p in plan.problems[:10]]
        for source, text in plan.instructions.items():
            lines.append(f"  How to get {source}:")
            lines += [f"    {line}" for line in text.splitlines()]
    return "\n".join(lines)


def plan_to_json(plans: list[SubsetPlan]) -> list[dict]:
    return [asdict(p) for p in plans]


def plan_from_json(rows: list[dict]) -> list[SubsetPlan]:
    return [SubsetPlan(**row) for row in rows]
