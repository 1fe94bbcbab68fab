"""Tables for terminals and log files, and as HTML pages for the report."""

from __future__ import annotations

import html


def render(headers: list[str], rows: list[list]) -> str:
    cells = [[str(c) for c in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    numeric = [all(_is_number(r[i]) for r in cells) and cells for i in range(len(headers))]

    def line(values):
        padded = (v.rjust(w) if n else v.ljust(w) for v, w, n in zip(values, widths, numeric, strict=True))
        return "  ".join(padded).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in cells])


def _is_number(text: str) -> bool:
    return text.replace(".", "", 1).isdigit()


_STATUS_COLOURS = {"present": "#d1fae5", "missing": "#fee2e2", "incomplete": "#fef3c7", "corrupt": "#fecaca"}


def html_page(title: str, headers: list[str], rows: list[list], note: str = "") -> str:
    """A standalone HTML page holding one table (Snakemake's report shows HTML results inline).

    Cells that name a raw-download status are tinted; numbers are right-aligned.
    """
    cells = [[str(c) for c in row] for row in rows]
    numeric = [bool(cells) and all(_is_number(r[i]) for r in cells) for i in range(len(headers))]
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = []
    for row in cells:
        tds = []
        for value, is_number in zip(row, numeric, strict=True):
            colour = _STATUS_COLOURS.get(value)
            style = f' style="background:{colour}"' if colour else (' class="n"' if is_number else "")
            tds.append(f"<td{style}>{html.escape(value)}</td>")
        body.append("<tr>" + "".join(tds) + "</tr>")
    return (
        "<!DOCTYPE html>\n<html><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>"
        "body{font-family:sans-serif;font-size:13px;margin:12px}"
        "table{border-collapse:collapse}th,td{border:1px solid #ccc;padding:3px 8px;text-align:left}"
        "th{background:#f3f4f6;position:sticky;top:0}td.n{text-align:right}"
        "</style></head><body>"
        f"<h3>{html.escape(title)}</h3><p>{html.escape(note)}</p>"
        f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></body></html>\n"
    )
