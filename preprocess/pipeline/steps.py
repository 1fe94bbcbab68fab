"""The pipeline's steps, as methods of one Build object (settings, registry, results folder): the Snakemake
rules (preprocess/pipeline/snakemake_entry.py) and the CLI both call them, with keyword arguments only."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from preprocess.convert import ConversionContext, kind_module, run_conversion
from preprocess.convert.compare import KEPT
from preprocess.errors import PreprocessError, RawDataError, quoted
from preprocess.formats import tables, textparse
from preprocess.formats.fsutil import atomic_write_bytes, atomic_write_json, atomic_write_text
from preprocess.formats.manifest import read_manifest
from preprocess.pipeline import runview
from preprocess.pipeline.validation import validate_files, validate_shard
from preprocess.rawdata.rawcheck import SourceCheck, check_all, current, subset_missing
from preprocess.readiness.buildable import (
    RELEASE,
    SKIP,
    SubsetDecision,
    decide_subsets,
    explain_blocked,
    over_release,
    plan_from_json,
    plan_to_json,
    release_reason,
)
from preprocess.registry import layout, splits
from preprocess.release import releasenames
from preprocess.reports import summaries
from preprocess.sizing import checkjobs
from preprocess.verify.validate import Failure, JsonReport

NOTHING_TO_DOWNLOAD = "Nothing to download: every source the build needs is present.\n"


class Build:
    def __init__(self, settings, registry=None, results: Path | None = None):
        """`results` holds the checksum cache and the default manifest places (None: no cache, no manifest
        unless one is named)."""
        self.settings = settings
        self.registry = registry if registry is not None else settings.registry()
        splits.check_keys(settings, self.registry)
        self.results = results

    def check(self, *, sources, report_dir: Path | None = None, threads: int | None = None) -> dict[str, SourceCheck]:
        """Check each raw download, hashing its files on `threads` (None: each source's own count,
        sizing/checkjobs.py); write one JSON report per source into `report_dir` when given."""
        counts = {s: threads or checkjobs.source_threads(self.settings, self.registry, s) for s in sources}
        checks = check_all(self.registry, self.settings, sources, self.results, counts)
        if report_dir is not None:
            for source_id, check in checks.items():
                atomic_write_json(report_dir / f"{source_id}.json", check.to_json())
        return checks

    def plan(
        self,
        *,
        checks,
        plan_out: Path,
        instructions_out: Path,
        table_out: Path | None = None,
        page_out: Path | None = None,
    ):
        """Decide what is built; print the check and plan tables; write instructions for what is missing (and
        the raw-download table as TSV, `table_out`, and as a page, `page_out`)."""
        print(summaries.check_table(self.registry, checks))
        every = runview.checks(self.registry, self.settings, self.results, checks)  # a partial run: and the rest
        if summaries.unusable_text(checks):
            print("\n" + summaries.unusable_text(checks))
        if table_out is not None:
            _write_sources_table(self.registry, every, Path(table_out), page_out)
        plans = decide_subsets(self.registry, self.settings.subsets, checks, self.settings, self.results)
        print()
        print(summaries.plan_table(plans, checks, self.registry))
        released = {p.subset for p in plans if p.action == RELEASE}
        instructions = summaries.instructions_text(self.registry, every, released) or NOTHING_TO_DOWNLOAD
        atomic_write_text(instructions_out, instructions)
        print(f"\nWhat to download for the subsets not built, step by step: {instructions_out}")
        atomic_write_json(plan_out, plan_to_json(plans))
        return plans

    def convert(
        self,
        *,
        subset: str,
        conversion: str | None = None,
        shard: int = 0,
        shards: int = 1,
        manifest: Path | None = None,
        checks: dict | None = None,
        workers: int = 1,
        progress_bar: bool = False,
    ) -> list:
        """Build one subset (or one conversion shard of it) after making sure its raw data is whole.

        `checks` skips re-checking; `workers` processes share the work of one job; `progress_bar` draws a
        bar on a terminal instead of writing progress lines. Returns the manifest rows."""
        chosen = self.registry.subset(subset)
        if chosen.is_text:
            print(f"{chosen.key} is a text subset: nothing to convert")
            return []
        named = _conversions(splits.conversions(self.settings, chosen), chosen, conversion)
        self._require_raw(chosen, named, checks)
        self._require_release(chosen, named)
        written = []
        for one in named:
            target = manifest
            if target is None and self.results is not None:
                target = layout.shard_manifest(self.results, chosen, one.name, shard, shards)
            ctx = ConversionContext(
                self.registry, self.settings, chosen, one, shard, shards, workers=workers, progress_bar=progress_bar
            )
            ours = None if self.results is None else self.results / layout.OURS
            written += run_conversion(ctx, kind_module(self.registry.kinds[one.kind]), target, ours)
        return written

    def _require_raw(self, subset, named: list, checks: dict | None) -> None:
        # A conversion that names its source (the MIMIC-CXR links of ChestImagrome) needs only that one.
        needed = {s for c in named for s in ([c.params["source"]] if "source" in c.params else subset.source_ids)}
        # Checks handed in (the workflow's reports) that looked for other files than these splits ask for are
        # done again here, never trusted: a test-only check knows nothing of the train files.
        checks = {s: c for s, c in (checks or {}).items() if current(self.registry, self.settings, c)}
        redo = sorted(needed - checks.keys())
        if redo:
            checks |= check_all(self.registry, self.settings, redo, self.results)
        problems = subset_missing(self.registry, subset, checks, only=needed, settings=self.settings)
        if problems:
            instructions = {s: checks[s].instructions for s in {p.split(":")[0] for p in problems}}
            raise RawDataError(
                explain_blocked([SubsetDecision(subset.key, SKIP, "raw data not complete", problems, instructions)])
            )

    def _require_release(self, subset, named: list) -> None:
        """The subset's release files must read, and a record-driven conversion needs the one that names its
        outputs (release/releasenames.py)."""
        release = releasenames.missing_for_build(self.registry, subset, self.settings, named)
        if release:
            raise RawDataError(explain_blocked([SubsetDecision(subset.key, SKIP, release_reason(release), release)]))

    def validate(self, *, subset: str, report_out: Path, decode: str | None = None, manifests=(), shards=()):
        """Validate one subset's task files; write its JSON report (with the items its conversions skipped).
        `shards`: the answers of its validate_shard jobs, taken as given (verify/validateshards.py)."""
        chosen = self.registry.subset(subset)
        raw_root = self.settings.raw_root
        found = validate_files(self.registry, self.settings, chosen, raw_root, decode, manifests, shards)
        print(summaries.validation_table(found) if found else f"{chosen.key}: no task files")
        for text in (summaries.unloadable_text(found), summaries.unproduced_text(found)):
            if text:
                print(text)
        files = [
            {**r.row(), "failures": [asdict(f) for f in r.failures], "warnings": r.warnings, "unproduced": r.unproduced}
            for r in found
        ]
        kept = kept_files(manifests)
        atomic_write_json(
            report_out,
            {"subset": chosen.key, "files": files, "skipped_items": skipped_items(manifests), "kept": kept},
        )
        return found

    def validate_shard(self, *, subset: str, shard: int, shards: int, out: Path) -> None:
        """Check the paths of one shard of a subset's validation; their answers into `out`."""
        chosen = self.registry.subset(subset)
        checked = validate_shard(self.registry, self.settings, chosen, self.settings.raw_root, shard, shards, out)
        print(f"{chosen.key}: shard {shard} of {shards}: {checked:,} paths checked")

    def contact_sheet(self, *, manifests, out: Path, count: int = 16) -> None:
        """A grid of `count` outputs sampled from the subset's manifests: the files it wrote, and the images
        under the links it made (a symlink farm writes only links)."""
        from preprocess.reports.contact import contact_sheet as draw
        from preprocess.reports.contact import sample

        rows = [row for manifest in manifests for row in read_manifest(manifest)]
        links = [path for path, kind, _ in rows if kind == "symlink"]
        paths = [path for path, kind, _ in rows if kind == "file"] + _linked_images(self.settings.data_basedir, links)
        chosen = sample(paths, count)
        why = "" if chosen else "no images: the manifests list no image file" + (" under their links" if links else "")
        print(f"{len(chosen)} of {len(paths)} images on the sheet" + (f" ({why})" if why else ""))
        atomic_write_bytes(out, draw(self.settings.data_basedir, chosen, empty_note=why))

    def summarize(
        self,
        *,
        plan_file: Path,
        report_files,
        table_out: Path,
        json_out: Path,
        instructions: Path,
        config: dict | None = None,
        dashboard_out: Path | None = None,
        front_out: Path | None = None,
        tsv_out: Path | None = None,
        page_out: Path | None = None,
        fingerprints: Path | None = None,
        compared_out: Path | None = None,
    ) -> dict:
        """One validation table over every built subset, and the build's front page (counts, what was not
        built and why, every failing path). Never raises: a failed validation is written down first, and the
        workflow's last rule (`validation_passed`) fails on it, so the report can always be built."""
        planned = plan_from_json(textparse.read_json(plan_file, textparse.DATA_BYTES))
        plans = runview.plans(self.registry, self.settings, self.results, planned)  # a partial run: and the rest
        report_files = runview.report_files(self.results, plans, report_files)
        all_reports = read_reports(report_files)
        bad_items = _skipped_once(report_files)
        skipped = [f"{p.subset}: not built: {p.reason}" for p in plans if p.action == SKIP]
        kept = [
            {**entry, "subset": report["subset"]}
            for report in map(_report, report_files)
            for entry in report.get("kept", [])
        ]
        compared, rebuilt = "", {p.subset for p in plans if over_release(p)}
        if kept or rebuilt:  # before the last line, which a user reads first
            table = Path(table_out).with_name(Path(layout.COMPARED).name)
            rows = "".join(f"{k['subset']}\t{k['path']}\t{k['verdict']}\n" for k in kept)
            atomic_write_text(table, "subset\tpath\tverdict\n" + rows)
            compared = summaries.compared_text(kept, table, rebuilt, compared_out)
        if compared_out is not None:  # always written: the report lists it
            from preprocess.reports.compared import page as compared_page

            ours = self.results / layout.OURS if self.results is not None else Path(layout.OURS)
            atomic_write_text(Path(compared_out), compared_page(kept, self.settings.data_basedir, ours))
        text = _summary_text(all_reports, skipped, bad_items, instructions, compared) + _origin_text(plans)
        print(text)
        atomic_write_text(table_out, text)
        if tsv_out is not None or page_out is not None:
            _write_validation_tables(all_reports, len(skipped), tsv_out, page_out)
        summary = {
            "files": [r.row() for r in all_reports],
            "not_built": skipped,
            "skipped_items": bad_items,
            "compared": summaries.compared_counts(kept, rebuilt),
            "failed": [r.file for r in all_reports if not r.passed],
            "failures": [{"file": r.file, **asdict(f)} for r in all_reports for f in r.failures],
            "unproduced": summaries.unproduced_rows(all_reports),
            "must_pass": self.settings.on_bad_input != "skip",
            "front": summaries.front_counts(plans, all_reports, bad_items),
            "config": config or {},
        }
        if fingerprints is not None:  # the digests of the attested tree, for the front page
            from preprocess.verify.fingerprintfile import front_digests

            summary["fingerprints"] = front_digests(Path(fingerprints))
        atomic_write_json(json_out, summary)
        if dashboard_out is not None:
            summaries.write_dashboard(Path(dashboard_out), summary, plans, config or {}, front_out)
        return summary

    def attest(self, *, out: Path, workers: int = 1, subset: str | None = None, shard=None):
        """The pixel fingerprints of the selected subsets that are built, or of one subset (verify/attest.py);
        `shard` (i, n): the images at positions i, i + n, ... of its sorted paths alone."""
        from preprocess.verify import attest

        chosen = [self.registry.subset(subset)] if subset is not None else self.registry.select(self.settings.subsets)
        found = attest.attest(
            self.registry, chosen, self.settings.data_basedir, Path(out),
            raw_root=self.settings.raw_root, settings=self.settings, workers=workers,
            progress_interval=self.settings.progress_interval, shard=shard,
        )  # fmt: skip
        print(f"{out}: {sum(found.counts.values())} images of {len(found.subsets)} subsets, tree {found.tree}")
        return found

    def gather_fingerprints(self, *, files, out: Path):
        """The tree's fingerprint file from the per-subset ones; a run of some subsets (`subsets:` a list) also
        takes those an earlier run left for the other subsets, so the file still describes the whole tree."""

        files = [Path(f) for f in files]
        if self.settings.subsets != "all":
            selected = {s.key for s in self.registry.select(self.settings.subsets)}
            for subset in self.registry.subsets:
                path = layout.subset_file(self.results, layout.SUBSET_FINGERPRINTS, subset.key)
                if subset.key not in selected and path.is_file():
                    files.append(path)
        return self.merge_fingerprints(files=files, out=out)

    def merge_fingerprints(self, *, files, out: Path):
        """One fingerprint file from several (a subset's shards, or the subsets' files)."""
        from preprocess.verify import fingerprintfile

        found = fingerprintfile.merge(files, Path(out))
        print(f"{out}: {sum(found.counts.values())} images of {len(found.subsets)} subsets, tree {found.tree}")
        return found

    def eval_config(self, *, out: Path) -> dict[str, int]:
        """The evaluation's config files for the task files built under DATA_BASEDIR."""
        from preprocess.pipeline.evalconfig import loader_warnings, write_eval_configs

        counts = write_eval_configs(self.registry, self.settings.data_basedir, Path(out))
        unreadable = loader_warnings(self.registry, self.settings.data_basedir)
        if unreadable:
            print("\n".join([summaries.UNLOADABLE_NOTE, *(f"  {line}" for line in unreadable)]))
        return counts


