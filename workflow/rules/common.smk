# Helpers shared by the rules: settings, registry, input functions. No rules here.

import functools
import json
import re
import sys
from pathlib import Path

from preprocess.errors import PreprocessError, stop_workflow
from preprocess.pipeline.workflow import (
    GROUPS,
    RESULTS,
    build_targets,
    built_conversions,
    check_threads,
    checked_sources,
    count_shards,
    job_group,
    job_resources,
    layout,
    raw_fingerprint,
    record_files,
    rule_resources,
    task_files,
    verification,
    workflow_settings,
)
from snakemake.exceptions import WorkflowError

try:  # before any job: a wrong folder is one clear message, not a missing source per source
    SETTINGS, REGISTRY = workflow_settings(config, RESULTS)
except PreprocessError as exc:
    stop_workflow(exc)
SELECTED = REGISTRY.select(SETTINGS.subsets)
SELECTED_SOURCES = sorted({s for subset in SELECTED for s in subset.source_ids})
# A partial run's summaries also cover the sources earlier runs checked: their checks are jobs of this run too,
# redone when out of date (the splits or the raw folder changed: their params differ), never trusted stale.
CHECKED_SOURCES = checked_sources(SETTINGS, REGISTRY, RESULTS, SELECTED_SOURCES)
ENTRY = "../scripts/step.py"
FAILED_VALIDATION = "Error in rule validation_passed"  # in Snakemake's log when the run's last rule fails


wildcard_constraints:
    source="[a-z0-9_]+",
    group="2D_Task|3D_Task|Text_Task",
    folder="[A-Za-z0-9_.-]+",
    conversion="[a-z0-9_]+",
    shard="[0-9]+",
    shards="[0-9]+",


def check_report(source_id):
    return str(layout.check_report(RESULTS, source_id))


def source_fingerprint(wildcards):
    return raw_fingerprint(SETTINGS, REGISTRY, wildcards.source)


def source_check_threads(wildcards):
    """A source's check job: one thread a download it hashes, up to what pays (sizing/checkjobs.py)."""
    return check_threads(SETTINGS, REGISTRY, wildcards.source)


def subset_of(wildcards):
    return REGISTRY.subset(f"{wildcards.group}/{wildcards.folder}")


def run_cores():
    """The cores this run has: Snakemake's --cores, else its --jobs (a cluster profile gives no --cores: each
    queued job is taken to hold about one core); None when neither is given."""
    try:
        return workflow.cores
    except WorkflowError:  # no --cores
        return workflow.nodes


@functools.cache
def job_targets():
    """The seconds the build's conversions (`convert`) and its validation and fingerprint shards (`verify`)
    are cut to (preprocess/sizing/targets.py): from the config's `cores:`, else this run's cores, and the
    whole configured build's work."""
    return build_targets(SETTINGS, REGISTRY, run_cores())


@functools.cache
def shard_count(subset, conversion):
    """Jobs for one conversion: the config's count for it or its subset, else the registry's, raised so
    that no job runs past the build's target (its items counted in the raw root).
    """
    return count_shards(SETTINGS, REGISTRY, subset, conversion, job_targets().convert)


def conversion_manifests(subset):
    manifests = []
    for conversion in built_conversions(SETTINGS, subset):
        if REGISTRY.kinds[conversion.kind].module is None:
            continue  # text subsets: nothing to convert
        count = shard_count(subset, conversion)
        manifests += [
            str(layout.shard_manifest(RESULTS, subset, conversion.name, i, count))
            for i in range(count)
        ]
    return manifests


def subset_check_reports(wildcards):
    return [check_report(s) for s in subset_of(wildcards).source_ids]


def conversion_of(wildcards):
    return next(
        c
        for c in built_conversions(SETTINGS, subset_of(wildcards))
        if c.name == wildcards.conversion
    )


def release_files(wildcards):
    """The release files a record-driven conversion reads to name its outputs (its task JSONs or the
    Train_Data JSONLs): a record changed there re-runs it."""
    side = conversion_of(wildcards).params.get("records")
    if side is None:
        return []
    return record_files(SETTINGS, subset_of(wildcards), side)


@functools.cache
def first_attempt(subset, conversion, count):
    """threads, mem_mb and runtime of the largest of a conversion's `count` shards at the first attempt."""
    return job_resources(SETTINGS, REGISTRY, subset, conversion, count)


def conversion_resources(wildcards, attempt=1):
    """(threads, mem_mb, runtime minutes) of one conversion job, from the shard count in its name (a SLURM
    job never cuts the build again); a retry scales memory and time."""
    count = int(wildcards.shards)
    found = first_attempt(subset_of(wildcards), conversion_of(wildcards), count)
    found = found.at(attempt)
    return found.threads, found.mem_mb, found.runtime


def conversion_group(wildcards):
    """The job group of a short convert job: on SLURM such jobs travel in groups (profiles/slurm
    `group-components`), one start-up for the group; the others alone. Locally Snakemake ignores groups.
    """
    subset, conversion = subset_of(wildcards), conversion_of(wildcards)
    return job_group(SETTINGS, REGISTRY, subset, conversion, int(wildcards.shards))


