"""How a subset's validation and fingerprints are cut into jobs (issue 42, item 4), as its conversions are
(shards.py): shard jobs, each over a slice of the subset's paths, then one merge job that writes the subset's
report or fingerprint file (verify/validateshards.py, verify/attest.py).

Every shard reads all the subset's records to list its paths (`list_s` a path), then checks its slice: validate's
path check or attest's decode and hash per file (stage_costs.yaml, by the file's bytes), on the stage's threads.
The merge reads the records once more with the shards' answers (validate), or the shards' files (attest):
`merge_s` a path. Both per-path figures come from benchmarks/verify_shards.py (shard_costs.yaml). A subset is cut
into the fewest shards that keep each under the build's target seconds (allocation.py: from the cores of the
run, at least MIN_JOB_SECONDS, at most JOB_SECONDS), so a small subset is one shard; each job declares its
predicted time times resources.SAFETY, as a convert job does."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from preprocess.formats import textparse
from preprocess.registry.loader import REGISTRY_DIR
from preprocess.sizing import resources

STAGE_COSTS = REGISTRY_DIR / "stage_costs.yaml"
SHARD_COSTS = REGISTRY_DIR / "shard_costs.yaml"
STARTUP_SECONDS = 0.5  # a stage job's start-up: the interpreter, the registry (as a conversion's, costs.yaml)
# The rules of each stage: its shards' and its merge's (workflow/rules/validate.smk, attest.smk).
RULES = {"validate": ("validate_shard", "validate_subset"), "attest": ("attest_shard", "attest_subset")}
# attest on two workers ran 1.06x validate's speed where one ran 0.70x (docs/guide/fingerprints.md): 1.5x
SPEEDUP = {"validate": 1.0, "attest": 1.5}


@functools.cache
def load(path: Path) -> dict:
    return textparse.read_yaml(path)


def per_file(stage: str, bytes_per_file: float) -> float:
    """Seconds of `stage` (validate, attest) for one output file of that size, between the measured sizes."""
    sizes = load(STAGE_COSTS)["sizes"]
    return float(np.interp(bytes_per_file, [s["bytes"] for s in sizes], [s[f"{stage}_s"] for s in sizes]))


@dataclass(frozen=True)
class Verification:
    """One subset's validation or fingerprints: its paths, and the seconds of checking them all on one core."""

    stage: str  # validate or attest
    subset: str
    files: int
    seconds: float

    @property
    def threads(self) -> int:
        return resources.RULES[RULES[self.stage][0]].threads

    @property
    def fixed_seconds(self) -> float:
        """What every shard spends whatever its slice: its start-up and the walk that lists the paths."""
        return STARTUP_SECONDS + self.files * load(SHARD_COSTS)[f"{self.stage}_list_s"]

    @property
    def item_seconds(self) -> float:
        """One path of a shard's slice, on its threads."""
        return self.seconds / max(1, self.files) / SPEEDUP[self.stage]

    def shards(self, target: float | None) -> int:
        """The fewest shards that keep each under `target` seconds (None: resources.JOB_SECONDS)."""
        target = min(float(resources.JOB_SECONDS if target is None else target), resources.JOB_SECONDS)
        room = max(target - self.fixed_seconds, target / 10)  # the walk alone near the target: still cut
        return max(1, min(self.files, math.ceil(self.files * self.item_seconds / room)))

    def shard_seconds(self, shards: int) -> list[float]:
        """Predicted seconds of each of `shards` (shard i holds the paths at positions i modulo shards)."""
        shards = max(1, shards)
        sizes = [self.files // shards + (1 if i < self.files % shards else 0) for i in range(shards)]
        return [self.fixed_seconds + n * self.item_seconds for n in sizes]

    @property
    def merge_seconds(self) -> float:
        return STARTUP_SECONDS + self.files * load(SHARD_COSTS)[f"{self.stage}_merge_s"]

    def shard_resources(self, shards: int) -> resources.Resources:
        """What each of its `shards` declares at the first attempt: the largest one's predicted time."""
        return _declared(RULES[self.stage][0], max(self.shard_seconds(shards)))

    def merge_resources(self) -> resources.Resources:
        return _declared(RULES[self.stage][1], self.merge_seconds)


def _declared(rule: str, seconds: float) -> resources.Resources:
    fixed = resources.RULES[rule]
    runtime = max(resources.RUNTIME_FLOOR, math.ceil(seconds * resources.SAFETY / 60))
    return resources.Resources(fixed.threads, fixed.mem_mb, runtime)


def verifications(subset: str, outputs) -> list[Verification]:
    """The validation and the fingerprints of a subset whose conversions write `outputs`, (files, bytes) each."""
    files = sum(n for n, _ in outputs)
    found = []
    for stage in RULES:
        seconds = sum(n * per_file(stage, size / n) for n, size in outputs if n)
        found.append(Verification(stage, subset, files, seconds))
    return found


def subset_verifications(settings, registry, subset, costs=None) -> dict[str, Verification]:
    """A subset's validation and fingerprints as the workflow cuts them: the files of the conversions the build
    runs, counted cheaply (counts.py: the raw root, the release's records, else the registry's full counts)."""
    from preprocess.registry import splits
    from preprocess.sizing.costs import cost_of, load_costs
    from preprocess.sizing.counts import count_items

    costs = costs or load_costs()
    outputs = []
    for conversion in splits.conversions(settings, subset):
        if registry.kinds[conversion.kind].module is None:
            continue
        cost = cost_of(registry, subset, conversion, costs)
        items = count_items(registry, settings.raw_root, subset, conversion, data_basedir=settings.data_basedir)
        outputs.append((round(items * cost.files), round(items * cost.bytes)))
    return {v.stage: v for v in verifications(subset.key, outputs)}
