"""The registry as a user reads it: `list`'s table (and the README's subsets and naming tables,
docs/tables.py), `info`'s text of a subset or a source."""

from __future__ import annotations

import json

from preprocess.formats import tables
from preprocess.registry import splits


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


def list_text(registry) -> str:
    """`list`'s table and its count line."""
    rows = list_rows(registry)
    table = tables.render(list(rows[0]), [list(r.values()) for r in rows])
    counts = f"{len(rows)} subsets, {sum(r['tasks'] for r in rows)} task files, {len(registry.sources)} sources"
    return f"{table}\n\n{counts}"


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


def subset_text(registry, subset) -> str:
    """`info SUBSET`: its image root, task files, the raw files it reads (with each source's access, licence
    and download), its conversions and their full-download counts with where each comes from."""
    lines = [f"{subset.key}\n  image root: {subset.image_root or '(text only)'}"]
    for task in subset.tasks:
        root = f", image root {task.image_root}" if task.image_root else ""
        lines.append(f"  task file {task.file}: {task.parser} ({subset.group_config} entry {task.eval}{root})")
    for source_id, specs in registry.files_needed(subset).items():
        labels = [s.label + (" (train split)" if s.split == "train" else "") for s in specs]
        lines.append(f"  source {source_id}: {', '.join(labels)}")
        lines += _source_terms(registry.source(source_id))
    for conversion in splits.conversions(None, subset, splits.ALL):
        train = " (train split: built with splits: all)" if conversion.split == splits.TRAIN else ""
        lines.append(f"  conversion {conversion.name}{train}: {conversion.kind} {json.dumps(conversion.params)}")
        count = conversion.full_count
        if count is not None:
            items = f"{count['items']:,} item{'s' if count['items'] != 1 else ''}"
            lines.append(f"    full download, {conversion.split} split: {items} ({count['basis']})")
    return "\n".join(lines)


def _source_terms(source) -> list[str]:
    """How a source is had: its access, licence and download (`info SUBSET`, under the source's files)."""
    return [f"    access: {source.access}", f"    licence: {source.licence}", f"    download: {source.download}"]


def source_text(source, users, narrowed: list[str], notes: dict[str, str] | None = None) -> str:
    """`info SOURCE`: what it is, the files a build expects, its users, and how to download it (`narrowed`:
    the lines of the download the benchmark uses; `notes`: file id -> why the upstream does not publish it,
    rawdata/unpublished.py)."""
    lines = [
        f"{source.id}: {source.name}",
        f"  access: {source.access}",
        f"  licence: {source.licence}",
        f"  homepage: {source.homepage}",
        f"  download: {source.download}",
        f"  raw folder: <raw_root>/{source.raw_dir}/",
    ]
    if source.project_folder:
        lines.append(f"  or, unpacked under its project folder: <raw_root>/{source.raw_dir}/{source.project_folder}/")
    if source.variant:
        lines.append(f"  variant: {source.variant}")
    for f in source.files:
        lines.append(
            f"  expects: {f.label}"
            + (f" (>= {f.min_count})" if f.glob else "")
            + (f" md5 {f.md5}" if f.md5 else "")
            + (f": {f.about}" if f.about else "")
        )
        if f.id in (notes or {}):
            lines.append(f"    not published upstream: {notes[f.id]}")
    lines += [f"  used by: {', '.join(users)}", "", *narrowed, "", "The whole download:", source.instructions]
    return "\n".join(lines)
