"""How errors reach the user: one line for an unexpected error, a rule's error in its log and one line on the
terminal, part files listed by status, a release file with other bytes kept or replaced with a report, and a
second writer of a shard refused."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from conftest import demo_config_file, demo_settings, demo_values
from preprocess import cli
from preprocess.errors import RawDataError
from preprocess.pipeline import steps


def test_release_file_with_other_bytes_is_kept_or_replaced_with_a_report(demo, capsys):
    target = demo / "DATA_BASEDIR" / "2D_Images" / "ISIC-2019" / "test" / "ISIC_2019_Test_Input" / "ISIC_0034321.jpg"
    target.parent.mkdir(parents=True)
    target.write_bytes(b"the release's own bytes")
    settings = demo_settings(demo)
    rows = steps.Build(settings).convert(subset="ISIC-2019")
    assert target.read_bytes() == b"the release's own bytes"  # kept, compared (issue 41): not an image at all
    [kept] = [row for row in rows if row[0].endswith("ISIC_0034321.jpg")]
    assert kept[1] == "kept" and kept[2].endswith(" differs: the file in place is not an image Pillow decodes")
    settings = demo_settings(demo, overwrite_existing=True)
    steps.Build(settings).convert(subset="ISIC-2019")
    assert target.read_bytes() != b"the release's own bytes"
    assert f"replacing {target}: it held other content (overwrite_existing: true)" in capsys.readouterr().out


def test_a_second_writer_of_the_same_shard_is_refused(demo):
    import fcntl

    settings = demo_settings(demo)
    lock = demo / "DATA_BASEDIR" / ".medheb-locks" / "2D_Task__APTOS__image_folder.0-of-1.lock"
    lock.parent.mkdir(parents=True)
    with open(lock, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # another run holds it
        with pytest.raises(Exception, match=r"another run is building 2D_Task/APTOS/image_folder"):
            steps.Build(settings).convert(subset="APTOS")


def test_an_unexpected_error_is_one_line(monkeypatch, capsys):
    def broken(args):
        raise KeyError("image_id")

    monkeypatch.setattr(cli, "cmd_list", broken)
    monkeypatch.delenv("MEDHEB_TRACEBACK", raising=False)
    parser = cli.build_parser("python -m preprocess")
    monkeypatch.setattr(cli, "build_parser", lambda prog: _with_func(parser, "list", broken))
    assert cli.main(["list"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unexpected KeyError: 'image_id'; please report it") and "Traceback" not in err


def _with_func(parser, command: str, func):
    parser._subparsers._group_actions[0].choices[command].set_defaults(func=func)
    return parser


class _Smk:
    """What Snakemake hands a script: rule, wildcards, log, config (only what run() reads)."""

    def __init__(self, rule: str, log: Path, config: dict):
        self.rule, self.log, self.config = rule, [str(log)], config
        self.wildcards = {"group": "2D_Task", "folder": "APTOS"}


def test_a_rule_error_goes_to_its_log_and_one_line_to_the_terminal(tmp_path, demo, monkeypatch):
    from preprocess.pipeline import snakemake_entry

    def broken(smk, build):
        print("converting 2D_Task/APTOS")
        raise ValueError("cannot reshape array of size 0")

    monkeypatch.setitem(snakemake_entry.STEPS, "convert", broken)
    terminal = io.StringIO()
    monkeypatch.setattr(sys, "__stderr__", terminal)
    log = tmp_path / "logs" / "convert.log"
    with pytest.raises(SystemExit) as stop:
        snakemake_entry.run(_Smk("convert", log, demo_values(demo)))
    assert stop.value.code == 1
    text = log.read_text()
    assert "converting 2D_Task/APTOS" in text and "Traceback" in text and "ValueError: cannot reshape" in text
    assert text.rstrip().endswith("the traceback is in the log: please report it with the log)")
    line = terminal.getvalue()
    assert f"error in rule convert (log {log}): unexpected ValueError: cannot reshape array of size 0" in line
    assert "group=2D_Task, folder=APTOS" in line and "Traceback" not in line


def test_a_rule_bad_input_message_goes_to_its_log_and_the_terminal(tmp_path, demo, monkeypatch):
    from preprocess.pipeline import snakemake_entry

    def bad(smk, build):
        raise RawDataError("/raw/x.csv line 4: box is not four numbers")

    monkeypatch.setitem(snakemake_entry.STEPS, "convert", bad)
    terminal = io.StringIO()
    monkeypatch.setattr(sys, "__stderr__", terminal)
    log = tmp_path / "convert.log"
    with pytest.raises(SystemExit):
        snakemake_entry.run(_Smk("convert", log, demo_values(demo)))
    assert log.read_text() == "error: /raw/x.csv line 4: box is not four numbers\n"
    assert f"error in rule convert (log {log}): /raw/x.csv line 4" in terminal.getvalue()


def test_status_lists_part_files_left_under_data_basedir(tmp_path, demo, capsys, outside_checkout):
    left = demo / "DATA_BASEDIR" / "2D_Images" / "APTOS" / ".a.png.medheb-image_folder-0of1.part"
    left.parent.mkdir(parents=True, exist_ok=True)
    left.write_bytes(b"half")
    config = str(demo_config_file(demo, tmp_path / "demo.json"))
    cli.main(["status", str(demo / "DATA_BASEDIR"), "--config", config, "--results", str(tmp_path / "r")])
    out = capsys.readouterr().out
    assert (
        f"1 temporary .part files left by interrupted runs (rerunning their conversion removes them):\n  {left}" in out
    )
    cli.main(["status", str(demo / "DATA_BASEDIR"), "--config", config, "--json", "--results", str(tmp_path / "r")])
    assert json.loads(capsys.readouterr().out)["part_files"] == [str(left)]
