"""Validation of a built tree: every image path of every task file, by subset (the one call of the validator
that the workflow's `validate_subset` step, `validate` and `status` share), with the verdict `validate` prints."""

from __future__ import annotations

import sys
from dataclasses import asdict
from pathlib import Path

from preprocess.formats.fsutil import atomic_write_json
from preprocess.pipeline import names
from preprocess.registry import layout, splits
from preprocess.release.holdings import presence
from preprocess.reports import summaries
from preprocess.verify import validate, validateshards


def validate_files(
    registry, settings, subset, raw_root: Path | None, decode: str | None = None, manifests=(), shards=(),
    checker_class=None,
):  # fmt: skip
    """The reports of the subset's task files and Train_Data files under DATA_BASEDIR (train paths absent count
    as not built unless the settings build the train split); `decode` None: the config's. `shards`: the files
    of the validation's shards (validate_shard), whose answers are taken as given."""
    if shards:
        known = validateshards.read_answers(shards)
        checker_class = validateshards.answering(settings.data_basedir, known)
    return validate.validate_subset(
        registry, subset, settings.data_basedir, raw_root, decode or settings.validate_decode,
        train_built=splits.wanted(settings, subset) == splits.ALL, manifests=manifests, checker_class=checker_class,
    )  # fmt: skip


def validate_shard(registry, settings, subset, raw_root: Path | None, shard: int, shards: int, out: Path) -> int:
    """Check the paths of shard `shard` of `shards` of the subset's files (the workflow's validate_shard); their
    answers into `out`, for the subset's report (validate_files with `shards`). Returns the paths checked."""

    def walk(checker_class):
        validate_files(registry, settings, subset, raw_root, checker_class=checker_class)

    rows = validateshards.shard_answers(walk, settings.data_basedir, shard, shards)
    validateshards.write_shard(out, subset.key, shard, shards, rows)
    return len(rows)


def from_release(registry, subset, settings, results) -> bool:
    """A valid subset whose files this pipeline did not write: a text subset (its task files alone), or one
    whose images are the release's (release/holdings.py)."""
    return subset.is_text or (subset.redistributed and presence(registry, subset, settings, results).from_release)


def validate_tree(settings, registry, results: Path | None, subsets=None, decode=None, report=None) -> int:
    """`validate`: every subset's task files (or those of `subsets`, when 'not built' is a failure), printed
    with the verdict; the JSON report into `report` when given. Returns the exit status."""
    # Without a raw root no link may leave the image roots (the symlink farm needs one).
    raw_root = settings.raw_root if settings.raw_root_given and settings.raw_root.is_dir() else None
    chosen = [names.subset(registry, name) for name in subsets] if subsets else list(registry.subsets)
    decode = decode or settings.validate_decode
    all_reports, states = [], {}
    for subset in chosen:
        manifests = layout.shard_manifests(results, subset)
        subset_reports = validate_files(registry, settings, subset, raw_root, decode, manifests=manifests)
        states[subset.key] = validate.subset_state(subset, settings.data_basedir, subset_reports)
        if states[subset.key] in ("ok", "failed") or subsets:
            all_reports += subset_reports
    if not subsets:  # Train_Data files no subset answers for: their records, and paths of no subset
        all_reports += validate.validate_train_data(registry, settings.data_basedir, None, decode)
    if not all_reports and not subsets:
        print(
            f"error: no task file of any subset under {settings.data_basedir}: nothing validated. It should hold "
            "the release's 2D_Task/, 3D_Task/ and Text_Task/ folders",
            file=sys.stderr,
        )
        return 1
    _print_validation(all_reports, states, registry, settings.data_basedir, show_not_built=not subsets)
    if report:
        _write_validation_report(Path(report), states, all_reports)
    requested = [key for key, state in states.items() if state == "not built"] if subsets else []
    valid = [registry.subset(key) for key, state in states.items() if state == "ok"]
    released = sum(from_release(registry, subset, settings, results) for subset in valid)
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
    files = [{**r.row(), "failures": [asdict(f) for f in r.failures]} for r in all_reports]
    atomic_write_json(path, {"subsets": states, "files": files})