def _conversions(built: list, subset, name: str | None) -> list:
    """The conversions of this build named `name` (None: all); a train one needs splits: all."""
    named = [c for c in built if name in (None, c.name)]
    if not named:
        names = ", ".join(c.name for c in built)
        hint = ""
        if any(c.name == name for c in splits.conversions(None, subset, splits.ALL)):
            hint = f"; {name} builds the train split: set splits: all (or {{{subset.key}: all}}) in the config"
        raise PreprocessError(f"{subset.key} has no conversion {quoted(name)} (it has: {names}){hint}")
    return named


def _write_sources_table(registry, checks: dict, table_out: Path, page_out: Path | None) -> None:
    headers = ["source", "status", "access", "problems", "instructions"]
    rows = [
        [
            sid,
            check.status,
            registry.source(sid).access,
            "; ".join(check.reasons[:3]),
            f"python -m preprocess info {sid}",
        ]
        for sid, check in sorted(checks.items())
    ]
    atomic_write_text(table_out, "\n".join("\t".join(row) for row in [headers, *rows]) + "\n")
    present = sum(1 for row in rows if row[1] == "present")
    note = f"{present} of {len(rows)} raw downloads present. The last column prints what to download and where."
    if page_out is not None:
        atomic_write_text(Path(page_out), tables.html_page("Raw downloads", headers, rows, note))


