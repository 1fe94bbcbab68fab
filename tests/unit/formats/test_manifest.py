"""The manifest is a standard TSV (the csv module's excel-tab dialect): any name and message survives intact,
and a reader that knows nothing of this package reads the same rows."""

from __future__ import annotations

import csv

from preprocess.formats.manifest import read_manifest, write_manifest

ODD_ROWS = [
    ("2D_Images/X/a\tb.png", "file", "12:ab"),
    ("2D_Images/X/line\nbreak/c.png", "file", "3:cd"),
    ("2D_Images/X/para\u2028graph.png", "symlink", "/raw/x\\y"),
    ('2D_Images/X/"quoted".png', "file", "4:ef"),
    ("raw/odd\r\\name row 3", "problem", "bad\tinput:\nsecond line"),
]


def test_names_with_tabs_newlines_quotes_and_line_separators_survive_a_round_trip(tmp_path):
    write_manifest(tmp_path / "m.tsv", ODD_ROWS)
    assert read_manifest(tmp_path / "m.tsv") == ODD_ROWS


def test_the_standard_library_reads_what_the_pipeline_wrote(tmp_path):
    write_manifest(tmp_path / "m.tsv", ODD_ROWS)
    with open(tmp_path / "m.tsv", encoding="utf-8", newline="") as handle:
        records = [tuple(r) for r in csv.reader(handle, delimiter="\t", quotechar='"')]
    assert records == [("path", "kind", "detail"), *ODD_ROWS]


def test_plain_rows_are_plain_tab_separated_lines(tmp_path):
    plain = [(f"2D_Images/X/{n}.png", "file", f"{n}:ab") for n in range(3)]
    write_manifest(tmp_path / "plain.tsv", [*plain, ("raw/item 7", "problem", 404)])
    assert (tmp_path / "plain.tsv").read_text(encoding="utf-8") == (
        "path\tkind\tdetail\n"
        "2D_Images/X/0.png\tfile\t0:ab\n2D_Images/X/1.png\tfile\t1:ab\n2D_Images/X/2.png\tfile\t2:ab\n"
        "raw/item 7\tproblem\t404\n"  # a field that is not text is written as its text
    )
    assert read_manifest(tmp_path / "plain.tsv")[-1] == ("raw/item 7", "problem", "404")


def test_a_field_with_a_tab_is_quoted_on_its_own_line(tmp_path):
    rows = [("2D_Images/X/0.png", "file", "0:ab"), ("2D_Images/X/tab\there.png", "file", "5:ef")]
    write_manifest(tmp_path / "odd.tsv", rows)
    lines = (tmp_path / "odd.tsv").read_text(encoding="utf-8").split("\n")
    assert lines[1] == "2D_Images/X/0.png\tfile\t0:ab"
    assert lines[2] == '"2D_Images/X/tab\there.png"\tfile\t5:ef'
