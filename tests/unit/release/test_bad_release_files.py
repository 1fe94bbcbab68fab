"""The bad-input corpus of the release's task files as the validator reads them: paths that climb out, absolute
or nested, wrong types, invalid JSON, links out of the root, a decompression bomb, a FIFO, an unreadable image,
deep lists; each case, the exact behaviour, and nothing written outside the allowed folders."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

import pytest

from badinput import _bmp, run_case
from preprocess.verify.validate import PathChecker, validate_file


def _task(path: Path, records) -> Path:
    path.write_text(records if isinstance(records, str) else json.dumps(records))
    return path


def _record(image):
    return {"qry_text": "", "qry_img_path": image, "tgt_text": [""]}


OK_PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8 + b"\x00\x00\x00\x00IEND\xaeB`\x82"  # passes the quick check


def _validate(tmp: Path, records):
    root = tmp / "DATA" / "2D_Images" / "X"
    root.mkdir(parents=True, exist_ok=True)
    (root / "ok.png").write_bytes(OK_PNG)
    return validate_file(_task(tmp / "t.json", records), PathChecker(root), "X")


def case_json_dotdot(tmp):
    return _validate(tmp, [_record("../../etc/passwd")])


def case_json_absolute(tmp):
    return _validate(tmp, [_record("/etc/passwd")])


def case_json_nested_lists(tmp):
    return _validate(tmp, [{**_record(["ok.png", "ok.png"]), "tgt_img_path": [["ok.png"], "ok.png"]}])


def case_json_wrong_types(tmp):
    return _validate(tmp, [{"qry_text": 5, "qry_img_path": "ok.png", "tgt_text": [""]}])


def case_json_invalid(tmp):
    return _validate(tmp, '[{"qry_text": ')


def case_symlink_out_of_root(tmp):
    (tmp / "outside.png").write_bytes(b"x")
    root = tmp / "DATA" / "2D_Images" / "X"
    root.mkdir(parents=True)
    os.symlink(tmp / "outside.png", root / "link.png")
    return validate_file(_task(tmp / "t.json", [_record("link.png")]), PathChecker(root), "X")


def case_validate_bomb_bmp(tmp):
    (tmp / "DATA" / "2D_Images" / "X").mkdir(parents=True)
    (tmp / "DATA" / "2D_Images" / "X" / "bomb.bmp").write_bytes(_bmp(40000, 40000))
    return _validate(tmp, [_record("bomb.bmp"), _record("ok.png")])


def case_validate_fifo(tmp):
    (tmp / "DATA" / "2D_Images" / "X").mkdir(parents=True)
    os.mkfifo(tmp / "DATA" / "2D_Images" / "X" / "fifo.png")
    return _validate(tmp, [_record("fifo.png"), _record("ok.png")])


def case_validate_permission_denied(tmp):
    """An image the validator may not open: chmod 000, or (as root, whom chmod does not stop) open refused."""
    from unittest import mock

    folder = tmp / "DATA" / "2D_Images" / "X"
    folder.mkdir(parents=True)
    locked = folder / "locked.png"
    locked.write_bytes(OK_PNG)
    locked.chmod(0)
    real_open = open

    def refuse(path, *args, **kwargs):
        if Path(path) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    patch = mock.patch("preprocess.formats.imagecheck.open", refuse, create=True)
    with patch if os.access(locked, os.R_OK) else contextlib.nullcontext():
        return _validate(tmp, [_record("locked.png"), _record("ok.png")])


def case_validate_deep_list(tmp):
    return _validate(tmp, "[" * 100000 + "]" * 100000)


def case_validate_deep_list_in_a_record(tmp):
    return _validate(tmp, '[{"qry_text": "", "qry_img_path": ' + "[" * 100000 + "]" * 100000 + ', "tgt_text": [""]}]')


def case_validate_backslash(tmp):
    (tmp / "DATA" / "2D_Images" / "X" / "sub").mkdir(parents=True)
    (tmp / "DATA" / "2D_Images" / "X" / "sub" / "a.png").write_bytes(OK_PNG)
    return _validate(tmp, [_record("sub\\a.png"), _record("sub/a.png")])


def case_validate_jsonl_u2028(tmp):
    """A Train_Data JSONL record whose path holds U+2028 (JSON writes it raw): still one record, one line."""
    root = tmp / "DATA"
    (root / "img").mkdir(parents=True)
    (root / "img" / "a\u2028b.png").write_bytes(OK_PNG)
    line = json.dumps({"messages": [], "images": ["img/a\u2028b.png"]}, ensure_ascii=False)
    (tmp / "t.jsonl").write_text(line + "\n" + line.replace("a\u2028b", "gone") + "\n")
    return validate_file(tmp / "t.jsonl", PathChecker(root), None, jsonl=True)


CASES = {
    "task JSON with ..": (case_json_dotdot, lambda r: r.unsafe == 1 and "climbs out" in r.failures[0].reason),
    "task JSON with an absolute path": (
        case_json_absolute,
        lambda r: r.unsafe == 1 and "absolute" in r.failures[0].reason,
    ),
    "task JSON with nested lists": (case_json_nested_lists, lambda r: r.passed and r.paths == 4),
    "task JSON with wrong types": (
        case_json_wrong_types,
        lambda r: r.bad_records == 1 and "qry_text: expected a string, got int 5" in r.failures[0].reason,
    ),
    "invalid task JSON": (case_json_invalid, lambda r: not r.passed and "invalid JSON" in r.failures[0].reason),
    "symlink out of the allowed roots": (
        case_symlink_out_of_root,
        lambda r: r.unsafe == 1 and "outside the image root" in r.failures[0].reason,
    ),
    "validate: decompression-bomb BMP": (
        case_validate_bomb_bmp,
        lambda r: (
            (r.unreadable, r.ok, r.failures[0].path) == (1, 1, "bomb.bmp")
            and "possible decompression bomb" in r.failures[0].reason
        ),
    ),
    "validate: a FIFO in place of an image": (
        case_validate_fifo,
        lambda r: (r.unreadable, r.ok, r.failures[0].reason) == (1, 1, "a FIFO (named pipe), not a regular file"),
    ),
    "validate: an image it may not read": (
        case_validate_permission_denied,
        lambda r: (
            (r.unreadable, r.ok, r.failures[0].path) == (1, 1, "locked.png")
            and r.failures[0].reason == "cannot be read (Permission denied)"
        ),
    ),
    "validate: a 100k-deep list": (
        case_validate_deep_list,
        lambda r: r.bad_records == 1 and "nested too deep to read" in r.failures[0].reason,
    ),
    "validate: a 100k-deep list in a record": (
        case_validate_deep_list_in_a_record,
        lambda r: r.bad_records == 1 and "nested too deep to read" in r.failures[0].reason,
    ),
    "validate: sub\\a.png": (
        case_validate_backslash,
        lambda r: (
            (r.unsafe, r.ok, r.failures[0].path) == (1, 1, "sub\\a.png") and "holds a backslash" in r.failures[0].reason
        ),
    ),
    "validate: U+2028 in a JSONL path": (
        case_validate_jsonl_u2028,
        lambda r: (r.records, r.ok, r.missing, r.failures[0].path) == (2, 1, 1, "img/gone.png"),
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_corpus(tmp_path, name):
    run_case(tmp_path, *CASES[name])
