"""`python -m preprocess`: the same functions the Snakemake rules call, for one subset or one source."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from dataclasses import asdict
from pathlib import Path

from preprocess.errors import PreprocessError
from preprocess.pipeline.interrupts import INTERRUPTED, interrupt_in_parent_only

DEFAULT_RESULTS = Path("results")


def _data_options(parser: argparse.ArgumentParser, basedir_positional: bool = False) -> None:
    parser.add_argument(
        "--config",
        help="YAML file with the keys of config.yaml, read instead of it (default: ./config.yaml when present); "
        "relative paths are relative to the working directory",
    )
    parser.add_argument("--raw-root", dest="raw_root", help="folder holding the raw downloads")
    if not basedir_positional:
        parser.add_argument("--data-basedir", dest="data_basedir", help="the canonical benchmark tree")
    parser.add_argument(
        "--results",
        type=Path,
        default=DEFAULT_RESULTS,
        help="workflow results folder (checksum and schema-check caches, reports); default ./results",
    )


def _settings(args, require_raw: bool = True, basedir: str | None = None, raw_must_exist: bool = True, **values):
    """Settings of a command: --config, else ./config.yaml when present (as the workflow), then the options.

    `basedir`: 'read' or 'write' when the command needs DATA_BASEDIR to be a folder (and writable); `values`:
    config keys an option sets (None: not given), checked by the schema as the file's."""
    from preprocess.formats.rawroot import require_apart
    from preprocess.registry.config import find_config, load_settings, require_directory

    settings = load_settings(
        find_config(args.config, getattr(args, "data_basedir", None)),
        require_raw=require_raw,
        data_basedir=getattr(args, "data_basedir", None),
        raw_root=getattr(args, "raw_root", None),
        **values,
    )
    raw_root = settings.raw_root if settings.raw_root_given else None
    require_apart(raw_root, settings.data_basedir, getattr(args, "results", None), builds=basedir == "write")
    if settings.demo is not None:  # the shipped config builds the demo: it must have been written
        from preprocess.demo import require_demo

        require_demo(settings.demo)
    if settings.raw_root_given and raw_must_exist:
        require_directory(settings.raw_root, "raw root")
    if basedir is not None:
        require_directory(settings.data_basedir, "DATA_BASEDIR", writable=basedir == "write")
    return settings


def _output(settings, args, path: Path, option: str, names: tuple[str, ...] | None = None) -> None:
    """A file named on the command line for writing (with `names`: a folder, and the files written into it):
    not in the raw root, not a link, not a file of DATA_BASEDIR outside the results folder
    (rawroot.require_output)."""
    from preprocess.formats.rawroot import require_output

    raw_root = settings.raw_root if settings.raw_root_given else None
    require_output(Path(path), option, raw_root, settings.data_basedir, getattr(args, "results", None), names)


