"""The validation of one subset cut into shards (issue 42): each shard a job over a slice of the paths the
subset's files name, then one merge that writes the subset's report, the same bytes whatever the cut.

validate.validate_subset resolves every path through the checker of its root (one PathChecker per image root,
and DATA_BASEDIR's for the Train_Data files). A shard walks the records as it does, with checkers that list the
paths asked of them and touch no file (Listing); the (root, path) pairs sorted, shard i of n checks those at
positions i, i + n, ... and writes their answers, each with the file's stat as the shard saw it. The merge walks
the records once more with checkers that hold every shard's answers (answering): a path whose file has the
stat its shard saw takes its answer; a path no shard answered (a task file edited since) or whose file was
deleted, written or replaced since its shard ran (`--forcerun validate_subset` reruns the merge alone) is
checked there. Each path's answer is the one a single job would have found, so are the reports."""

from __future__ import annotations

import os
from pathlib import Path

from preprocess.formats import textparse
from preprocess.formats.fsutil import atomic_write_json
from preprocess.verify.validate import PathChecker

Answer = tuple[str, str] | None  # (problem, reason), None: the path resolves
Key = tuple[str, str]  # a checker's root and confining folder, relative to DATA_BASEDIR
Seen = list[int] | None  # the file's size, modification time (ns) and inode, links followed; None: no file


def seen(root: Path, path_text: str) -> Seen:
    """What tells a file changed since its answer: its stat (any error, a bad or absent path: None)."""
    try:
        found = os.stat(os.path.join(root, path_text))
    except (OSError, ValueError):
        return None
    return [found.st_size, found.st_mtime_ns, found.st_ino]


def _key(data_basedir: Path, root: Path, confine: Path | None) -> Key:
    return os.path.relpath(root, data_basedir), os.path.relpath(confine or root, data_basedir)


class Listing(PathChecker):
    """Lists the paths asked of it and says each resolves, without touching a file (a shard's first walk)."""

    def __init__(self, root, extra_roots=(), decode="quick", confine=None, outside_hint="", escape=None):
        super().__init__(root, extra_roots, decode, confine, outside_hint, escape)
        self.asked: set[str] = set()

    def problem(self, path_text: str) -> Answer:
        self.asked.add(path_text)
        return None

    def answer(self, path_text: str) -> Answer:
        """What a PathChecker of the same root says of the path."""
        return PathChecker.problem(self, path_text)


def shard_answers(walk, data_basedir: Path, shard: int, shards: int) -> list[list]:
    """[root, confine, path, problem, reason, seen] of the paths of shard `shard` of `shards` (problem and reason None:
    it resolves). `walk(checker_class)` runs validate_subset with that checker class."""
    made: dict[Key, Listing] = {}

    def listing(root, extra_roots=(), decode="quick", confine=None, outside_hint="", escape=None) -> Listing:
        checker = Listing(root, extra_roots, decode, confine, outside_hint, escape)
        made[_key(data_basedir, root, confine)] = checker
        return checker

    walk(listing)
    pairs = sorted((key, path) for key, checker in made.items() for path in checker.asked)
    rows = []
    for key, path in pairs[shard::shards]:
        checker = made[key]
        found = checker.answer(path)
        rows.append([*key, path, *(found if found is not None else (None, None)), seen(checker.root, path)])
    return rows


def write_shard(out: Path, subset: str, shard: int, shards: int, rows: list[list]) -> None:
    atomic_write_json(out, {"subset": subset, "shard": shard, "shards": shards, "answers": rows})


def read_answers(files) -> dict[Key, dict[str, tuple[Answer, Seen]]]:
    """The answers of the shard files, by checker, each with the stat its shard saw."""
    known: dict[Key, dict[str, tuple[Answer, Seen]]] = {}
    for path in files:
        for root, confine, text, problem, reason, was in textparse.read_json(path, textparse.DATA_BYTES)["answers"]:
            known.setdefault((root, confine), {})[text] = (None if problem is None else (problem, reason), was)
    return known


class Answered(PathChecker):
    """A checker that takes a shard's answer for a path whose file is as the shard saw it, and checks the rest."""

    def __init__(self, known: dict[str, tuple[Answer, Seen]], *args):
        super().__init__(*args)
        self.known = known

    def problem(self, path_text: str) -> Answer:
        given = self.known.pop(path_text, None)
        if given is not None and seen(self.root, path_text) == given[1]:
            self.remember({path_text: given[0]})
        return super().problem(path_text)


def answering(data_basedir: Path, known: dict[Key, dict[str, tuple[Answer, Seen]]]):
    """A checker class whose checkers hold the shards' answers for their root (the merge's walk)."""

    def checker(root, extra_roots=(), decode="quick", confine=None, outside_hint="", escape=None) -> PathChecker:
        given = known.get(_key(data_basedir, root, confine), {})
        return Answered(given, root, extra_roots, decode, confine, outside_hint, escape)

    return checker
