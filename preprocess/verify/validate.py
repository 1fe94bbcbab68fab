"""Validate every image path of every task JSON (and Train_Data JSONL) against the built tree."""

from __future__ import annotations

import difflib
import errno
import os
import stat
from dataclasses import asdict, dataclass, field
from pathlib import Path

from preprocess.errors import UnsafePathError
from preprocess.formats import releasefile
from preprocess.formats.fsutil import PATH_MAX, clipped, file_type, is_within, safe_relative
from preprocess.formats.imagecheck import image_problem
from preprocess.formats.rawroot import link_out
from preprocess.registry import layout
from preprocess.registry.model import Registry, Subset
from preprocess.release import records, trainlist

MISSING, UNREADABLE, UNSAFE, BAD_RECORD = "missing", "unreadable", "unsafe", "bad_record"
NO_SUBSET = "no_subset"  # a Train_Data path under no subset's image folder


@dataclass
class Failure:
    record: int | None
    field: str
    path: str
    problem: str
    reason: str
    suggestions: list[str] = field(default_factory=list)


@dataclass
class JsonReport:
    file: str
    subset: str | None
    records: int = 0
    bad_records: int = 0
    paths: int = 0
    ok: int = 0
    missing: int = 0
    unreadable: int = 0
    unsafe: int = 0
    no_subset: int = 0
    not_built: int = 0  # Train_Data paths absent while the subset builds the test split only (not failures)
    failures: list[Failure] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # loadability: fields whose type changes across records
    unproduced: list[str] = field(default_factory=list)  # Train_Data paths absent that no conversion wrote
    # records the evaluation's loader for the file's parser cannot read as published: {"record", "reason"}
    unloadable: list[dict] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.failures

    def add(self, failure: Failure) -> None:
        self.failures.append(failure)
        if failure.problem == BAD_RECORD:
            self.bad_records += 1
        else:
            setattr(self, failure.problem, getattr(self, failure.problem) + 1)

    def row(self) -> dict:
        data = asdict(self)
        data.pop("failures")
        data.pop("warnings")
        data.pop("unproduced")
        return data


class PathChecker:
    """Resolves image paths against one root, remembering answers (tasks repeat their images)."""

    def __init__(
        self,
        root: Path,
        extra_roots=(),
        decode: str = "quick",
        confine: Path | None = None,
        outside_hint: str = "",
        escape: str | None = None,
    ):
        """`confine`: the folder paths must stay in after links are followed (default the root itself; a task
        root below its subset's folder, or a link such as MIMIC's files/, is confined to the subset's folder).
        `outside_hint` ends the reason of a path that resolves outside (what would allow its target). `escape`:
        why no path may be used at all (the confining folder is a link out of DATA_BASEDIR)."""
        self.root = root
        self.outside_hint = outside_hint
        self.escape = escape
        confined = Path(os.path.realpath(confine or root))
        self.allowed = [confined] + [Path(os.path.realpath(r)) for r in extra_roots]
        self.decode = decode
        self._answers: dict[str, tuple[str, str] | None] = {}
        self._listings: dict[Path, list[str]] = {}

    def remember(self, answers: dict[str, tuple[str, str] | None]) -> None:
        """Take these answers as given (another job checked those paths: verify/validateshards.py)."""
        self._answers.update(answers)

    def problem(self, path_text: str) -> tuple[str, str] | None:
        if path_text not in self._answers:
            self._answers[path_text] = self._check(path_text)
        return self._answers[path_text]

    def _check(self, path_text: str) -> tuple[str, str] | None:
        try:
            relative = safe_relative(path_text, "image path")
        except UnsafePathError as exc:
            return UNSAFE, str(exc)
        full = self.root / relative
        try:
            return self._check_file(full)
        except OSError as exc:  # permissions, an I/O error: this path only
            if exc.errno == errno.ENAMETOOLONG:  # short enough alone, too long joined to its root: no file
                return UNSAFE, f"joined to {self.root}, longer than a path can be (at most {PATH_MAX - 1:,} bytes)"
            return UNREADABLE, f"cannot be read ({exc.strerror or exc})"

    def _check_file(self, full: Path) -> tuple[str, str] | None:
        try:
            os.lstat(full)
        except OSError as exc:
            if exc.errno == errno.ENAMETOOLONG:  # not missing: no file can have that name (_check says so)
                raise
            return MISSING, "no such file"
        if self.escape is not None:
            return UNSAFE, self.escape
        real = Path(os.path.realpath(full))
        if not is_within(real, self.allowed):
            return UNSAFE, f"resolves to {real}, outside the image root and its allowed link targets{self.outside_hint}"
        if not real.exists():
            return MISSING, f"broken link to {real}"
        mode = os.stat(real).st_mode
        if not stat.S_ISREG(mode):
            return UNREADABLE, f"{file_type(mode)}, not a regular file"
        reason = image_problem(real, self.decode)
        return (UNREADABLE, reason) if reason else None

    def suggestions(self, path_text: str) -> list[str]:
        full = self.root / path_text
        folder = full.parent
        if folder not in self._listings:
            try:
                self._listings[folder] = sorted(os.listdir(folder))
            except OSError:
                self._listings[folder] = []
        return difflib.get_close_matches(full.name, self._listings[folder], n=3, cutoff=0.6)


