"""Getting the data a build reads: the raw files of a source the release's records name (`need`), their
download into the raw root, the release into DATA_BASEDIR (`download release`), and a user's own copy
recorded (`register`)."""

from __future__ import annotations

import sys
from pathlib import Path

from preprocess.pipeline import names
from preprocess.rawdata import fetch, need, releasefetch
from preprocess.rawdata.register import register_source


def print_needs(settings, registry, sources: list[str], results: Path | None, shown: str | None = None) -> None:
    """The raw files the build reads of each source, one a line (shown 'urls': their download URLs, 'hf': the
    `hf download` command), with a summary of each on standard error."""
    raw_root = settings.raw_root if settings.raw_root_given else None
    for found in needs(settings, registry, sources, results).values():
        lines, sid = found.lines(), found.source.id
        if shown == "urls":
            lines, without = fetch.urls(found.source, lines)
            if without:
                print(f"{sid}: no download URL for {len(without)} entries, e.g. {without[0]}", file=sys.stderr)
        elif shown == "hf":
            command = fetch.hf_command(found.source, lines, raw_root or "<raw_root>")
            lines = [command] if command else []
            if not command:
                print(f"{sid}: not a Hugging Face dataset (see `medheb info {sid}`)", file=sys.stderr)
        if lines:
            print("\n".join(lines))
        print(need.summary(found, raw_root), file=sys.stderr)
        for note in found.notes:
            print(f"  note: {note}", file=sys.stderr)


def needs(settings, registry, sources: list[str], results: Path | None) -> dict:
    return need.needs(settings, registry, [names.source(registry, n).id for n in sources], results)


def download_sources(settings, registry, sources: list[str], results: Path | None, config: str | None) -> None:
    """Each source's needed files into the raw root (verified, resumed), and what is left to fetch by hand."""
    for found in needs(settings, registry, sources, results).values():
        left = fetch.download(found, settings.raw_root, config, bounds=fetch.limits(settings))
        print("\n".join(need.check_lines({found.source.id: found}, settings.raw_root, None)))
        if left:
            print("  by hand:\n" + "\n".join(f"    {line}" for line in left))


def download_release(settings, registry, subsets: list[str], include: list[str], revision: str | None) -> int:
    """The release's files into DATA_BASEDIR: exit 1 when files already there with other bytes were kept."""
    chosen = [names.subset(registry, name) for name in subsets]
    patterns = releasefetch.selection(registry, include, chosen)
    outcome = releasefetch.download_release(
        settings.release_repo, revision, patterns, settings.data_basedir, fetch.limits(settings)
    )
    if outcome.kept:
        print("Kept, with other bytes than the release's:\n" + "\n".join(outcome.kept_lines()))
    print(outcome.summary())
    if outcome.kept:
        print(f"error: {outcome.kept_message(settings.data_basedir)}", file=sys.stderr)
        return 1
    return 0


def register(settings, source: str, out: Path) -> str:
    """The override file of a user's own raw copy of `source` (its MD5s), written to `out`; its text."""
    return register_source(settings.registry(), settings, source, out)
