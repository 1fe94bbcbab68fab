"""The jobs of a run besides the stages' (stages.py), so that the predicted wall of a whole run holds every job
Snakemake starts (issue 42, item 5: `benchmarks/rehearsal_wall.py` holds the plan to a measured run):

- one contact sheet per built subset (contact_sheet: up to CONTACT_IMAGES of its outputs decoded and drawn
  small), priced as the fingerprints' decode of as many files of the subset's mean size (stage_costs.yaml);
- the run's own steps, one each and in turn: the plan checkpoint before the conversions, and at the end the
  fingerprints' table, the validation summary, its pass/fail gate and the evaluation configs (RUN_STEPS), each
  a job's start-up over the run's own small results."""

from __future__ import annotations

from preprocess.sizing import stages, verifyjobs
from preprocess.sizing.estimate import Estimate
from preprocess.sizing.resources import RULES

CONTACT_IMAGES = 16  # preprocess/pipeline/steps.py Build.contact_sheet's count
RUN_STEPS = ("plan", "fingerprints", "validation_summary", "validation_passed", "eval_config")


def _job(stage: str, rule: str, name: str, items: int, seconds: float) -> Estimate:
    declared = RULES[rule]
    return Estimate(
        name,
        stage,
        "test",
        items,
        0,
        0,
        (stages.STARTUP_SECONDS + seconds) / 3600,
        1,
        mem_mb=declared.mem_mb,
        runtime=declared.runtime,
        startup_seconds=stages.STARTUP_SECONDS,
        item_seconds=seconds / max(1, items),
        counted="registry",
        stage=stage,
    )


def contact_estimates(conversions: list[Estimate]) -> list[Estimate]:
    """One contact sheet per subset the conversions build: up to CONTACT_IMAGES files decoded."""
    files: dict[str, int] = {}
    size: dict[str, int] = {}
    for e in conversions:
        if e.stage == "convert" and e.files:
            files[e.subset] = files.get(e.subset, 0) + e.files
            size[e.subset] = size.get(e.subset, 0) + e.bytes
    found = []
    for subset in sorted(files):
        drawn = min(CONTACT_IMAGES, files[subset])
        seconds = drawn * verifyjobs.per_file("attest", size[subset] / files[subset])
        found.append(_job("contact", "contact_sheet", subset, drawn, seconds))
    return found


def run_steps() -> list[Estimate]:
    """The run's own steps: a job's start-up each."""
    return [_job("run", rule, rule, 0, 0.0) for rule in RUN_STEPS]