def read_checks(paths) -> dict[str, SourceCheck]:
    checks = {}
    for path in paths:
        check = SourceCheck.from_json(textparse.read_json(path, textparse.DATA_BYTES))
        checks[check.source] = check
    return checks


def kept_files(manifests) -> list[dict]:
    """The files that were in place with other bytes and were kept (convert/compare.py), with the verdict."""
    rows = [row for manifest in manifests for row in read_manifest(manifest)]
    return [{"path": path, "verdict": detail.split(" ", 1)[1]} for path, kind, detail in rows if kind == KEPT]


def skipped_items(manifests) -> list[dict]:
    """The items a conversion left out under on_bad_input: skip (manifest rows of kind 'problem')."""
    rows = [row for manifest in manifests for row in read_manifest(manifest)]
    return [{"item": item, "problem": detail} for item, kind, detail in rows if kind == "problem"]


def _linked_images(data_basedir: Path, links: list[str]) -> list[str]:
    """The images under the links, each once: one reached by two links (files/p10/x, p10/x) by the shorter."""
    from preprocess.reports.contact import images_under_link

    shortest: dict[Path, str] = {}
    for link in links:
        for path in images_under_link(data_basedir, link):
            target = (data_basedir / path).resolve()
            if target not in shortest or (path.count("/"), path) < (shortest[target].count("/"), shortest[target]):
                shortest[target] = path
    return list(shortest.values())