def load_records(path: Path, jsonl: bool, inside: Path | None = None) -> list[tuple[int, object]]:
    """(number, record) of each record of a task file (its index; in a JSONL its 0-based line number, as
    trainlist numbers records), or raise ValueError naming the problem (releasefile: the one reader of the
    release's files, which refuses one resolving out of `inside`, DATA_BASEDIR; here a broken JSONL line fails
    its whole file)."""
    if not jsonl:
        return list(enumerate(releasefile.read_task_json(path, inside)))
    rows = releasefile.read_jsonl(path, inside)
    broken = next((row for _, row in rows if isinstance(row, releasefile.BrokenLine)), None)
    if broken is not None:
        raise ValueError(broken.reason)
    return rows


def validate_file(
    path: Path,
    checker: PathChecker,
    subset: str | None,
    jsonl: bool = False,
    shown_name: str | None = None,
    parser: str | None = None,
    train_built: bool = True,
    belongs: trainlist.ImageTrees | None = None,
    answers: bool = True,
    inside: Path | None = None,
) -> JsonReport:
    """Check every record of a task file (JSON list) or Train_Data file (JSON Lines) and resolve its images.

    Test records are checked against their parser's fields; only the image fields that parser opens are
    resolved, through `checker` (the task file's own image root, as the evaluation joins paths). A Train_Data
    path that is absent while `train_built` is false (the subset builds its test split only) counts as
    not_built, not as a failure. With `belongs` (a Train_Data file that may name images of several subsets)
    only the paths of `subset` are resolved, and only records naming one count; when the subset `answers` for
    the file, its unreadable records and its paths of no subset (no_subset) are its failures too. `inside`:
    DATA_BASEDIR, out of which the file may not resolve (a link to a system file is no release file)."""
    report = JsonReport(shown_name or str(path), subset)
    try:
        rows = load_records(path, jsonl, inside)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        if answers:
            report.add(Failure(None, "<file>", "", BAD_RECORD, f"cannot read task file: {exc}"))
        return report
    report.warnings = records.mixed_types([row for _, row in rows]) if answers else []
    if not jsonl:  # a warning, not a failure: the records stay as the release publishes them
        report.unloadable = records.unloadable(rows, parser)
    for index, row in rows:
        problems = records.train_record_problems(row) if jsonl else records.task_record_problems(row, parser)
        if problems:
            if answers:
                report.records += 1
                report.add(Failure(index, problems[0].split(":")[0], "", BAD_RECORD, "; ".join(problems)))
            continue
        refs = records.train_record_images(index, row) if jsonl else records.task_record_images(index, row, parser)
        owners = {r.path: belongs.subset_of(r.path) for r in refs} if belongs is not None else {}
        if belongs is not None:
            refs = [r for r in refs if owners[r.path] == subset or (answers and owners[r.path] is None)]
        if answers or refs:
            report.records += 1
        for ref in refs:
            found = checker.problem(ref.path)
            if belongs is not None and owners[ref.path] is None and (found is None or found[0] != UNSAFE):
                found = NO_SUBSET, f"belongs to no subset: {belongs.why_none(ref.path)}"
            elif found is not None and found[0] == MISSING and jsonl and not train_built:
                report.not_built += 1
                continue
            report.paths += 1
            if found is None:
                report.ok += 1
                continue
            kind, reason = found
            hints = checker.suggestions(ref.path) if kind == MISSING else []
            report.add(Failure(ref.record, ref.field, clipped(ref.path), kind, reason, hints))
    return report


