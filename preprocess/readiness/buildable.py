"""Which subsets a run builds, and why the others are not built."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from preprocess.errors import RawDataError
from preprocess.rawdata.rawcheck import SourceCheck, subset_missing
from preprocess.registry.model import Registry
from preprocess.release import releasenames
from preprocess.release.holdings import ABSENT, FROM_RELEASE, presence

# build | validate (a text subset: nothing to convert) | release (its images are the release's, in place: it is
# validated, not built) | skip (not built, with why)
BUILD, VALIDATE, RELEASE, SKIP = "build", "validate", "release", "skip"
COMPARED = "build: all: each file compared with the one in place"  # a rebuild of a subset from the release
RELEASE_MISSING = "release file missing"  # a record-driven subset without the release file naming its outputs
RELEASE_UNREADABLE = "release file unreadable"  # ... with one that exists but cannot be read


def release_reason(lines: list[str]) -> str:
    """Why a subset is not built, from releasenames.missing_for_build's lines."""
    return RELEASE_UNREADABLE if any(releasenames.UNREADABLE in line for line in lines) else RELEASE_MISSING


@dataclass
class SubsetDecision:
    subset: str
    action: str  # BUILD | VALIDATE | RELEASE | SKIP
    reason: str = ""
    problems: list[str] = field(default_factory=list)
    instructions: dict[str, str] = field(default_factory=dict)


def decide_subsets(
    registry: Registry, selection, checks: dict[str, SourceCheck], settings=None, results=None
) -> list[SubsetDecision]:
    """One decision per selected subset (for the splits `settings` asks for; None: test); a subset named explicitly
    that cannot be built raises RawDataError. `results`: the folder whose manifests tell what we built."""
    plans = [decide_subset(registry, subset, checks, settings, results) for subset in registry.select(selection)]
    if selection != "all":
        blocked = [p for p in plans if p.action == SKIP]
        if blocked:
            raise RawDataError(explain_blocked(blocked))
    return plans


def decide_subset(
    registry: Registry, subset, checks: dict[str, SourceCheck], settings=None, results=None
) -> SubsetDecision:
    """Build, validate (a text subset), take from the release or skip one subset, given the checks of its
    sources and what DATA_BASEDIR holds (release/holdings.py; with `settings` only). A release file of the
    subset that exists but cannot be read skips it first, whatever else holds: validate would fail it."""
    if subset.is_text:
        return SubsetDecision(subset.key, VALIDATE, "text only: nothing to convert")
    problems = subset_missing(registry, subset, checks, settings=settings)
    release = releasenames.missing_for_build(registry, subset, settings) if settings is not None else []
    if release_reason(release) == RELEASE_UNREADABLE:
        return SubsetDecision(subset.key, SKIP, RELEASE_UNREADABLE, release)
    held = presence(registry, subset, settings, results) if settings is not None and subset.redistributed else None
    if held is not None and held.from_release and (problems or settings.build == "missing"):
        return SubsetDecision(subset.key, RELEASE, FROM_RELEASE)
    if release and not problems:
        return SubsetDecision(subset.key, SKIP, release_reason(release), release)
    partial = held is not None and 0 < held.present < held.named and not held.ours
    if partial and problems:  # the release's images in part, no raw data to write the rest: validated as the
        # release has them, so each absent image fails the validation by its path (issue 41, item 2)
        return SubsetDecision(subset.key, RELEASE, f"{FROM_RELEASE}: {held.absent_text()}", problems)
    if not problems:
        if held is not None and held.from_release:
            return SubsetDecision(subset.key, BUILD, COMPARED)
        return SubsetDecision(subset.key, BUILD, held.absent_text() if partial else "")
    bad = sorted({p.split(":")[0] for p in problems})
    reason = f"raw {'/'.join(sorted({checks[s].status for s in bad}))}"
    return SubsetDecision(subset.key, SKIP, reason, problems, {s: checks[s].instructions for s in bad})


def over_release(plan: SubsetDecision) -> bool:
    """Whether the build writes the subset over release files in place (every one, or the present part of a
    partly absent subset): those are compared, never replaced."""
    return plan.action == BUILD and (plan.reason == COMPARED or plan.reason.endswith(ABSENT))


def explain_blocked(blocked: list[SubsetDecision]) -> str:
    lines = ["these subsets were asked for but cannot be built:"]
    for plan in blocked:
        lines.append(f"\n{plan.subset}: not built: {plan.reason}")
        lines += [f"  - {p}" for p in plan.problems[:10]]
        for source, text in plan.instructions.items():
            lines.append(f"  How to get {source}:")
            lines += [f"    {line}" for line in text.splitlines()]
    return "\n".join(lines)


def plan_to_json(plans: list[SubsetDecision]) -> list[dict]:
    return [asdict(p) for p in plans]


def plan_from_json(rows: list[dict]) -> list[SubsetDecision]:
    return [SubsetDecision(**row) for row in rows]
