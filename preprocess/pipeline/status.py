"""`status`: one line per subset of a tree, its test split (built, not built and why, failed or partially
valid, with what to do next) and its train split (the Train_Data paths it resolves), apart."""

from __future__ import annotations

import json
import os
from pathlib import Path

from preprocess.formats import tables
from preprocess.formats.partnames import is_part_name
from preprocess.pipeline import steps
from preprocess.pipeline.validation import from_release, validate_files
from preprocess.rawdata.partfile import is_download_part
from preprocess.readiness.buildable import decide_subsets
from preprocess.registry import layout, splits
from preprocess.release.holdings import FROM_RELEASE
from preprocess.verify import attest, validate


def print_status(settings, registry, results: Path | None, as_json: bool = False) -> int:
    """The status table (or its JSON); returns 1 when a subset failed."""
    plans = None
    if settings.raw_root_given:
        checks = steps.Build(settings, registry, results).check(sources=sorted(registry.sources))
        plans = {p.subset: p for p in decide_subsets(registry, "all", checks, settings, results)}
    rows, counts = [], {}
    fingerprints = results / layout.FINGERPRINTS if results is not None else None
    published = attest.published_states(registry, fingerprints)
    for subset in registry.subsets:
        raw_root = settings.raw_root if plans is not None else None
        train = splits.wanted(settings, subset) == splits.ALL
        manifests = layout.shard_manifests(results, subset)
        found = validate_files(registry, settings, subset, raw_root, manifests=manifests)
        tests = [r for r in found if not r.file.startswith("Train_Data/")]
        state = validate.subset_state(subset, settings.data_basedir, tests)
        ok, paths = sum(r.ok for r in tests), sum(r.paths for r in tests)
        label, step = _status_line(subset, state, ok, (plans or {}).get(subset.key), settings.data_basedir)
        if label == "built" and from_release(registry, subset, settings, results):
            label = FROM_RELEASE
        counts[label.split(":")[0]] = counts.get(label.split(":")[0], 0) + 1
        trains = [r for r in found if r.file.startswith("Train_Data/")]
        no_rule = sum(len(r.unproduced) for r in trains) if manifests else None  # known from the manifests only
        fingerprint = published.get(subset.key, "") if state in ("ok", "failed") else ""
        rows.append([subset.key, label, ok, paths, step, *_train_status(trains, train), no_rule, fingerprint])
    failed = any(r[1] in ("failed", "partially valid") or r[5] == "failed" for r in rows)
    parts = _part_files(settings.data_basedir)
    if as_json:
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
    """The conversions' temporary files under DATA_BASEDIR (formats/partnames.is_part_name): a write was cut
    between its data and its rename. Another tool's `*.part` is not one, and is not listed; nor is an interrupted
    `download release`'s (rawdata/partfile.py), which the next download resumes, not a conversion."""
    if not data_basedir.is_dir():
        return []
    return sorted(
        Path(root, name) for root, _, names in os.walk(data_basedir) for name in names if _conversion_part(name)
    )


def _conversion_part(name: str) -> bool:
    return is_part_name(name) and not is_download_part(name)


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