def read_reports(paths) -> list[JsonReport]:
    found = []
    for path in paths:
        for row in _report(path)["files"]:
            failures = [Failure(**f) for f in row.pop("failures")]
            warnings, unproduced = row.pop("warnings", []), row.pop("unproduced", [])
            found.append(JsonReport(**row, failures=failures, warnings=warnings, unproduced=unproduced))
    return found


def _report(path) -> dict:
    return textparse.read_json(path, textparse.DATA_BYTES)


def _skipped_once(report_files) -> list[dict]:
    """Bad raw items, each once with the number of conversions that left it out (two subsets may share one)."""
    by_item: dict[str, list[str]] = {}
    for path in report_files:
        for entry in _report(path).get("skipped_items", []):
            by_item.setdefault(entry["item"], []).append(entry["problem"])
    return [{"item": item, "problem": problems[0], "times": len(problems)} for item, problems in by_item.items()]


def _summary_text(all_reports, skipped: list[str], bad_items: list[dict], instructions, compared: str = "") -> str:
    failed = [r for r in all_reports if not r.passed]
    text = "Validation of every task file of the built subsets\n\n" + summaries.validation_table(all_reports)
    failures = summaries.failures_text(all_reports)
    if failures:
        text += "\n\nFailures:\n" + failures
    for warnings in (summaries.warnings_text(all_reports), summaries.unloadable_text(all_reports)):
        if warnings:
            text += "\n\n" + warnings
    unproduced = summaries.unproduced_text(all_reports)
    if unproduced:
        text += "\n\n" + unproduced
    if skipped:
        text += f"\n\n{len(skipped)} subsets not built (what to download: {instructions}):\n"
        text += "\n".join(f"  {line}" for line in skipped)
    else:
        text += "\n\nEvery selected subset is built."
    if bad_items:
        text += f"\n\n{len(bad_items)} bad raw items skipped (on_bad_input: skip):\n"
        text += "\n".join(f"  {item['item']}: {item['problem'][:200]}" for item in bad_items)
    text += compared
    return text + f"\n\n{len(all_reports) - len(failed)} of {len(all_reports)} task files resolve every path"


def _origin_text(plans: list[SubsetDecision]) -> str:
    """The end of the summary's last line: where the validated subsets' files come from."""
    counts = summaries.origin_counts(plans)
    return f" ({counts['from_release']} subsets from the release, {counts['built']} built).\n"


def _write_validation_tables(all_reports, not_built: int, tsv_out: Path | None, page_out: Path | None) -> None:
    rows = [[r.file] + [str(getattr(r, c)) for c in summaries.VALIDATION_COLUMNS] for r in all_reports]
    header = ["task file", *summaries.VALIDATION_COLUMNS]
    if tsv_out is not None:
        atomic_write_text(Path(tsv_out), "\n".join("\t".join(row) for row in [header, *rows]) + "\n")
    resolved = sum(r.passed for r in all_reports)
    note = f"{resolved} of {len(all_reports)} task files resolve every path; {not_built} subsets not built."
    if page_out is not None:
        atomic_write_text(Path(page_out), tables.html_page("Validation of every task file", header, rows, note))