def extra_roots(registry: Registry, subset: Subset, raw_root: Path | None) -> list[Path]:
    """Link targets a subset's image root may point into (the MIMIC-CXR symlink farm, CheXpert-Plus)."""
    if raw_root is None:
        return []
    roots = []
    for conversion in subset.conversions:
        if conversion.kind == "symlink_farm":
            source = registry.source(conversion.params["source"])
            roots.append(layout.raw_dir(raw_root, source))
    return roots


def _links_hint(subset: Subset, raw_root: Path | None) -> str:
    """Without a raw root, the links a symlink farm made into it cannot be allowed: say what is missing."""
    if raw_root is not None or not any(c.kind == "symlink_farm" for c in subset.conversions):
        return ""
    return (
        f" (the links of {subset.key} point into the raw root: give it with --raw-root DIR, or a --config "
        "that sets raw_root, to check them)"
    )


def validate_subset(
    registry: Registry,
    subset: Subset,
    data_basedir: Path,
    raw_root: Path | None = None,
    decode: str = "quick",
    train_built: bool = True,
    manifests=(),
    checker_class=None,
) -> list[JsonReport]:
    """Reports for the subset's registered task files that exist, each resolved against its own image root,
    and for any other JSON in its folder (resolved against the subset's folder, every image field counted);
    then its Train_Data files (absent paths are not_built when `train_built` is false). With the subset's
    conversion `manifests`, Train_Data paths none of them lists are set apart (unproduced). `checker_class`
    (default PathChecker) makes each root's checker: a shard of the validation lists or answers the paths
    through its own (verify/validateshards.py)."""
    make = checker_class or PathChecker
    folder = layout.task_dir(data_basedir, subset)
    links = extra_roots(registry, subset, raw_root)
    checkers: dict[Path, PathChecker] = {}

    confine = layout.subset_dir(data_basedir, subset) if subset.image_root else folder
    escape = _escape(data_basedir, confine)

    def checker_for(root: Path) -> PathChecker:
        if root not in checkers:
            checkers[root] = make(root, links, decode, confine, _links_hint(subset, raw_root), escape)
        return checkers[root]

    default_root = layout.image_root(data_basedir, subset) or folder
    listed = [(task.file, task.parser, layout.task_image_root(data_basedir, task) or folder) for task in subset.tasks]
    if folder.is_dir():
        known = set(subset.task_files)
        others = sorted(n for n in os.listdir(folder) if n.endswith(".json") and n not in known)
        listed += [(name, None, default_root) for name in others]
    reports = []
    for name, parser, root in listed:
        path = folder / name
        if os.path.lexists(path):  # a link to nothing or a FIFO is reported, not passed over
            shown = f"{subset.group}/{subset.folder}/{name}"
            checker = checker_for(root)
            reports.append(
                validate_file(path, checker, subset.key, shown_name=shown, parser=parser, inside=data_basedir)
            )
    if reports:
        reports += validate_train_data(registry, data_basedir, subset, decode, train_built, links, make)
        if manifests:
            set_unproduced(reports, produced_paths(manifests))
    return reports


