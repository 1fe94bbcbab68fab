"""The one script behind every rule: run the rule's step with its log as stdout and stderr."""

from __future__ import annotations

import resource
import sys
import traceback
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from preprocess.errors import PreprocessError
from preprocess.formats import textparse
from preprocess.pipeline import steps
from preprocess.pipeline.interrupts import INTERRUPTED, interrupt_in_parent_only
from preprocess.registry import layout
from preprocess.registry.config import settings_from_dict


def _check_source(smk, build):
    build.check(sources=[smk.wildcards.source], report_dir=Path(smk.output[0]).parent, threads=smk.threads)


def _plan(smk, build):
    out = smk.output
    build.plan(
        checks=steps.read_checks(smk.input),
        plan_out=Path(out.plan),
        instructions_out=Path(out.instructions),
        table_out=Path(out.table),
        page_out=Path(out.page),
    )


def _convert(smk, build):
    build.convert(
        subset=f"{smk.wildcards.group}/{smk.wildcards.folder}",
        conversion=smk.wildcards.conversion,
        shard=int(smk.wildcards.shard),
        shards=int(smk.wildcards.shards),
        manifest=Path(smk.output[0]),
        checks=steps.read_checks(smk.input.checks),
        workers=smk.threads,
    )
    print(usage_line(), flush=True)


def usage_line() -> str:
    """What the job used, as the kernel counted it, for the log (benchmarks/rehearsal.py reads it): Snakemake's
    benchmark file samples the process tree every 0.5 s, and a job shorter than that shows neither its CPU time
    nor its peak.

    CPU: user and system seconds of this process and of its forked workers. Peak memory: this process's VmHWM
    (/proc/self/status), the high-water mark of its own address space since its exec, not ru_maxrss, which keeps
    the larger RSS of the process it was started from (the Snakemake that forked it); its workers' ru_maxrss of
    RUSAGE_CHILDREN, the largest one's, each counted whole. Without /proc (macOS) ru_maxrss stands in."""
    own, workers = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    per_kb = 1024 if sys.platform == "darwin" else 1  # ru_maxrss is in bytes there, in kB on Linux
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            own_kb = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        own_kb = own.ru_maxrss / per_kb
    cpu = own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime
    return (
        f"used: CPU {cpu:.3f} s; peak memory: this process {own_kb * 1024 / 1e6:.1f} MB, "
        f"largest worker {workers.ru_maxrss / per_kb * 1024 / 1e6:.1f} MB"
    )


def _validate_shard(smk, build):
    subset, shard, shards = _shard(smk)
    build.validate_shard(subset=subset, shard=shard, shards=shards, out=Path(smk.output[0]))


def _shard(smk) -> tuple[str, int, int]:
    """The subset, shard and shard count a shard job's wildcards name."""
    return f"{smk.wildcards.group}/{smk.wildcards.folder}", int(smk.wildcards.shard), int(smk.wildcards.shards)


def _validate_subset(smk, build):
    subset = f"{smk.wildcards.group}/{smk.wildcards.folder}"
    build.validate(
        subset=subset, report_out=Path(smk.output[0]), manifests=smk.input.manifests, shards=smk.input.shards
    )


def _validation_summary(smk, build):
    build.summarize(
        plan_file=Path(smk.input.plan),
        report_files=smk.input.reports,
        table_out=Path(smk.output.table),
        json_out=Path(smk.output.json),
        instructions=Path(smk.params.instructions),
        config=dict(smk.config),
        dashboard_out=Path(smk.output.dashboard),
        front_out=Path(smk.output.front),
        tsv_out=Path(smk.output.tsv),
        page_out=Path(smk.output.page),
        fingerprints=Path(smk.input.fingerprints),
        compared_out=Path(smk.output.compared),
    )


def _attest_shard(smk, build):
    subset, shard, shards = _shard(smk)
    build.attest(out=Path(smk.output[0]), workers=smk.threads, subset=subset, shard=(shard, shards))


def _attest_subset(smk, build):
    build.merge_fingerprints(files=smk.input, out=Path(smk.output[0]))


def _fingerprints(smk, build):
    build.gather_fingerprints(files=smk.input.fingerprints, out=Path(smk.output[0]))


def _validation_passed(smk, build):
    """The run's last word: fail when a built task file has a path that does not resolve (the summary and
    the report's first page, written before, list them)."""
    summary = textparse.read_json(smk.input[0], textparse.DATA_BYTES)
    if summary["failed"] and summary["must_pass"]:
        lines = [f"  {f['file']}: {f['problem']}: {f['path']!r} {f['reason']}" for f in summary["failures"][:20]]
        more = len(summary["failures"]) - len(lines)
        raise PreprocessError(
            f"{len(summary['failed'])} task files have paths that do not resolve:\n"
            + "\n".join(lines)
            + (f"\n  ... {more} more" if more > 0 else "")
            + "\nAll of them: results/validation/summary.txt and the first page of `snakemake --report report.html`."
        )
    counts = summary["front"]
    text = f"{counts['task_files_ok']} of {counts['task_files']} task files resolve every path\n"
    print(text, end="")
    Path(smk.output[0]).write_text(text, encoding="utf-8")


def _contact_sheet(smk, build):
    build.contact_sheet(manifests=smk.input.manifests, out=Path(smk.output[0]))


def _eval_config(smk, build):
    counts = build.eval_config(out=Path(smk.output[0]).parent)
    print(", ".join(f"{name}: {count} task files" for name, count in counts.items()))


STEPS = {
    "eval_config": _eval_config,
    "contact_sheet": _contact_sheet,
    "check_source": _check_source,
    "plan": _plan,
    "convert": _convert,
    "validate_shard": _validate_shard,
    "validate_subset": _validate_subset,
    "validation_summary": _validation_summary,
    "validation_passed": _validation_passed,
    "attest_shard": _attest_shard,
    "attest_subset": _attest_subset,
    "fingerprints": _fingerprints,
}


def _fail(smk, text: str) -> None:
    """The error in the rule's log (stdout is the log here) and, with the log's name, on the terminal."""
    print(f"error: {text}", flush=True)
    print(f"error in rule {smk.rule} (log {smk.log[0]}): {text}", file=sys.__stderr__, flush=True)
    raise SystemExit(1) from None


def run(smk) -> None:
    Path(smk.log[0]).parent.mkdir(parents=True, exist_ok=True)
    with open(smk.log[0], "w", encoding="utf-8") as log, redirect_stdout(log), redirect_stderr(log):
        interrupt_in_parent_only()
        try:
            STEPS[smk.rule](smk, steps.Build(settings_from_dict(dict(smk.config)), results=layout.RESULTS))
        except PreprocessError as exc:
            _fail(smk, str(exc))
        except KeyboardInterrupt:
            print(INTERRUPTED, flush=True)
            raise SystemExit(130) from None
        except Exception as exc:  # a fault no check names: the traceback goes to the log, not the terminal
            traceback.print_exc(file=log)
            wildcards = ", ".join(f"{k}={v}" for k, v in dict(smk.wildcards).items())
            _fail(
                smk,
                f"unexpected {type(exc).__name__}: {exc} (step {smk.rule}{', ' + wildcards if wildcards else ''}; "
                "the traceback is in the log: please report it with the log)",
            )
