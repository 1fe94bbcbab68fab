"""How long a build's jobs are cut to on N cores (issue 42, item 3): the conversions' target and the validation's
and fingerprints' target, chosen together as the pair whose whole build the schedule predicts to end soonest on
SLURM (buildwall.py: each subset's validation and fingerprints follow its conversions, so a cut that suits the
conversions alone can leave a long tail).

The conversions' candidates are allocation.targets (the work over WAVES jobs a core, within [MIN_JOB_SECONDS,
JOB_SECONDS]); the verification shards', each of those and its half and quarter, never under
MIN_VERIFY_SECONDS: a shard re-reads its subset's records (verifyjobs.py), and under SLURM's wait a short one
would spend more time waiting than working. On a tie the longer targets win (fewer jobs). Without cores (`plan`
before a core count is chosen) both are JOB_SECONDS, the cut of an hour."""

from __future__ import annotations

from dataclasses import dataclass

from preprocess.sizing import allocation, buildwall, resources, stages
from preprocess.sizing.estimate import Estimate, at_target
from preprocess.sizing.shards import Cutting, cuttings

# A verification shard's shortest target: four times SLURM's wait, so the wait is at most a fifth of its time.
MIN_VERIFY_SECONDS = 4 * allocation.SLURM_JOB_SECONDS
VERIFY_FRACTIONS = (1, 2, 4)  # a verification target: the conversions' over each of these


@dataclass(frozen=True)
class Targets:
    convert: float  # seconds a conversion's jobs are cut to
    verify: float  # seconds a subset's validation and fingerprint shards are cut to


HOUR = Targets(float(resources.JOB_SECONDS), float(resources.JOB_SECONDS))


def _estimate(c: Cutting, target: float) -> Estimate:
    """The conversion `c` cut to `target`, as the schedule needs it."""
    files, written = round(c.items * c.cost.files), round(c.items * c.cost.bytes)
    seconds = c.cost.seconds / c.speedup
    blank = Estimate(c.subset, "", "", c.items, files, written, 0.0, 0, threads=c.threads,
                     startup_seconds=c.cost.startup_seconds, item_seconds=seconds, cutting=c)  # fmt: skip
    return at_target(blank, target)


def predicted_seconds(found: list[Cutting], targets: Targets, cores: int) -> float:
    """The SLURM wall seconds of the conversions `found`, their validation and their fingerprints, cut to
    `targets`, on `cores` (buildwall.py)."""
    converted = [_estimate(c, targets.convert) for c in found]
    side_by_side = converted + stages.subset_estimates(converted, targets.verify)
    return buildwall.wall_seconds(buildwall.nodes(side_by_side, slurm=True), cores)


def candidates(work: float, cores: int) -> list[Targets]:
    found = []
    for convert in allocation.targets(work, cores):
        verify = {max(float(MIN_VERIFY_SECONDS), convert / k) for k in VERIFY_FRACTIONS}
        found += [Targets(convert, v) for v in sorted(verify, reverse=True)]
    return sorted(found, key=lambda t: (-t.convert, -t.verify))


def choose(found: list[Cutting], cores: int | None) -> Targets:
    """Of the candidates, the pair whose build ends soonest on `cores` (the longer on a tie); None: an hour."""
    if not cores:
        return HOUR
    work = sum(c.work for c in found)
    return min(candidates(work, cores), key=lambda t: predicted_seconds(found, t, cores))


def build_targets(settings, registry, cores: int | None, costs=None) -> Targets:
    """The targets of the configured build on `cores` (the config's `cores:` wins; neither: an hour)."""
    cores = settings.cores or cores
    return choose(cuttings(settings, registry, costs) if cores else [], cores)