def _escape(data_basedir: Path, confine: Path) -> str | None:
    """Why no image of a subset counts when its folder is a link out of DATA_BASEDIR (the raw root, say: what
    a build writes there is not the tree's), or None."""
    found = link_out(data_basedir, confine)
    if found is None:
        return None
    link, real = found
    return (
        f"{link} is a link to {real}, outside DATA_BASEDIR: no image under it counts as built (the pipeline "
        "writes nothing through such a link); remove the link (its target is kept) and build the subset again"
    )


def produced_paths(manifests) -> set[str]:
    """Every path the manifests list as written (files and links), normalised."""
    from preprocess.formats.manifest import read_manifest

    return {os.path.normpath(row[0]) for m in manifests for row in read_manifest(m) if row[1] != "problem"}


def validate_train_data(
    registry: Registry,
    data_basedir: Path,
    subset: Subset | None,
    decode: str = "quick",
    train_built: bool = True,
    links=(),
    checker_class=None,
) -> list[JsonReport]:
    """The Train_Data JSONL files of a subset, wherever they sit under Train_Data/ (trainlist): each file that
    names an image of the subset, or that the subset answers for, checked for the subset's image paths
    (relative to DATA_BASEDIR, and may pass the subset's links). The subset a file answers to also gets its
    broken records and its paths of no subset. `subset` None: the files no subset answers for."""
    checker = (checker_class or PathChecker)(data_basedir, links, decode=decode)
    trees = trainlist.ImageTrees(registry)
    key = subset.key if subset is not None else None
    if subset is not None:
        files = trainlist.files_of(data_basedir, registry, subset)
    else:
        files = [
            p
            for p in trainlist.train_jsonl_files(data_basedir)
            if trainlist.owner_of(data_basedir, registry, p, trees) is None
        ]
    reports = []
    for path in files:
        answers = trainlist.owner_of(data_basedir, registry, path, trees) == key
        shown = path.relative_to(data_basedir).as_posix()
        reports.append(
            validate_file(path, checker, key, jsonl=True, shown_name=shown, train_built=train_built,
                          belongs=trees, answers=answers, inside=data_basedir)
        )  # fmt: skip
    return reports


def set_unproduced(reports: list[JsonReport], produced: set[str]) -> None:
    """Train_Data paths that are missing and that no conversion's manifest lists (no rule of the pipeline
    produces them: a silver crop the scene graphs do not hold, a split not built) are listed apart, not
    counted as missing: a train build makes what its rules can, and names the rest."""
    for report in reports:
        if not report.file.startswith("Train_Data/"):
            continue
        kept = []
        for failure in report.failures:
            if failure.problem == MISSING and os.path.normpath(failure.path) not in produced:
                report.unproduced.append(failure.path)
                report.missing -= 1
                report.paths -= 1  # counted apart, in the table of what no rule produces
            else:
                kept.append(failure)
        report.failures = kept


def unknown_task_folders(registry: Registry, data_basedir: Path) -> list[str]:
    known = {s.key for s in registry.subsets}
    found = []
    for group in ("2D_Task", "3D_Task", "Text_Task"):
        base = data_basedir / group
        if base.is_dir():
            found += [
                f"{group}/{n}" for n in sorted(os.listdir(base)) if (base / n).is_dir() and f"{group}/{n}" not in known
            ]
    return found


def subset_state(subset: Subset, data_basedir: Path, reports: list[JsonReport]) -> str:
    """'no task files' | 'not built' | 'ok' | 'failed'. A restricted subset's image folder that holds the
    release's placeholder alone is not built."""
    if not reports:
        return "no task files"
    root = layout.image_root(data_basedir, subset)
    if root is not None and not root.exists():
        return "not built"
    if root is not None and not subset.redistributed and root.is_dir() and layout.placeholder_only(root):
        return "not built"
    return "ok" if all(r.passed for r in reports) else "failed"
