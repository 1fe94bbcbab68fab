"""The manifest keeps any name and message intact: tabs, newlines, U+2028 and backslashes in raw names."""

from __future__ import annotations

from preprocess.manifest import read_manifest, write_manifest


def test_names_with_tabs_newlines_and_line_separators_survive_a_round_trip(tmp_path):
    rows = [
        ("2D_Images/X/a\tb.png", "file", "12:ab"),
        ("2D_Images/X/line\nbreak/c.png", "file", "3:cd"),
        ("2D_Images/X/para\u2028graph.png", "symlink", "/raw/x\\y"),
        ("raw/odd\r\\name row 3", "problem", "bad\tinput:\nsecond line"),
    ]
    write_manifest(tmp_path / "m.tsv", rows)
    text = (tmp_path / "m.tsv").read_text(encoding="utf-8")
    assert text.split("\n")[0] == "path\tkind\tdetail"
    assert len(text.split("\n")) == len(rows) + 2  # one line a row, the header, the final newline
    assert read_manifest(tmp_path / "m.tsv") == rows