@functools.cache
def verification_of(subset, stage):
    """The subset's validation or fingerprints (stage validate, attest) as jobs (sizing/verifyjobs.py)."""
    return verification(SETTINGS, REGISTRY, subset, stage)


@functools.cache
def stage_shard_count(subset, stage):
    """Shards of the subset's validation or fingerprints, cut to the build's verification target."""
    return verification_of(subset, stage).shards(job_targets().verify)


def stage_shards(pattern, stage):
    """The shard files of a subset's `stage` (layout.VALIDATE_SHARD, ATTEST_SHARD), its merge's input."""

    def files(wildcards):
        subset = subset_of(wildcards)
        count = stage_shard_count(subset, stage)
        return [
            str(path) for path in layout.stage_shards(RESULTS, pattern, subset, count)
        ]

    return files


def stage_resources(stage, attempt=1, wildcards=None):
    """What one shard (its count in its name) or, without a shard, the merge of a subset's `stage` declares
    at retry `attempt`."""
    found = verification_of(subset_of(wildcards), stage)
    if "shards" in dict(wildcards):
        return found.shard_resources(int(wildcards.shards)).at(attempt)
    return found.merge_resources().at(attempt)


def declared_mem_mb(rule):
    """The memory a job of `rule` (one that converts nothing) declares, scaled by the retry."""
    return lambda wildcards, attempt: rule_resources(rule, attempt).mem_mb


def declared_runtime(rule):
    """Its runtime in minutes, likewise."""
    return lambda wildcards, attempt: rule_resources(rule, attempt).runtime


def declared_threads(rule):
    return rule_resources(rule).threads


def validation_merge_inputs(wildcards):
    """A subset's validation inputs and its shards' answers."""
    return {
        **validation_inputs(wildcards),
        "shards": stage_shards(layout.VALIDATE_SHARD, "validate")(wildcards),
    }


def validation_inputs(wildcards):
    """A built subset's task files and its conversions' manifests; a subset from the release has no manifest
    (nothing of it is converted): its task files alone."""
    subset = subset_of(wildcards)
    tasks = task_files(SETTINGS, subset)
    built = planned_action(subset.key) == "build"
    return {"manifests": conversion_manifests(subset) if built else [], "tasks": tasks}


def _plans():
    with checkpoints.plan.get().output.plan.open() as handle:
        return json.load(handle)


def planned_action(subset_key):
    """What the plan does with a subset (build, validate, release, skip)."""
    return next(p["action"] for p in _plans() if p["subset"] == subset_key)


def _planned(pattern, actions):
    """The per-subset results `pattern` of the subsets the plan gives one of `actions` (known once the
    checks have run)."""
    return [
        str(layout.subset_file(RESULTS, pattern, plan["subset"]))
        for plan in _plans()
        if plan["action"] in actions
    ]


def planned_reports(wildcards):
    """Validation reports of the subsets the plan builds, takes from the release or validates (text)."""
    return _planned(layout.SUBSET_REPORT, ("build", "release", "validate"))


def planned_fingerprints(wildcards):
    """The pixel fingerprints of every subset with images in the tree: built or from the release."""
    return _planned(layout.SUBSET_FINGERPRINTS, ("build", "release"))


def planned_contact_sheets(wildcards):
    """A contact sheet for every built subset that has images."""
    return _planned(layout.CONTACT_SHEET, ("build",))


def print_summary():
    summary = RESULTS / layout.SUMMARY_TEXT
    if summary.exists():
        print(f"\n{summary.read_text(encoding='utf-8')}", file=sys.stderr)
        configs = ", ".join(
            str(RESULTS / layout.EVAL_CONFIG.format(group=g)) for g in GROUPS
        )
        print(f"Evaluation configs of the built task files: {configs}", file=sys.stderr)


def print_failure_hint(log):
    """What to do next, for the kind of failure this was (validation, interruption, or a step's error)."""
    logs = [log] if isinstance(log, str) else list(log or [])
    text = "".join(
        Path(f).read_text(encoding="utf-8", errors="replace")
        for f in logs
        if Path(f).is_file()
    )
    if "KeyboardInterrupt" in text or "Terminating processes on user request" in text:
        print("\ninterrupted: rerun the same command to resume", file=sys.stderr)
    elif FAILED_VALIDATION in text:
        print(
            "\nValidation failed: the paths above do not resolve (all of them in "
            "results/validation/summary.txt). `snakemake --report report.html` shows them on its first page. "
            "A built file deleted or changed since: `--forcerun convert` builds the missing ones again (with "
            "--config 'subsets=[...]' for those subsets alone); after fixing the task files by hand: "
            "`--forcerun validate_subset`.",
            file=sys.stderr,
        )
    else:
        failed = sorted(
            set(re.findall(r"^\s*log: (.+?) \(check log file", text, re.MULTILINE))
        )
        where = f" (log: {', '.join(failed)})" if failed else ""
        print(
            f"\nA step failed{where}: its error line above (`error in rule ...`, also at the end of the log it "
            "names) says which file and what to do. "
            "`python -m preprocess check` lists the raw downloads and their status.",
            file=sys.stderr,
        )