def _normal(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def suggestions(registry, name: str) -> list[str]:
    """Names that `name` means when case, '-', '_' and '.' are ignored: subsets, sources, MedMNIST flags."""
    key = _normal(name)
    found = [f"{s.key} (subset)" for s in registry.subsets if key in (_normal(s.key), _normal(s.folder))]
    for source in registry.sources.values():
        stems = {re.sub(r"_\d+$", "", Path(f.label).name.split(".")[0]) for f in source.files if "*" not in f.label}
        if key == _normal(source.id):
            found.append(f"{source.id} (source)")
        elif key in {_normal(stem) for stem in stems}:
            found.append(f"{source.id} (source; {name.lower()} is one of its files)")
    return found


def _unknown(registry, name: str, exc: Exception) -> PreprocessError:
    hits = suggestions(registry, name)
    if not hits:
        return exc if isinstance(exc, PreprocessError) else PreprocessError(str(exc))
    return PreprocessError(f"unknown name {name!r}: did you mean {' or '.join(hits)}?")


def _subset(registry, name: str):
    from preprocess.errors import RegistryError

    try:
        return registry.subset(name)
    except RegistryError as exc:
        if "ambiguous" in str(exc):
            raise
        raise _unknown(registry, name, exc) from None


def _source(registry, name: str):
    from preprocess.errors import RegistryError

    try:
        return registry.source(name)
    except RegistryError as exc:
        raise _unknown(registry, name, exc) from None


def cmd_list(args) -> int:
    from preprocess.registry.loader import load_registry

    registry = load_registry()
    rows = list_rows(registry)
    if args.json:
        print(json.dumps(rows, indent=2))
    elif args.markdown:
        print(markdown_table(rows))
    elif args.naming:
        print(naming_table(registry))
    else:
        from preprocess.formats import tables

        print(tables.render(list(rows[0]), [list(r.values()) for r in rows]))
        print(f"\n{len(rows)} subsets, {sum(r['tasks'] for r in rows)} task files, {len(registry.sources)} sources")
    return 0


def list_rows(registry) -> list[dict]:
    """One row per subset: what `list` prints (and docs/tables.py writes into the subsets page)."""
    rows = []
    for subset in registry.subsets:
        access = sorted({registry.source(s).access for s in subset.source_ids})
        rows.append(
            {
                "subset": subset.key,
                "kind": "+".join(c.kind for c in subset.conversions),
                "sources": ",".join(subset.source_ids),
                "access": ",".join(access),
                "image_root": subset.image_root or "",
                "tasks": len(subset.tasks),
            }
        )
    return rows


def markdown_table(rows: list[dict]) -> str:
    lines = ["| subset | conversion | sources | access | image root |", "|---|---|---|---|---|"]
    for row in rows:
        root = f"`{row['image_root']}`" if row["image_root"] else "(text)"
        lines.append(f"| {row['subset']} | {row['kind']} | {row['sources']} | {row['access']} | {root} |")
    return "\n".join(lines)


def _is_template(schema: dict) -> bool:
    refs = [schema, *schema.get("oneOf", [])]
    return any(part.get("$ref") == "#/$defs/template" for part in refs)


RECORD_NAMES = {"test": "the paths the task JSONs name", "train": "the paths the Train_Data JSONLs name"}


def naming_table(registry) -> str:
    """Every output-name template of every conversion, as subsets.yaml gives it (the README's naming table)."""
    lines = ["| subset | conversion | output names (templates of `subsets.yaml`) |", "|---|---|---|"]
    for subset in registry.subsets:
        for conversion in subset.conversions:
            properties = registry.kinds[conversion.kind].params.get("properties", {})
            names = []
            for key, value in conversion.params.items():
                if key in properties and _is_template(properties[key]):
                    shown = value if isinstance(value, str) else ", ".join(f"{k}: {v}" for k, v in value.items())
                    names.append(f"{key} `{shown}`")
            for key in ("records", "train_records"):  # record-driven: the release's own records give the names
                if key in conversion.params:
                    names.append(f"{key} `{conversion.params[key]}`: {RECORD_NAMES[conversion.params[key]]}")
            if names:
                kind = conversion.kind
                if conversion.name != conversion.kind:
                    kind = f"{conversion.name} ({kind})"
                lines.append(f"| {subset.key} | {kind} | {'; '.join(names)} |")
    return "\n".join(lines)


def cmd_info(args) -> int:
    from preprocess.registry.loader import load_registry

    registry = load_registry()
    if args.name in registry.sources:
        source = registry.source(args.name)
        data = asdict(source)
        users = [s.key for s in registry.subsets if source.id in s.source_ids]
        if args.json:
            print(json.dumps({**data, "used_by": users}, indent=2))
        else:
            print(_source_text(source, users, _narrowed_text(args, source)))
        return 0
    subset = _subset(registry, args.name)
    if args.json:
        print(json.dumps(asdict(subset), indent=2))
        return 0
    print(f"{subset.key}\n  image root: {subset.image_root or '(text only)'}")
    for task in subset.tasks:
        root = f", image root {task.image_root}" if task.image_root else ""
        print(f"  task file {task.file}: {task.parser} ({subset.group_config} entry {task.eval}{root})")
    for source_id, specs in registry.files_needed(subset).items():
        labels = [s.label + (" (train split)" if s.split == "train" else "") for s in specs]
        print(f"  source {source_id}: {', '.join(labels)}")
    from preprocess.registry import splits

    for conversion in splits.conversions(None, subset, splits.ALL):
        train = " (train split: built with splits: all)" if conversion.split == splits.TRAIN else ""
        print(f"  conversion {conversion.name}{train}: {conversion.kind} {json.dumps(conversion.params)}")
    return 0


def _narrowed_text(args, source) -> list[str]:
    """The narrowed download: the need list's command, its counts under --config, and how to fetch it."""
    from preprocess.checks import fetch, need

    config = args.config or "my.yaml"
    lines = ["Download only what the benchmark uses (the release's records name these files):"]
    lines.append(f"  medheb need {source.id} --config {config} > {source.id}.txt")
    if args.config:
        settings = _settings(args, require_raw=False, raw_must_exist=False)
        found = need.needs(settings, settings.registry(), [source.id])[source.id]
        lines.append(f"  {need.summary(found, settings.raw_root if settings.raw_root_given else None)}")
    if any(spec.url for spec in source.files) or fetch.hf_repo(source):
        lines.append(f"  medheb download {source.id} --config {config}   # fetches, verifies, resumes")
    else:
        lines += [f"  {line}" for line in fetch.commands(source, "<raw_root>", f"{source.id}-urls.txt", config)]
    return lines


def _source_text(source, users, narrowed: list[str]) -> str:
    lines = [
        f"{source.id}: {source.name}",
        f"  access: {source.access}",
        f"  licence: {source.licence}",
        f"  homepage: {source.homepage}",
        f"  download: {source.download}",
        f"  raw folder: <raw_root>/{source.raw_dir}/",
    ]
    if source.variant:
        lines.append(f"  variant: {source.variant}")
    lines += [
        f"  expects: {f.label}"
        + (f" (>= {f.min_count})" if f.glob else "")
        + (f" md5 {f.md5}" if f.md5 else "")
        + (f": {f.about}" if f.about else "")
        for f in source.files
    ]
    lines += [f"  used by: {', '.join(users)}", "", *narrowed, "", "The whole download:", source.instructions]
    return "\n".join(lines)


def _check(args):
    from preprocess.pipeline import steps

    settings = _settings(args, basedir="read")  # the release's task files are read there
    registry = settings.registry()
    for name in args.source or []:
        _source(registry, name)
    source_ids = args.source or sorted({s for sub in registry.select(settings.subsets) for s in sub.source_ids})
    report_dir = Path(args.report_dir) if args.report_dir else None
    if report_dir is not None:
        _output(settings, args, report_dir, "--report-dir", names=tuple(f"{sid}.json" for sid in source_ids))
    checks = steps.Build(settings, registry, args.results).check(sources=source_ids, report_dir=report_dir)
    return settings, registry, checks


def cmd_check(args) -> int:
    from preprocess.checks import plan, release
    from preprocess.registry import releasenames
    from preprocess.reports import summaries  # here: they pull in the validation code (Pillow)

    settings, registry, checks = _check(args)
    for source_id in checks:
        if not settings.verifies_checksums(source_id):
            print(
                f"warning: checksum verification is off for {source_id} (verify_checksums in the config)",
                file=sys.stderr,
            )
    print(summaries.check_table(registry, checks))
    unusable = summaries.unusable_text(checks)
    if unusable:
        print("\n" + unusable)
    chosen = registry.select(settings.subsets)
    lacking = {subset.key: releasenames.missing_for_build(registry, subset, settings) for subset in chosen}
    unreadable = {key for key, lines in lacking.items() if plan.release_reason(lines) == plan.RELEASE_UNREADABLE}
    released = release.released_subsets(registry, settings, args.results) - unreadable  # plan skips those
    if released:
        print(f"\n{release.FROM_RELEASE} ({release.NOT_NEEDED}): {', '.join(sorted(released))}")
    text = summaries.instructions_text(registry, checks, released)
    if text and not args.quiet:
        print("\n" + text)
    release = [f"  {key}: {line}" for key, lines in lacking.items() if key not in released for line in lines]
    if release:
        heading = (
            "Release files missing or unreadable (one that cannot be read stops its subset's build; a missing "
            "one, a record-driven subset's, whose images it alone names):"
        )
        print(f"\n{heading}\n" + "\n".join(release))
    from preprocess.checks import need

    counted = need.needs(settings, registry, list(checks), args.results)
    counted = need.check_lines(counted, settings.raw_root, args.results)
    print("\nNeeded files (`medheb need SOURCE` lists them, from the release's records):\n" + "\n".join(counted))
    not_present = [c for c in checks.values() if c.status != "present"]
    return 1 if (args.strict and not_present) else 0


def cmd_need(args) -> int:
    from preprocess.checks import fetch, need

    settings = _settings(args, require_raw=False, raw_must_exist=False)
    registry = settings.registry()
    raw_root = settings.raw_root if settings.raw_root_given else None
    for found in need.needs(settings, registry, [_source(registry, n).id for n in args.source], args.results).values():
        lines, sid = found.lines(), found.source.id
        if args.urls:
            lines, without = fetch.urls(found.source, lines)
            if without:
                print(f"{sid}: no download URL for {len(without)} entries, e.g. {without[0]}", file=sys.stderr)
        elif args.hf:
            command = fetch.hf_command(found.source, lines, raw_root or "<raw_root>")
            lines = [command] if command else []
            if not command:
                print(f"{sid}: not a Hugging Face dataset (see `medheb info {sid}`)", file=sys.stderr)
        if lines:
            print("\n".join(lines))
        print(need.summary(found, raw_root), file=sys.stderr)
        for note in found.notes:
            print(f"  note: {note}", file=sys.stderr)
    return 0


def cmd_download(args) -> int:
    from preprocess.checks import fetch, need

    if "release" in args.source:
        return _download_release(args)
    given = [f"--{name}" for name in ("repo", "revision", "include", "subset") if getattr(args, name)]
    if given:
        raise PreprocessError(f"{', '.join(given)}: options of `medheb download release` only")
    settings = _settings(args, raw_must_exist=False)
    registry = settings.registry()
    for found in need.needs(settings, registry, [_source(registry, n).id for n in args.source], args.results).values():
        left = fetch.download(found, settings.raw_root, args.config, bounds=fetch.limits(settings))
        print("\n".join(need.check_lines({found.source.id: found}, settings.raw_root, None)))
        if left:
            print("  by hand:\n" + "\n".join(f"    {line}" for line in left))
    return 0


def _download_release(args) -> int:
    """The release's files into DATA_BASEDIR: exit 1 when files already there with other bytes were kept."""
    from preprocess.checks import fetch, releasefetch

    if args.source != ["release"]:
        others = " ".join(name for name in args.source if name != "release")
        raise PreprocessError(
            f"`release` is downloaded by itself: run `medheb download release`, then `medheb download {others}`"
        )
    settings = _settings(args, require_raw=False, basedir="write", raw_must_exist=False, release_repo=args.repo)
    registry = settings.registry()
    subsets = [_subset(registry, name) for name in args.subset]
    patterns = releasefetch.selection(registry, args.include, subsets)
    outcome = releasefetch.download_release(
        settings.release_repo, args.revision, patterns, settings.data_basedir, fetch.limits(settings)
    )
    if outcome.kept:
        print("Kept, with other bytes than the release's:\n" + "\n".join(outcome.kept_lines()))
    print(outcome.summary())
    if outcome.kept:
        print(f"error: {outcome.kept_message(settings.data_basedir)}", file=sys.stderr)
        return 1
    return 0


def cmd_convert(args) -> int:
    from preprocess.pipeline import steps

    settings = _settings(args, basedir="write")
    shard, shards = _parse_shard(args.shard)
    manifest = Path(args.manifest) if args.manifest else None
    if manifest is not None:
        _output(settings, args, manifest, "--manifest")
    registry = settings.registry()
    steps.Build(settings, registry, args.results).convert(
        subset=_subset(registry, args.subset).key,
        conversion=args.conversion,
        shard=shard,
        shards=shards,
        manifest=manifest,
        workers=args.workers,
        progress_bar=True,  # drawn only when standard error is a terminal; plain lines otherwise
    )
    return 0


def cmd_plan(args) -> int:
    import json
    import time
    from dataclasses import asdict

    from preprocess.pipeline.sizing import estimate_build
    from preprocess.registry import splits
    from preprocess.sizing import budget, report
    from preprocess.sizing.costs import COSTS

    started = time.monotonic()
    settings = _settings(args, basedir="read")  # the release's task files name the items of some subsets
    registry = settings.registry()
    splits.check_keys(settings, registry)  # as a build would: a misspelt `shards` key is not ignored
    found = estimate_build(settings, registry, results=args.results, cores=args.cores[0])
    if args.json:
        print(json.dumps([asdict(e) for e in found], indent=1))
        return 0
    print(report.table(found))
    print("\nthe whole selection, downloaded or not (docs/benchmarks.md: how jobs are sized and scheduled):")
    print(report.budget_table(budget.totals(found, args.cores)))
    print(
        f"\nestimated from {COSTS} in {time.monotonic() - started:.2f} s; items (column counted) as the "
        "build plans them from the raw data, else as the release's records name them or the raw root holds them, "
        "else as the registry counts a full download (subsets.yaml counts)"
    )
    return 0


def _parse_shard(text: str) -> tuple[int, int]:
    try:
        index, count = (int(x) for x in text.split("/"))
        if not 1 <= index <= count:
            raise ValueError
    except ValueError:
        raise PreprocessError(f"--shard takes I/N with 1 <= I <= N, got {text!r}") from None
    return index - 1, count


def cmd_validate(args) -> int:
    from preprocess.checks import validate
    from preprocess.registry import splits

    settings = _settings(args, require_raw=False, basedir="read", raw_must_exist=False)
    if args.report:
        _output(settings, args, Path(args.report), "--report")
    registry = settings.registry()
    # Without a raw root no link may leave the image roots (the symlink farm needs one).
    raw_root = settings.raw_root if settings.raw_root_given and settings.raw_root.is_dir() else None
    subsets = [_subset(registry, name) for name in args.subset] if args.subset else list(registry.subsets)
    decode = args.decode or settings.validate_decode
    all_reports, states = [], {}
    for subset in subsets:
        train = splits.wanted(settings, subset) == splits.ALL
        manifests = validate.results_manifests(args.results, subset)
        subset_reports = validate.validate_subset(
            registry, subset, settings.data_basedir, raw_root, decode, train_built=train, manifests=manifests
        )
        states[subset.key] = validate.subset_state(subset, settings.data_basedir, subset_reports)
        if states[subset.key] in ("ok", "failed") or args.subset:
            all_reports += subset_reports
    if not args.subset:  # Train_Data files no subset answers for: their records, and paths of no subset
        all_reports += validate.validate_train_data(registry, settings.data_basedir, None, decode)
    if not all_reports and not args.subset:
        print(
            f"error: no task file of any subset under {settings.data_basedir}: nothing validated. It should hold "
            "the release's 2D_Task/, 3D_Task/ and Text_Task/ folders",
            file=sys.stderr,
        )
        return 1
    _print_validation(all_reports, states, registry, settings.data_basedir, show_not_built=not args.subset)
    if args.report:
        _write_validation_report(Path(args.report), states, all_reports)
    requested = [key for key, state in states.items() if state == "not built"] if args.subset else []
    valid = [registry.subset(key) for key, state in states.items() if state == "ok"]
    released = sum(_from_release(registry, subset, settings, args.results) for subset in valid)
    if valid:
        print(f"\nsubsets whose every path resolves: {released} from the release, {len(valid) - released} built")
    print("\n" + _verdict(all_reports, requested))
    return 1 if any(not r.passed for r in all_reports) or requested or not all_reports else 0


def _verdict(all_reports, not_built: list[str]) -> str:
    """validate's last line: whether every task file checked resolves every path."""
    passed = sum(r.passed for r in all_reports)
    if passed == len(all_reports) and all_reports and not not_built:
        return f"valid: {passed} of {len(all_reports)} task files resolve every path"
    if not all_reports:
        return "NOT valid: no task file of the subsets asked for was found"
    why = [f"{len(all_reports) - passed} of {len(all_reports)} task files have paths that do not resolve"]
    if not_built:
        why.append(f"asked for but not built: {', '.join(not_built)}")
    return f"NOT valid: {'; '.join(why)}"


def _print_validation(all_reports, states: dict, registry, data_basedir: Path, show_not_built: bool) -> None:
    from preprocess.checks import validate
    from preprocess.reports import summaries

    print(summaries.validation_table(all_reports) if all_reports else "no task files found")
    shown = (summaries.failures_text, summaries.warnings_text, summaries.unloadable_text, summaries.unproduced_text)
    for show in shown:
        text = show(all_reports)
        if text:
            print("\n" + text)
    not_built = [k for k, s in states.items() if s == "not built"]
    if not_built and show_not_built:
        print(f"\nnot built (image root absent): {', '.join(not_built)}")
    unknown = validate.unknown_task_folders(registry, data_basedir)
    if unknown:
        print(f"\ntask folders the registry does not know (not validated): {', '.join(unknown)}")


def _write_validation_report(path: Path, states: dict, all_reports) -> None:
    from preprocess.formats.fsutil import atomic_write_json

    files = [{**r.row(), "failures": [asdict(f) for f in r.failures]} for r in all_reports]
    atomic_write_json(path, {"subsets": states, "files": files})


def cmd_attest(args) -> int:
    """Write the pixel fingerprints of a tree, or compare them with another lab's (preprocess/checks/attest.py)."""
    from preprocess.checks import attest

    target = Path(args.target) if args.target else None
    if args.compare is None:
        if args.out is None:
            raise PreprocessError("attest needs --out FILE (where to write the fingerprints), or --compare THEIRS")
        _attest_tree(args, target, Path(args.out))
        return 0
    mine = target
    if target is None or target.is_dir():  # a tree: fingerprinted now, into --out or the results folder
        mine = Path(args.out) if args.out else args.results / "attest" / "mine.tsv"
        _attest_tree(args, target, mine, report=sys.stderr)  # standard output holds the comparison alone
    found, headers = attest.compare(Path(args.compare), mine)
    if args.json:
        print(json.dumps(attest.comparison_json(found, headers), indent=2))
    else:
        print(attest.comparison_text(found, headers, args.limit))
    return 1 if attest.differs(found) else 0


def _attest_tree(args, data_basedir: Path | None, out: Path, report=None):
    from preprocess.checks import attest
    from preprocess.convert.progress import terminal_stream

    args.data_basedir = str(data_basedir) if data_basedir is not None else None
    settings = _settings(args, require_raw=False, basedir="read", raw_must_exist=False)
    _output(settings, args, out, "--out")
    registry = settings.registry()
    raw_root = settings.raw_root if settings.raw_root_given and settings.raw_root.is_dir() else None
    chosen = [_subset(registry, name) for name in args.subset] if args.subset else registry.select(settings.subsets)
    found = attest.attest(
        registry, chosen, settings.data_basedir, out, raw_root=raw_root, settings=settings, workers=args.workers,
        log=lambda line: print(line, file=sys.stderr), progress_interval=settings.progress_interval,
        bar_stream=terminal_stream(),
    )  # fmt: skip
    if not found.subsets:
        raise PreprocessError(f"no built image subset under {settings.data_basedir}: nothing to attest")
    print(f"{out}: {sum(found.counts.values())} images of {len(found.subsets)} subsets, tree {found.tree}", file=report)
    return found


def cmd_slice(args) -> int:
    """One volume file to PNG slices, outside any subset: for looking at what a file holds."""
    from preprocess.formats.fsutil import atomic_write_bytes
    from preprocess.formats.pngio import encode_png
    from preprocess.formats.rawroot import require_output
    from preprocess.volumes import transforms
    from preprocess.volumes.io import read_volume
    from preprocess.volumes.recipes import Profile
    from preprocess.volumes.slicer import canonical_slices, reference_slices, view_slices

    if not Path(args.file).is_file():
        what = "is a folder, not a volume file" if Path(args.file).is_dir() else "does not exist"
        raise PreprocessError(f"{args.file} {what}: give the path of a .nii, .nii.gz, .nrrd or .npy file")
    volume = read_volume(Path(args.file))
    if args.window:
        profile = Profile("ct_window", level=args.window[0], width=args.window[1], count=args.count)
    else:
        profile = Profile("mr_list", low_pct=args.percentiles[0], high_pct=args.percentiles[1], count=args.count)
    if args.plane:
        if args.window:

            def mapping(plane):
                return transforms.window_to_uint8(plane, *args.window)
        else:
            low, high = transforms.percentile_range(volume.scaled(volume.data), *args.percentiles)

            def mapping(plane):
                return transforms.normalise_to_uint8(plane, low, high)

        slices = view_slices(volume, args.plane, mapping, args.count)
    elif args.mode == "canonical":
        slices = canonical_slices(volume, profile)
    else:
        slices = reference_slices(volume, profile)
    out = Path(args.out)
    # no config is read here: the raw root and DATA_BASEDIR are not known, links and non-files still refused
    require_output(out, "OUT", None, None, None, names=tuple(name for name, _ in slices))
    for name, image in slices:
        atomic_write_bytes(out / name, encode_png(image))
    print(
        f"{len(slices)} slices of {args.file} (shape {volume.data.shape}, spacing "
        f"{tuple(round(v, 3) for v in volume.spacing)}) written to {out}"
    )
    return 0


def cmd_status(args) -> int:
    """One line per subset: its test split (built, not built and why, failed or partially valid, with what to
    do next) and its train split (the Train_Data paths it resolves), apart."""
    from preprocess.checks import attest, validate
    from preprocess.checks.plan import plan_subsets
    from preprocess.checks.release import FROM_RELEASE
    from preprocess.formats import tables
    from preprocess.pipeline import steps
    from preprocess.registry import layout, splits

    settings = _settings(args, require_raw=False, basedir="read")
    registry = settings.registry()
    plans = None
    if settings.raw_root_given:
        checks = steps.Build(settings, registry, args.results).check(sources=sorted(registry.sources))
        plans = {p.subset: p for p in plan_subsets(registry, "all", checks, settings, args.results)}
    rows, counts = [], {}
    fingerprints = args.results / layout.FINGERPRINTS if args.results is not None else None
    published = attest.published_states(registry, fingerprints)
    for subset in registry.subsets:
        raw_root = settings.raw_root if plans is not None else None
        train = splits.wanted(settings, subset) == splits.ALL
        manifests = validate.results_manifests(args.results, subset)
        found = validate.validate_subset(
            registry, subset, settings.data_basedir, raw_root, settings.validate_decode, train_built=train,
            manifests=manifests,
        )  # fmt: skip
        tests = [r for r in found if not r.file.startswith("Train_Data/")]
        state = validate.subset_state(subset, settings.data_basedir, tests)
        ok, paths = sum(r.ok for r in tests), sum(r.paths for r in tests)
        label, step = _status_line(subset, state, ok, (plans or {}).get(subset.key), settings.data_basedir)
        if label == "built" and _from_release(registry, subset, settings, args.results):
            label = FROM_RELEASE
        counts[label.split(":")[0]] = counts.get(label.split(":")[0], 0) + 1
        trains = [r for r in found if r.file.startswith("Train_Data/")]
        no_rule = sum(len(r.unproduced) for r in trains) if manifests else None  # known from the manifests only
        fingerprint = published.get(subset.key, "") if state in ("ok", "failed") else ""
        rows.append([subset.key, label, ok, paths, step, *_train_status(trains, train), no_rule, fingerprint])
    failed = any(r[1] in ("failed", "partially valid") or r[5] == "failed" for r in rows)
    parts = _part_files(settings.data_basedir)
    if args.json:
        # train_paths_no_rule: named, absent, and in no manifest of the results folder (None: no manifests)
        keys = ["subset", "state", "paths_ok", "paths", "next_step", "train_state", "train_paths_ok", "train_paths",
                "train_paths_no_rule", "fingerprint"]  # fmt: skip
        found = {"subsets": [dict(zip(keys, r, strict=True)) for r in rows], "counts": counts}
        print(json.dumps({**found, "part_files": [str(p) for p in parts]}, indent=2))
        return 1 if failed else 0
    table = [
        [key, label[:60], f"{ok}/{paths}" if paths else "-", train_label, f"{t_ok}/{t_paths}" if t_paths else "-",
         "-" if no_rule is None else no_rule, step] + ([fingerprint] if published else [])
        for key, label, ok, paths, step, train_label, t_ok, t_paths, no_rule, fingerprint in rows
    ]  # fmt: skip
    headers = ["subset", "test", "paths ok", "train", "train paths ok", "train paths no rule makes", "next step"]
    print(tables.render(headers + (["fingerprint"] if published else []), table))
    print("\n" + ", ".join(f"{n} {label}" for label, n in sorted(counts.items())))
    if parts:
        print(
            f"\n{len(parts)} temporary .part files left by interrupted runs (rerunning their conversion removes them):"
        )
        print("\n".join(f"  {p}" for p in parts[:20]) + (f"\n  ... {len(parts) - 20} more" if len(parts) > 20 else ""))
    return 1 if failed else 0


def _part_files(data_basedir: Path) -> list[Path]:
    """The temporary files (`*.part`) under DATA_BASEDIR: a write was cut between its data and its rename."""
    if not data_basedir.is_dir():
        return []
    return sorted(
        Path(root, name) for root, _, names in os.walk(data_basedir) for name in names if name.endswith(".part")
    )


def _train_status(reports, wanted: bool) -> tuple[str, int, int]:
    """(state, paths ok, paths) of the subset's Train_Data files, wherever they sit under Train_Data/ (the
    paths of the subset only): no Train_Data, built, failed, or not built. Paths no rule makes count in paths."""
    if not reports:
        return "no Train_Data", 0, 0
    ok, paths = sum(r.ok for r in reports), sum(r.paths + len(r.unproduced) for r in reports)
    if not wanted:
        state = "not built (splits: test)" if any(r.not_built for r in reports) else "built"
    else:
        state = "built" if all(r.passed for r in reports) else "failed"
    return state, ok, paths + sum(r.not_built for r in reports)


def _from_release(registry, subset, settings, results) -> bool:
    """A valid subset whose files this pipeline did not write: a text subset (its task files alone), or one
    whose images are the release's (checks/release.py)."""
    from preprocess.checks.release import presence

    return subset.is_text or (subset.redistributed and presence(registry, subset, settings, results).from_release)


def _status_line(subset, state: str, ok: int, plan, data_basedir: Path) -> tuple[str, str]:
    """The state a user reads, and the next step."""
    if state == "ok":
        return "built", ""
    if state == "failed":
        step = f"python -m preprocess validate {data_basedir} --subset {subset.key} --report r.json"
        if plan is None and any(c.kind == "symlink_farm" for c in subset.conversions):
            step = "give --raw-root DIR (or a --config with raw_root): its links point into the raw root"
        return ("partially valid" if ok else "failed"), step
    if plan is not None and plan.action == "skip":
        step = f"python -m preprocess info {sorted(plan.instructions)[0]}" if plan.instructions else ""
        step = step or (plan.problems[0] if plan.problems else "")  # a release file: what to download
        return f"not built: {plan.reason}", step
    if state == "no task files":
        return "no task files", f"download the release's {subset.group}/{subset.folder}/"
    return "not built", f"snakemake --cores 8 --config 'subsets=[\"{subset.key}\"]'"


def cmd_eval_config(args) -> int:
    """The evaluation's config files for the task files built under DATA_BASEDIR."""
    from preprocess.pipeline import steps
    from preprocess.pipeline.evalconfig import NAMES

    settings = _settings(args, require_raw=False, basedir="read", raw_must_exist=False)
    _output(settings, args, Path(args.out), "--out", names=NAMES)
    counts = steps.Build(settings).eval_config(out=Path(args.out))
    for name, count in counts.items():
        print(f"{Path(args.out) / name}: {count} task files")
    if not any(counts.values()):
        print(f"error: no built task file under {settings.data_basedir}", file=sys.stderr)
        return 1
    return 0


def cmd_demo(args) -> int:
    from preprocess.demo import is_current, write_demo

    if args.real_sizes:
        from preprocess.demo.real import write_real

        out = write_real(Path(args.directory), args.items, args.sources, full_counts=args.full_counts)
        print(f"real-size fakes written to {out}: {args.items} items a source; config {out / 'config.yaml'}")
        return 0
    kept = is_current(Path(args.directory), args.release_images) and not args.force
    out = write_demo(Path(args.directory), force=args.force, release_images=args.release_images)
    where = f"raw root {out / 'raw'}, release tree {out / 'DATA_BASEDIR'}"
    if args.release_images:
        from preprocess.demo.release_images import SHIPPED, notices
        from preprocess.registry.loader import load_registry

        where += (
            f" (with the release's images of {len(SHIPPED)} open subsets and a {notices.NOTICE} in each of the "
            f"{len(notices.restricted(load_registry()))} restricted image folders)"
        )
    if kept:
        print(f"demo in {out} kept as it is (this version wrote it; --force writes it again): {where}")
    else:
        print(f"demo written to {out}: {where}")
    return 0


def cmd_register(args) -> int:
    from preprocess.checks.register import register_source

    settings = _settings(args)
    _output(settings, args, Path(args.out), "--out")
    registry = settings.registry()
    text = register_source(registry, settings, args.source, Path(args.out))
    print(text)
    return 0


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("medheb-preprocess")
    except PackageNotFoundError:  # run from a source tree that is not installed
        return "unknown (not installed)"


class _VersionAction(argparse.Action):
    """`--version`, whose text is looked up only when asked for (importlib.metadata is slow to import)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest, nargs=0, default=default, help=help or "print the version and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        sys.stdout.write(f"medheb-preprocess {_version()}\n")
        parser.exit()


def _args_list(p) -> None:
    p.add_argument("--json", action="store_true", help="one object per subset (the table's columns) instead")
    p.add_argument("--markdown", action="store_true", help="the table of the README")
    p.add_argument("--naming", action="store_true", help="the README's table of output-name templates")


def _args_info(p) -> None:
    p.add_argument("name", help="a subset (e.g. 2D_Task/APTOS or APTOS) or a source id (see `list`)")
    p.add_argument("--json", action="store_true", help="the registry's record of it as JSON")
    p.add_argument("--config", help="a source's needed files are counted for this config (as `need`)")


def _args_check(p) -> None:
    _data_options(p)
    p.add_argument("--source", nargs="+", help="sources to check (default: those of the selected subsets)")
    p.add_argument("--report-dir", help="write one JSON report per source here")
    p.add_argument("--strict", action="store_true", help="exit 1 when a source is not present")
    p.add_argument("--quiet", action="store_true", help="do not print instructions")


def _args_need(p) -> None:
    p.add_argument("source", nargs="+", help="source ids (see `list`)")
    _data_options(p)
    shown = p.add_mutually_exclusive_group()
    shown.add_argument("--urls", action="store_true", help="download URLs (for wget -i / aria2c -i) instead of paths")
    shown.add_argument("--hf", action="store_true", help="the `hf download --include` command of a Hugging Face source")


def _args_download(p) -> None:
    p.add_argument(
        "source", nargs="+", help="source ids (see `list`): their needed files into the raw root; or `release`: the "
        "benchmark's release from Hugging Face into DATA_BASEDIR (the options below)",
    )  # fmt: skip
    _data_options(p)
    release = p.add_argument_group(
        "download release",
        "Without --include or --subset: the task files (2D_Task/, 3D_Task/, Text_Task/) and Train_Data/ only, no "
        "image (most of the release's size). A file already in DATA_BASEDIR is never replaced; one with other "
        "bytes is listed, and the command exits 1.",
    )
    release.add_argument(
        "--repo", help="the release's Hugging Face dataset, owner/name (default: the config's release_repo, "
        "itself by default the public reviewer sample)",
    )  # fmt: skip
    release.add_argument("--revision", help="a branch, tag or commit of it (default: main)")
    release.add_argument(
        "--include", action="append", default=[], metavar="PATTERN", help="files to fetch, as huggingface_hub's "
        "allow_patterns ('*' crosses '/'), e.g. 'Train_Data/**'; repeatable",
    )  # fmt: skip
    release.add_argument(
        "--subset", action="append", default=[], metavar="KEY", help="a subset's task files, Train_Data files and "
        "images (e.g. APTOS or 2D_Task/APTOS); repeatable",
    )  # fmt: skip


def _args_convert(p) -> None:
    p.add_argument("subset")
    _data_options(p)
    p.add_argument("--conversion", help="only this conversion of the subset")
    p.add_argument("--shard", default="1/1", help="I/N: build the I-th of N shards (default 1/1)")
    p.add_argument("--manifest", help="where to write the manifest (default under --results)")
    p.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")


def _args_plan(p) -> None:
    _data_options(p)
    p.add_argument(
        "--json", action="store_true", help="one object per conversion (and per raw check) instead of the table"
    )
    p.add_argument(
        "--cores",
        type=int,
        nargs="+",
        default=[32, 256, 1024],
        metavar="N",
        help="wall time on N cores (default 32 256 1024)",
    )


def _args_tree(p) -> None:
    """Commands that read a DATA_BASEDIR given as their first argument."""
    p.add_argument("data_basedir", metavar="DATA_BASEDIR")
    _data_options(p, basedir_positional=True)


def _args_validate(p) -> None:
    _args_tree(p)
    p.add_argument("--subset", nargs="+", help="only these subsets (then 'not built' is a failure)")
    p.add_argument("--decode", choices=["quick", "full"], help="quick (default) or full image decoding")
    p.add_argument("--report", help="write the JSON report (every failing path with its reason) here")


def _args_attest(p) -> None:
    p.add_argument(
        "target", nargs="?", metavar="DATA_BASEDIR | MINE", help="the tree (default: the config's), or with "
        "--compare a fingerprint file of yours",
    )  # fmt: skip
    _data_options(p, basedir_positional=True)
    p.add_argument(
        "--out", help="the fingerprint file to write (with --compare and a tree: default RESULTS/attest/mine.tsv)"
    )
    p.add_argument(
        "--compare", metavar="THEIRS", help="fingerprint file to compare with (or a pipe: -, <(command)); exit 1 "
        "on any difference",
    )  # fmt: skip
    p.add_argument("--subset", nargs="+", help="only these subsets (default: the config's that are built)")
    p.add_argument("--workers", type=int, default=1, help="worker processes decoding images (default 1)")
    p.add_argument("--limit", type=int, default=20, help="differing paths listed per kind (default 20)")
    p.add_argument("--json", action="store_true", help="the comparison as JSON, every differing path")


def _args_slice(p) -> None:
    p.add_argument("file", help=".nii, .nii.gz, .nrrd or .npy")
    p.add_argument("out", help="folder for the PNGs")
    p.add_argument("--window", nargs=2, type=float, metavar=("LEVEL", "WIDTH"), help="CT window (default: MR)")
    p.add_argument("--percentiles", nargs=2, type=float, default=[0.5, 99.5], metavar=("LOW", "HIGH"))
    p.add_argument("--mode", choices=["reference", "canonical"], default="reference")
    p.add_argument("--plane", choices=["axial", "coronal", "sagittal"], help="a canonical view instead")
    p.add_argument("--count", type=int, default=64, help="slices (default 64)")


def _args_status(p) -> None:
    _args_tree(p)
    p.add_argument("--json", action="store_true", help="the same as JSON: one object per subset, and the counts")


def _args_eval_config(p) -> None:
    _args_tree(p)
    p.add_argument("--out", required=True, help="folder for 2D_Task.yaml, 3D_Task.yaml, Text_Task.yaml")


def _args_demo(p) -> None:
    p.add_argument("directory")
    p.add_argument("--force", action="store_true", help="rewrite an existing demo")
    p.add_argument(
        "--release-images",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="DATA_BASEDIR also gets what the release ships: the images of the open subsets (made by the reference"
        " rules, not by the conversions) and a LICENSE_NOTICE.md in each restricted image folder (default: off)",
    )
    p.add_argument(
        "--real-sizes", action="store_true", help="the demo plus N items a source at the upstream's real sizes"
    )
    p.add_argument("--items", type=int, default=4, help="--real-sizes: items a source (default 4)")
    p.add_argument("--sources", nargs="+", help="--real-sizes: only these sources (default all it knows)")
    p.add_argument("--full-counts", action="store_true", help="--real-sizes: also dermamnist_224 at full counts")


def _args_register(p) -> None:
    p.add_argument("source")
    _data_options(p)
    p.add_argument("--out", required=True, help="override YAML to write (use as registry_overrides)")


# command: (help, function, arguments)
COMMANDS = {
    "list": ("every subset: kind, sources, access, image root", cmd_list, _args_list),
    "info": ("one subset or source, with download instructions", cmd_info, _args_info),
    "check": ("check raw downloads: present, missing, incomplete, corrupt", cmd_check, _args_check),
    "need": ("the raw files the build reads of a source, from the release's records", cmd_need, _args_need),
    "download": (
        "fetch those files of open and Hugging Face sources into the raw root; `download release`: the release",
        cmd_download,
        _args_download,
    ),
    "convert": ("build one subset (or one shard of one conversion)", cmd_convert, _args_convert),
    "plan": ("estimate items, files, size, core-hours and jobs per subset and split", cmd_plan, _args_plan),
    "validate": ("check every image path of every task JSON", cmd_validate, _args_validate),
    "attest": ("pixel fingerprints of the built tree, or --compare them with another's", cmd_attest, _args_attest),
    "slice": ("slice one volume file into PNGs (debugging one volume)", cmd_slice, _args_slice),
    "status": ("one line per subset: built, not built and why, failed; what next", cmd_status, _args_status),
    "eval-config": (
        "the evaluation's 2D/3D/Text_Task.yaml for the built task files",
        cmd_eval_config,
        _args_eval_config,
    ),
    "demo": ("write the embedded demo: a tiny raw root and release tree", cmd_demo, _args_demo),
    "register": ("record MD5s of your own raw copy of a source (an override file)", cmd_register, _args_register),
}


def build_parser(prog: str = "python -m preprocess") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (help_text, function, add_arguments) in COMMANDS.items():
        command = sub.add_parser(name, help=help_text)
        add_arguments(command)
        command.set_defaults(func=function)
    return parser


# Commands that only read a tree: they use a results folder's caches when it exists, and never create one.
READ_ONLY = ("validate", "status", "eval-config", "plan")


def main(argv=None, prog: str = "python -m preprocess") -> int:
    args = build_parser(prog).parse_args(argv)
    interrupt_in_parent_only()
    if args.command in READ_ONLY and not args.results.is_dir():
        args.results = None
    try:
        code = args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
        return code
    except PreprocessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\n{INTERRUPTED}", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `| head` closed the pipe: what was wanted is printed
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except OSError as exc:  # outside any item: a full disk, a read-only or missing folder
        print(
            f"error: {exc.strerror or exc}: {exc.filename or ''}; make room, fix the permissions or the path, "
            "then run again (finished files are kept)",
            file=sys.stderr,
        )
        return 2
    except Exception as exc:  # a fault no check names yet: one line, the traceback only on request
        if os.environ.get("MEDHEB_TRACEBACK"):
            raise
        print(
            f"error: unexpected {type(exc).__name__}: {exc}; please report it (MEDHEB_TRACEBACK=1 shows where "
            "it happened)",
            file=sys.stderr,
        )
        return 2


def run() -> None:
    """The `medheb` console script."""
    sys.exit(main(prog="medheb"))
