"""The build's front page: counts, what was not built and why, every failing path, the pixel fingerprints'
digests, the date and the config.

Written by the validation summary (also when validation fails), shown by Snakemake's report on its first page
and kept as a standalone page under results/report/.
"""

from __future__ import annotations

import html
from urllib.parse import quote

import yaml

from preprocess.readiness.buildable import SKIP

# Tables of the report: (label, result path relative to the workdir).
TABLES = [
    ("Raw downloads", "results/check/sources.html"),
    ("Raw downloads (TSV)", "results/check/sources.tsv"),
    ("Validation of every task file", "results/validation/summary.html"),
    ("Validation (TSV)", "results/validation/summary.tsv"),
]
CONTACT = "3. Contact sheets"
LIMIT = 50  # failing paths listed on the page; the rest are in summary.txt

STYLE = """<style>
.prose.max-w-lg:has(.medheb-front){max-width:58rem}
.medheb-front{font-family:sans-serif;font-size:13px;line-height:1.35;color:#111}
.medheb-front h2{font-size:18px;margin:4px 0 2px}.medheb-front h3{font-size:14px;margin:14px 0 4px}
.medheb-front .verdict{padding:6px 10px;border-radius:4px;margin:6px 0;font-weight:bold}
.medheb-front .pass{background:#d1fae5}.medheb-front .fail{background:#fee2e2}
.medheb-front .cards{display:flex;flex-wrap:wrap;gap:8px;margin:8px 0}
.medheb-front .card{border:1px solid #ccc;border-radius:6px;padding:6px 12px;min-width:150px}
.medheb-front .card b{display:block;font-size:26px}
.medheb-front table{border-collapse:collapse;margin:0}
.medheb-front th,.medheb-front td{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}
.medheb-front th{background:#f3f4f6}.medheb-front code{word-break:break-all}
.medheb-front pre{background:#f9fafb;color:#111;border:1px solid #e5e7eb;padding:6px;font-size:12px}
.medheb-front pre{white-space:pre-wrap}
.medheb-front code::before,.medheb-front code::after{content:none}
</style>"""


def page(summary: dict, plans, config: dict, date: str, standalone: bool) -> str:
    counts = summary["front"]
    parts = [STYLE, f"<h2>MedHEB-Bench build of {_e(date)}</h2>", _verdict(summary), _cards(counts)]
    parts += _failures(summary["failures"])
    parts += _not_built([p for p in plans if p.action == SKIP])
    parts += _bad_items(summary["skipped_items"])
    parts += _fingerprints(summary.get("fingerprints"))
    parts += _links(standalone)
    config_text = yaml.safe_dump(config, sort_keys=False, default_flow_style=None) if config else "(none)\n"
    parts += ["<h3>Config of this build</h3>", f"<pre>{_e(config_text)}</pre>"]
    body = '<div class="medheb-front">' + "\n".join(parts) + "</div>\n"
    if not standalone:
        return body
    head = "<meta charset='utf-8'><title>MedHEB-Bench build</title>"
    return f"<!DOCTYPE html>\n<html><head>{head}</head><body>{body}</body></html>\n"


def _e(text) -> str:
    return html.escape(str(text))


def _verdict(summary: dict) -> str:
    failed = summary["failed"]
    if not failed:
        return '<p class="verdict pass">Every image path of every built task file resolves.</p>'
    run = "the run stopped" if summary.get("must_pass", True) else "on_bad_input: skip, the run went on"
    return f'<p class="verdict fail">{len(failed)} task files have paths that do not resolve ({run}).</p>'


def _cards(counts: dict) -> str:
    cards = [
        ("built", "subsets built", f"{counts['task_files_ok']} of {counts['task_files']} task files resolve"),
        ("from_release", "subsets from the release", "validated, not rebuilt"),
        ("not_built", "subsets not built", "raw data missing or incomplete"),
        ("failed", "subsets failed", f"{counts['failing_paths']} paths do not resolve"),
        ("bad_items", "bad raw items skipped", "on_bad_input: skip"),
    ]
    html_cards = [
        f'<div class="card"><b data-count="{key}">{counts[key]}</b>{label}<br><small>{_e(note)}</small></div>'
        for key, label, note in cards
    ]
    return '<div class="cards">' + "".join(html_cards) + "</div>"


def _table(headers: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _failures(failures: list[dict]) -> list[str]:
    if not failures:
        return []
    rows = []
    for f in failures[:LIMIT]:
        where = f"record {f['record']}, {f['field']}" if f["record"] is not None else f["field"]
        hint = f" (did you mean {', '.join(f['suggestions'])}?)" if f.get("suggestions") else ""
        path = f"<code>{_e(f['path'])}</code>"
        rows.append([_e(f["file"]), _e(where), f"<b>{_e(f['problem'])}</b>", path, _e(f["reason"] + hint)])
    more = f"<p>... {len(failures) - LIMIT} more in results/validation/summary.txt</p>" if len(failures) > LIMIT else ""
    headers = ["task file", "where", "problem", "path", "reason"]
    return ["<h3>Failed: paths that do not resolve</h3>", _table(headers, rows) + more]


def _not_built(skipped) -> list[str]:
    if not skipped:
        return []
    rows = []
    for plan in skipped:
        steps = "<br>".join(f"<code>python -m preprocess info {_e(s)}</code>" for s in sorted(plan.instructions))
        rows.append([_e(plan.subset), _e(plan.reason), steps])
    note = "<p>Step-by-step download instructions: results/not-built.md.</p>"
    return ["<h3>Not built</h3>", _table(["subset", "why", "what to download"], rows) + note]


def _bad_items(items: list[dict]) -> list[str]:
    if not items:
        return []
    rows = [[f"<code>{_e(i['item'])}</code>", _e(i["problem"][:200])] for i in items]
    return ["<h3>Bad raw items skipped</h3>", _table(["raw item", "problem"], rows)]


def _fingerprints(found: dict | None) -> list[str]:
    """The tree digest and each subset's (preprocess/verify/attest.py): what a lab publishes and others compare."""
    if not found:
        return []
    rows = [[_e(s["subset"]), _e(s["images"]), f"<code>{_e(s['digest'])}</code>"] for s in found["subsets"]]
    note = (
        f'<p>Tree digest <code data-fingerprint="tree">{_e(found["tree"])}</code> '
        f"(decoded by {_e(found['decoder'])}). Every image: {_e(found['file'])}; compare with another build's "
        "file: <code>python -m preprocess attest --compare THEIRS.tsv</code>.</p>"
    )
    # Folded: the report shows this page in a box centred on the screen, and a page taller than the screen
    # loses its top (the verdict) there; a subset's digest is one click away.
    table = _table(["subset", "images", "digest"], rows)
    folded = f"<details><summary>Each subset's digest ({len(rows)} subsets)</summary>{table}</details>"
    return ["<h3>Pixel fingerprints</h3>", note + folded]


def _links(standalone: bool) -> list[str]:
    def href(path: str) -> str:
        if standalone:  # this page lives in results/report/
            return "../" + path.removeprefix("results/")
        return f"javascript:app.showResultInfo('{quote(path, safe='/')}')"

    links = [f'<a href="{href(path)}">{_e(label)}</a>' for label, path in TABLES]
    contact = "contact/" if standalone else f"javascript:app.showCategory('{quote(CONTACT)}')"
    links.append(f'<a href="{contact}">Contact sheets</a>')
    return ["<h3>Tables</h3>", "<p>" + " · ".join(links) + "</p>"]
