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


def test_plain_rows_are_written_as_joined_and_one_odd_name_among_them_is_still_escaped(tmp_path):
    plain = [(f"2D_Images/X/{n}.png", "file", f"{n}:ab") for n in range(3)]
    write_manifest(tmp_path / "plain.tsv", plain)
    assert (tmp_path / "plain.tsv").read_text(encoding="utf-8") == (
        "path\tkind\tdetail\n2D_Images/X/0.png\tfile\t0:ab\n2D_Images/X/1.png\tfile\t1:ab\n2D_Images/X/2.png\tfile\t2:ab\n"
    )
    odd = [*plain[:2], ("2D_Images/X/tab\there.png", "file", "5:ef"), plain[2], ("raw/item 7", "problem", 404)]
    write_manifest(tmp_path / "odd.tsv", odd)
    lines = (tmp_path / "odd.tsv").read_text(encoding="utf-8").split("\n")
    assert lines[3] == "2D_Images/X/tab\\there.png\tfile\t5:ef"
    assert lines[5] == "raw/item 7\tproblem\t404"  # a field that is not text is written as its text
    assert read_manifest(tmp_path / "odd.tsv") == [*odd[:4], ("raw/item 7", "problem", "404")]
