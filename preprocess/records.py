"""Task records: the fields of a test JSON record and a Train_Data JSONL line, and their image paths."""

from __future__ import annotations

from dataclasses import dataclass

_TEXT = "a string"
_TEXT_OR_LIST = "a string or a list of strings"


@dataclass(frozen=True)
class ImageRef:
    record: int
    field: str
    path: str


def _is_str_list(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _is_path_list(value) -> bool:
    """A list of strings, or of lists of strings (a slice series or several crops per target)."""
    return isinstance(value, list) and all(isinstance(v, str) or _is_str_list(v) for v in value)


_TASK_FIELDS = {
    # field: (required, type test, description)
    "qry_inst": (False, lambda v: isinstance(v, str), _TEXT),
    "qry_text": (True, lambda v: isinstance(v, str), _TEXT),
    "qry_img_path": (True, lambda v: isinstance(v, str) or _is_str_list(v), _TEXT_OR_LIST),
    "tgt_text": (True, lambda v: isinstance(v, str) or _is_str_list(v), _TEXT_OR_LIST),
    "tgt_img_path": (False, _is_path_list, "a list of strings or of lists of strings"),
    "tgt_inst": (False, lambda v: isinstance(v, str) or _is_str_list(v), _TEXT_OR_LIST),
    "qry_modality": (False, lambda v: isinstance(v, str), _TEXT),
    "tgt_modality": (False, lambda v: isinstance(v, str) or _is_str_list(v), _TEXT_OR_LIST),
}


def task_record_problems(record) -> list[str]:
    """Schema problems of one task-JSON record ('field: expected ..., got ...')."""
    if not isinstance(record, dict):
        return [f"record: expected an object, got {type(record).__name__}"]
    problems = []
    for name, (required, is_valid, description) in _TASK_FIELDS.items():
        if name not in record:
            if required:
                problems.append(f"{name}: required field is missing")
        elif not is_valid(record[name]):
            problems.append(f"{name}: expected {description}, got {_describe(record[name])}")
    return problems


def task_record_images(index: int, record: dict) -> list[ImageRef]:
    refs = []
    for name in ("qry_img_path", "tgt_img_path"):
        for path in _flatten(record.get(name)):
            if path != "":
                refs.append(ImageRef(index, name, path))
    return refs


def train_record_problems(record) -> list[str]:
    if not isinstance(record, dict):
        return [f"line: expected an object, got {type(record).__name__}"]
    problems = []
    if not isinstance(record.get("messages"), list):
        problems.append(f"messages: expected a list, got {_describe(record.get('messages'))}")
    for name, value in record.items():
        if name.endswith("images") and not _is_str_list(value):
            problems.append(f"{name}: expected a list of strings, got {_describe(value)}")
    return problems


def train_record_images(index: int, record: dict) -> list[ImageRef]:
    return [
        ImageRef(index, name, path)
        for name, value in record.items()
        if name.endswith("images") and isinstance(value, list)
        for path in value
        if isinstance(path, str) and path
    ]


def _flatten(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _flatten(item)


def _describe(value) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:60]}{'...' if len(text) > 60 else ''}"
