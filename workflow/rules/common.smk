# Helpers shared by the rules: settings, registry, input functions. No rules here.

import functools
import json
import re
import sys
from pathlib import Path

from preprocess.pipeline import runview
from preprocess.sizing import allocation, shards
from preprocess.sizing.resources import rule_resources
from preprocess.registry import layout, releasenames, splits
from preprocess.checks import validate
from preprocess.registry.config import require_directory, settings_from_dict
from preprocess.demo import require_demo
from preprocess.errors import PreprocessError, stop_workflow
from snakemake.exceptions import WorkflowError
from preprocess.checks.rawcheck import fingerprint
from preprocess.formats.rawroot import require_apart
from preprocess.registry.loader import GROUPS

RESULTS = layout.RESULTS
try:  # before any job: a wrong folder is one clear message, not a missing source per source
    SETTINGS = settings_from_dict(config)
    require_apart(SETTINGS.raw_root, SETTINGS.data_basedir, RESULTS)
    if (
        SETTINGS.demo is not None
    ):  # written by `python -m preprocess demo` (make demo), not here
        require_demo(SETTINGS.demo)
    require_directory(SETTINGS.raw_root, "raw root")
    require_directory(SETTINGS.data_basedir, "DATA_BASEDIR", writable=True)
    REGISTRY = SETTINGS.registry()
    splits.check_keys(SETTINGS, REGISTRY)
except PreprocessError as exc:
    stop_workflow(exc)
SELECTED = REGISTRY.select(SETTINGS.subsets)
SELECTED_SOURCES = sorted({s for subset in SELECTED for s in subset.source_ids})
# A partial run's summaries also cover the sources earlier runs checked: their checks are jobs of this run too,
# redone when out of date (the splits or the raw folder changed: their params differ), never trusted stale.
CHECKED_SOURCES = sorted(
    set(SELECTED_SOURCES).union(
        runview.checked_before(REGISTRY, RESULTS)
        if runview.partial(SETTINGS, RESULTS)
        else []
    )
)
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
    source = splits.checked_source(
        REGISTRY, SETTINGS, REGISTRY.source(wildcards.source)
    )
    return fingerprint(source, SETTINGS.raw_root)


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
def job_target():
    """The seconds the build's conversions are cut to (preprocess/sizing/allocation.py): from the config's
    `cores:`, else this run's cores, and the whole configured build's work."""
    return shards.build_target(SETTINGS, REGISTRY, run_cores())


@functools.cache
def shard_count(subset, conversion):
    """Jobs for one conversion: the config's count for it or its subset, else the registry's, raised so
    that no job runs past the build's target (its items counted in the raw root).
    """
    return shards.shard_count(
        SETTINGS, REGISTRY, subset, conversion, target=job_target()
    )


def conversion_manifests(subset):
    manifests = []
    for conversion in splits.conversions(SETTINGS, subset):
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
        for c in splits.conversions(SETTINGS, subset_of(wildcards))
        if c.name == wildcards.conversion
    )


def release_files(wildcards):
    """The release files a record-driven conversion reads to name its outputs (its task JSONs or the
    Train_Data JSONLs): a record changed there re-runs it."""
    side = conversion_of(wildcards).params.get("records")
    if side is None:
        return []
    found = releasenames.release_files(
        SETTINGS.data_basedir, subset_of(wildcards), side
    )
    return [str(path) for path in found]


@functools.cache
def first_attempt(subset, conversion, count):
    """threads, mem_mb and runtime of the largest of a conversion's `count` shards at the first attempt."""
    return shards.job_resources(SETTINGS, REGISTRY, subset, conversion, count)


def conversion_resources(wildcards, attempt=1):
    """(threads, mem_mb, runtime minutes) of one conversion job, from the shard count in its name (a SLURM
    job never cuts the build again); a retry scales memory and time."""
    count = int(wildcards.shards)
    found = first_attempt(subset_of(wildcards), conversion_of(wildcards), count)
    found = found.at(attempt)
    return found.threads, found.mem_mb, found.runtime


def conversion_group(wildcards):
    """The job group of a convert job predicted under allocation.GROUP_BELOW_SECONDS: on SLURM such jobs
    travel in groups (profiles/slurm `group-components`), one start-up for the group; the others alone.
    Locally Snakemake ignores groups."""
    count = int(wildcards.shards)
    subset, conversion = subset_of(wildcards), conversion_of(wildcards)
    seconds = shards.job_seconds(SETTINGS, REGISTRY, subset, conversion, count)
    return allocation.SMALL_JOBS if seconds < allocation.GROUP_BELOW_SECONDS else None


def declared_mem_mb(rule):
    """The memory a job of `rule` (one that converts nothing) declares, scaled by the retry."""
    return lambda wildcards, attempt: rule_resources(rule, attempt).mem_mb


def declared_runtime(rule):
    """Its runtime in minutes, likewise."""
    return lambda wildcards, attempt: rule_resources(rule, attempt).runtime


def declared_threads(rule):
    return rule_resources(rule).threads


def validation_inputs(wildcards):
    """A built subset's task files and its conversions' manifests; a subset from the release has no manifest
    (nothing of it is converted): its task files alone."""
    subset = subset_of(wildcards)
    tasks = [
        str(p) for p in layout.task_files(SETTINGS.data_basedir, subset) if p.exists()
    ]
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
