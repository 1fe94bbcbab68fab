"""`list` and `info`: the registry as the package ships it, a subset or a source by the name a user types,
with how to download what the benchmark uses of a source."""

from __future__ import annotations

import json
from dataclasses import asdict

from preprocess.pipeline import names
from preprocess.pipeline.settings import command_settings, shipped_registry
from preprocess.rawdata import unpublished
from preprocess.reports import listing


def list_text(shown: str | None = None) -> str:
    """`list`: the table (shown None), or 'json', 'markdown' (the README's) or 'naming' (its name templates)."""
    registry = shipped_registry()
    rows = listing.list_rows(registry)
    if shown == "json":
        return json.dumps(rows, indent=2)
    if shown == "markdown":
        return listing.markdown_table(rows)
    if shown == "naming":
        return listing.naming_table(registry)
    return listing.list_text(registry)


def info_text(name: str, as_json: bool = False, config: str | None = None) -> str:
    """`info NAME`: a source (with the files the build needs counted under `config`) or a subset."""
    registry = shipped_registry()
    if name in registry.sources:
        source = registry.source(name)
        users = [s.key for s in registry.subsets if source.id in s.source_ids]
        notes = {spec.id: unpublished.note(registry, source, spec) for spec in source.files if spec.unpublished}
        if as_json:
            return json.dumps({**asdict(source), "used_by": users, "unpublished": notes}, indent=2)
        return listing.source_text(source, users, narrowed_lines(source, config), notes)
    subset = names.subset(registry, name)
    if as_json:
        return json.dumps(asdict(subset), indent=2)
    return listing.subset_text(registry, subset)


def narrowed_lines(source, config: str | None) -> list[str]:
    """The narrowed download: the need list's command, its counts under `config`, and how to fetch it."""
    from preprocess.rawdata import fetch, need  # here: they pull in the validation code (Pillow)

    shown = config or "my.yaml"
    lines = ["Download only what the benchmark uses (the release's records name these files):"]
    lines.append(f"  medheb need {source.id} --config {shown} > {source.id}.txt")
    if config:
        settings = command_settings(config, require_raw=False, raw_must_exist=False)
        found = need.needs(settings, settings.registry(), [source.id])[source.id]
        lines.append(f"  {need.summary(found, settings.raw_root if settings.raw_root_given else None)}")
    if any(spec.url for spec in source.files) or fetch.hf_repo(source):
        lines.append(f"  medheb download {source.id} --config {shown}   # fetches, verifies, resumes")
    else:
        lines += [f"  {line}" for line in fetch.commands(source, "<raw_root>", f"{source.id}-urls.txt", shown)]
    return lines
