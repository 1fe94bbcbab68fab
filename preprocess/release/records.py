"""Task records as the benchmark's evaluation loaders read them: the fields each parser needs, their image
paths, and the field types that `datasets.load_dataset("json")` can load.

A test record is checked against its task file's parser (the evaluation config's `dataset_parser`): only the
fields that parser reads are required, and only its image fields are resolved (a text_qa record has none).
"""

from __future__ import annotations

from dataclasses import dataclass

from preprocess.errors import UnsafePathError
from preprocess.formats.fsutil import safe_relative

_TEXT = "a string"
_TEXT_OR_LIST = "a string or a list of strings"
_PATHS = "a list of strings or of lists of strings"


@dataclass(frozen=True)
class ImageRef:
    record: int
    field: str
    path: str


def _is_str(value) -> bool:
    return isinstance(value, str)


def _is_str_list(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _is_text_or_list(value) -> bool:
    return isinstance(value, str) or _is_str_list(value)


def _is_path_list(value) -> bool:
    """A list of strings, or of lists of strings (a slice series, or several crops as one target)."""
    return isinstance(value, list) and all(isinstance(v, str) or _is_str_list(v) for v in value)


def _is_query_paths(value) -> bool:
    return isinstance(value, str) or _is_str_list(value)


# field: (type test, description)
FIELD_TYPES = {
    "qry_inst": (_is_str, _TEXT),
    "qry_text": (_is_str, _TEXT),
    "qry_img_path": (_is_query_paths, _TEXT_OR_LIST),
    "tgt_inst": (_is_text_or_list, _TEXT_OR_LIST),
    "tgt_text": (_is_text_or_list, _TEXT_OR_LIST),
    "tgt_img_path": (_is_path_list, _PATHS),
    "qry_modality": (_is_str, _TEXT),
    "tgt_modality": (_is_text_or_list, _TEXT_OR_LIST),
}

_QUERY, _TARGET, _BOTH = ("qry_img_path",), ("tgt_img_path",), ("qry_img_path", "tgt_img_path")
# parser: (fields every record must hold, the image fields the loader opens); qry_inst is read by every
# loader but a record without it loads (datasets fills None), so it is not required.
PARSERS = {
    "text_qa": (("qry_text", "tgt_text"), ()),
    "image_cls": (("qry_text", "qry_img_path", "tgt_text"), _QUERY),
    "image_qa": (("qry_text", "qry_img_path", "tgt_text"), _QUERY),
    "image_t2i": (("qry_text", "tgt_text", "tgt_img_path"), _TARGET),
    "image_i2i": (("qry_img_path", "tgt_text", "tgt_img_path"), _BOTH),
    "image_i2i_vg": (("qry_img_path", "tgt_text", "tgt_img_path"), _BOTH),
    "volume_i2t": (("qry_img_path", "tgt_text"), _QUERY),
    "volume_t2i": (("qry_text", "tgt_text", "tgt_img_path"), _TARGET),
    "volume_i2i": (("qry_img_path", "tgt_img_path"), _BOTH),
}
# A JSON file in a task folder that the registry does not list: no parser is known, every image field counts.
UNKNOWN_PARSER = (("qry_text", "tgt_text"), _BOTH)


def task_record_problems(record, parser: str | None = None) -> list[str]:
    """Schema problems of one task-JSON record ('field: expected ..., got ...')."""
    if not isinstance(record, dict):
        return [f"record: expected an object, got {type(record).__name__}"]
    required, _ = PARSERS.get(parser, UNKNOWN_PARSER)
    problems = [f"{name}: required field is missing (parser {parser})" for name in required if name not in record]
    for name, (is_valid, description) in FIELD_TYPES.items():
        if name in record and record[name] is not None and not is_valid(record[name]):
            problems.append(f"{name}: expected {description}, got {_describe(record[name])}")
    return problems


def task_record_images(index: int, record: dict, parser: str | None = None) -> list[ImageRef]:
    """The image paths of a record that its parser opens (empty strings are placeholders, not paths)."""
    _, image_fields = PARSERS.get(parser, UNKNOWN_PARSER)
    return [ImageRef(index, name, path) for name in image_fields for path in _flatten(record.get(name)) if path != ""]


# How each evaluation loader (src/evaluation/mediem/data/datasets/*.py of the evaluation repository) walks an
# image field to the values it joins to the image root with os.path.join, which takes strings only:
_ONE_OR_EACH = "one_or_each"  # a string is one path, otherwise each element is one (image_i2t, image_i2i queries)
_EACH = "each"  # each element is one path (image_i2i targets)
_EACH_PAIRED = "each_paired"  # each element zipped with tgt_text is one path (image_t2i: the rest is never read)
_SERIES = "series"  # a list: each element is one path; otherwise the value is one (volume queries)
_SERIES_EACH = "series_each"  # each element is a series as above (volume targets: one candidate each)
LOADER_JOINS = {
    "text_qa": (),
    "image_cls": (("qry_img_path", _ONE_OR_EACH),),
    "image_qa": (("qry_img_path", _ONE_OR_EACH),),
    "image_t2i": (("tgt_img_path", _EACH_PAIRED),),
    "image_i2i": (("qry_img_path", _ONE_OR_EACH), ("tgt_img_path", _EACH)),
    "image_i2i_vg": (("qry_img_path", _ONE_OR_EACH), ("tgt_img_path", _EACH)),
    "volume_i2t": (("qry_img_path", _SERIES),),
    "volume_t2i": (("tgt_img_path", _SERIES_EACH),),
    "volume_i2i": (("qry_img_path", _SERIES), ("tgt_img_path", _SERIES_EACH)),
}
_WALKS = {
    _ONE_OR_EACH: "a string, or each element of a list, as one path",
    _EACH: "each element as one path",
    _EACH_PAIRED: "each element paired with a tgt_text as one path",
    _SERIES: "each element of a list, or the value itself, as one path",
    _SERIES_EACH: "each element as a series of paths (a list's elements, or the element itself)",
}


def loader_problem(record: dict, parser: str | None) -> str | None:
    """Why the evaluation's loader for `parser` cannot read this record (one that passes the task schema) as
    published, or None: a value it joins to the image root is not a string (os.path.join raises TypeError,
    which stops the evaluation of the whole task file). The release's multi-crop VinDr records are such."""
    for name, walk in LOADER_JOINS.get(parser, ()):
        value = record.get(name)
        if value is None:
            return f"{name} is null, where the {parser} loader takes {_WALKS[walk]} (it raises TypeError)"
        for joined in _joined(value, walk, record):
            if not isinstance(joined, str):
                kind = (_shape(joined) or "null").split(" of ")[0]
                return (
                    f"an element of {name} is {kind}, where the {parser} loader takes {_WALKS[walk]} and joins it "
                    "to the image root (os.path.join raises TypeError)"
                )
    return None


def unloadable(rows, parser: str | None) -> list[dict]:
    """{"record", "reason"} of each (number, record) of a task file that passes the schema of `parser` but that
    the evaluation's loader for it cannot read as published (loader_problem)."""
    found = []
    for index, row in rows:
        why = None if task_record_problems(row, parser) else loader_problem(row, parser)
        if why is not None:
            found.append({"record": index, "reason": why})
    return found


def _joined(value, walk: str, record: dict):
    """Each value the loader joins to the image root, in its order."""
    if walk in (_ONE_OR_EACH, _SERIES) and not isinstance(value, list):
        yield value
    elif walk in (_ONE_OR_EACH, _SERIES, _EACH):
        yield from value
    elif walk == _EACH_PAIRED:
        yield from value[: len(record.get("tgt_text") or ())]
    else:
        for group in value:
            yield from group if isinstance(group, list) else [group]


def unsafe_path(ref: ImageRef) -> str | None:
    """Why an image path of a record names no file under its root (validate's `unsafe`: absolute, climbing out
    with '..', a NUL or backslash, a part over 255 bytes), or None. A conversion makes no such path."""
    try:
        safe_relative(ref.path, ref.field)
    except UnsafePathError as exc:
        return str(exc)
    return None


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


def _shape(value, depth: int = 0) -> str | None:
    """The type of a JSON value as Arrow infers a column; None (null) fits any type."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "an object"
    if depth >= MAX_DEPTH:
        return "a list nested too deep"
    inner = sorted({s for s in (_shape(v, depth + 1) for v in value) if s is not None})
    return f"a list of {' or '.join(s.removeprefix('a ').removeprefix('an ') for s in inner)}" if inner else "a list"


def _fits(first: str, other: str) -> bool:
    """An empty list fits any list; otherwise the shapes must be equal."""
    both_lists = first.startswith("a list") and other.startswith("a list")
    return first == other or (both_lists and "a list" in (first, other))


def mixed_types(rows: list) -> list[str]:
    """Fields whose type changes from one record to another (or inside one list): `datasets.load_dataset("json")`
    cannot give such a field one Arrow type (datasets 3.6 fails; 4.8 and later load it as untyped JSON)."""
    first: dict[str, tuple[int, str]] = {}  # field -> (record, shape) of its most specific shape so far
    reported: set[str] = set()
    found = []
    for index, row in enumerate(rows):
        for name, value in row.items() if isinstance(row, dict) else ():
            shape = _shape(value)
            if shape is None or name in reported:
                continue
            if " or " in shape:
                found.append(f"field {name!r} holds {shape} in record {index}")
                reported.add(name)
            elif name not in first or first[name][1] == "a list":
                first[name] = (index, shape)
            elif not _fits(first[name][1], shape):
                was, shape_was = first[name]
                found.append(f"field {name!r} is {shape_was} in record {was} and {shape} in record {index}")
                reported.add(name)
    return found


MAX_DEPTH = 8  # a slice series inside a list of candidates is 2 deep; deeper lists are not paths


def _flatten(value, depth: int = 0):
    if isinstance(value, str):
        yield value
    elif isinstance(value, list) and depth < MAX_DEPTH:
        for item in value:
            yield from _flatten(item, depth + 1)


def _describe(value) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:60]}{'...' if len(text) > 60 else ''}"
