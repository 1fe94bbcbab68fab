"""The comparison of two pixel fingerprint files (`python -m preprocess attest --compare`): per subset equal,
different or only in one side, as text and as JSON."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from preprocess.verify.fingerprintfile import Entry, Header, opened

# --- comparing ---------------------------------------------------------------------------------------

EQUAL, DIFFERENT, ONLY_THEIRS, ONLY_MINE = "equal", "different", "only_theirs", "only_mine"


@dataclass
class SubsetComparison:
    subset: str
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys((EQUAL, DIFFERENT, ONLY_THEIRS, ONLY_MINE), 0))
    paths: dict[str, list[dict]] = field(default_factory=lambda: {DIFFERENT: [], ONLY_THEIRS: [], ONLY_MINE: []})

    @property
    def verdict(self) -> str:
        if not any(self.counts[k] for k in (DIFFERENT, ONLY_THEIRS, ONLY_MINE)):
            return "equal"
        if not self.counts[EQUAL] and not self.counts[DIFFERENT]:
            if not self.counts[ONLY_MINE]:
                return "only in theirs"
            if not self.counts[ONLY_THEIRS]:
                return "only in mine"
        return "different"


def compare(theirs: Path, mine: Path) -> tuple[list[SubsetComparison], tuple[Header, Header]]:
    """Per subset, the images equal on both sides, different, and present on one side only (a path missing
    or unsafe on one side counts as absent there). Both files are read side by side, in their sorted order."""
    found: dict[str, SubsetComparison] = {}

    def note(kind: str, their: Entry | None, my: Entry | None) -> None:
        entry = their or my
        one = found.setdefault(entry.subset, SubsetComparison(entry.subset))
        one.counts[kind] += 1
        if kind != EQUAL:
            one.paths[kind].append(
                {
                    "path": entry.path,
                    "theirs": their.describe() if their else "no entry",
                    "mine": my.describe() if my else "no entry",
                }
            )

    with opened(theirs) as (their_header, their_entries), opened(mine) as (my_header, my_entries):
        _walk(their_entries, my_entries, note)
    return [found[k] for k in sorted(found)], (their_header, my_header)


def _walk(their_entries: Iterator[Entry], my_entries: Iterator[Entry], note) -> None:
    """Both sorted files side by side: `note` each path as equal, different, or on one side only."""
    their, my = next(their_entries, None), next(my_entries, None)
    while their is not None or my is not None:
        if my is None or (their is not None and their.key < my.key):
            if their.present:
                note(ONLY_THEIRS, their, None)
            their = next(their_entries, None)
        elif their is None or my.key < their.key:
            if my.present:
                note(ONLY_MINE, None, my)
            my = next(my_entries, None)
        else:
            if their.present and not my.present:
                note(ONLY_THEIRS, their, my)
            elif my.present and not their.present:
                note(ONLY_MINE, their, my)
            else:
                note(EQUAL if (their.status, *their.pixels()) == (my.status, *my.pixels()) else DIFFERENT, their, my)
            their, my = next(their_entries, None), next(my_entries, None)


def differs(comparisons: list[SubsetComparison]) -> bool:
    return any(c.verdict != "equal" for c in comparisons)


def comparison_text(comparisons: list[SubsetComparison], headers: tuple[Header, Header], limit: int) -> str:
    from preprocess.formats import tables

    rows = [
        [c.subset, c.counts[EQUAL], c.counts[DIFFERENT], c.counts[ONLY_THEIRS], c.counts[ONLY_MINE], c.verdict]
        for c in comparisons
    ]
    text = tables.render(["subset", "equal", "different", "only in theirs", "only in mine", "verdict"], rows)
    labels = {DIFFERENT: "different pixels", ONLY_THEIRS: "only in theirs", ONLY_MINE: "only in mine"}
    for kind, label in labels.items():
        listed = [(c.subset, p) for c in comparisons for p in c.paths[kind]]
        if not listed:
            continue
        text += f"\n\n{label} ({len(listed)}):"
        for subset, p in listed[:limit]:
            text += f"\n  {subset}  {p['path']}  (theirs: {p['theirs']}; mine: {p['mine']})"
        if len(listed) > limit:
            text += f"\n  ... {len(listed) - limit} more (--json lists them all)"
    if headers[0].decoder != headers[1].decoder:
        text += (
            f"\n\nnote: decoded by different libraries (theirs: {headers[0].decoder}; mine: {headers[1].decoder}); "
            "JPEG decoders of other versions may give other pixels"
        )
    changed = sum(1 for c in comparisons if c.verdict != "equal")
    verdict = "the trees hold the same pixels" if not changed else f"{changed} of {len(comparisons)} subsets differ"
    return text + f"\n\n{verdict}"


def comparison_json(comparisons: list[SubsetComparison], headers: tuple[Header, Header]) -> dict:
    return {
        "equal": not differs(comparisons),
        "tree": {"theirs": headers[0].tree, "mine": headers[1].tree},
        "decoder": {"theirs": headers[0].decoder, "mine": headers[1].decoder},
        "subsets": [{"subset": c.subset, "verdict": c.verdict, "counts": c.counts, **c.paths} for c in comparisons],
    }
