"""The one way the package reads a JSON, JSON Lines or YAML file and parses such text: a config, the registry
and its override files, a release file, a raw annotation file, the results folder's own reports.

Reading is bounded: a regular file only, opened non-blocking and fstat'ed (a FIFO, a device, a socket or a
folder is named at once, never waited on), of at most a given number of bytes (a larger one is refused before
it is read), UTF-8 text (a byte order mark allowed). Parsing turns every way the parsers fail on bad text into
one TextError naming the file and, where it can be told, the line: a syntax error, nesting too deep for
Python's recursion, a whole number of more digits than Python converts (int-max-str-digits: a ValueError
without a position), a YAML value its constructor refuses (a date that is no date).
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import sys
from dataclasses import dataclass

import yaml
from yaml.constructor import ConstructorError

from preprocess.errors import PreprocessError
from preprocess.formats.fsutil import file_type, open_regular

CONFIG_BYTES = 16 << 20  # a hand-written file (a config, the registry, an override file): kilobytes in practice
DATA_BYTES = 4 << 30  # a file a release or a run writes (a task JSON, a Train_Data JSONL, a report)

_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser when present: much faster


class TextError(PreprocessError):
    """A file, or a text read from one, that cannot be read or parsed: `reason` says what is wrong and where in
    the file; the message names the file first. (file, reason) are its args, so it survives pickling."""

    def __init__(self, file, reason: str):
        super().__init__(str(file), reason)
        self.file, self.reason = str(file), reason

    def __str__(self) -> str:
        return f"{self.file}: {self.reason}"


@dataclass(frozen=True)
class BrokenLine:
    """A line of a JSONL that is not a JSON value (the rest of the file is still read)."""

    reason: str


# --- reading ---------------------------------------------------------------------------------------------


def read_text(path, limit: int = CONFIG_BYTES) -> str:
    """The text of a regular file of at most `limit` bytes, or TextError saying what it is instead."""
    return decode(read_bytes(path, limit), path)


def read_bytes(path, limit: int) -> bytes:
    try:
        with open_regular(path) as handle:  # O_NONBLOCK, then fstat: a FIFO is named, never waited on
            size = os.fstat(handle.fileno()).st_size
            data = handle.read(limit + 1) if size <= limit else b""
    except FileNotFoundError:
        if os.path.islink(path):
            raise TextError(path, f"a symbolic link to {os.readlink(path)}, which does not exist") from None
        raise TextError(path, "no such file") from None
    except OSError as exc:
        raise TextError(path, _open_problem(path, exc)) from None
    if max(size, len(data)) > limit:
        raise TextError(path, f"{max(size, len(data)):,} bytes, more than the {limit:,} such a file may hold")
    return data


def _open_problem(path, exc: OSError) -> str:
    if exc.errno == errno.EINVAL:  # open_regular's own: what the file is instead of a regular file
        return exc.strerror
    try:  # a socket cannot be opened at all (ENXIO): say what it is rather than the errno's words
        mode = os.stat(path).st_mode
    except OSError:
        mode = stat.S_IFREG
    if not stat.S_ISREG(mode):
        return f"not a regular file: {file_type(mode)}"
    return f"cannot be read ({exc.strerror or exc})"


def decode(data: bytes, file) -> str:
    """UTF-8 text (a byte order mark dropped), or TextError naming the first byte that is not."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TextError(
            file, f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start} cannot be decoded)"
        ) from None


def read_json(path, limit: int = CONFIG_BYTES):
    return json_value(read_text(path, limit), path)


def read_yaml(path, limit: int = CONFIG_BYTES):
    return yaml_value(read_text(path, limit), path)


# --- JSON ------------------------------------------------------------------------------------------------


def json_value(text: str | bytes, file, line: int | None = None):
    """The value of a JSON text (bytes must be UTF-8), or TextError naming the file and what is wrong where.
    `line`: the text is that line of a JSON Lines file (the reasons then start with it)."""
    if isinstance(text, bytes):
        text = decode(text, file)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if line is not None:
            raise TextError(file, f"line {line} is not valid JSON: {exc.msg}") from None
        raise TextError(file, f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        if line is not None:
            raise TextError(file, f"line {line} nests lists or objects too deep to read") from None
        raise TextError(file, "lists or objects nested too deep to read") from None
    except ValueError as exc:  # a whole number of more digits than int() converts; json gives no position
        raise TextError(file, _long_number(text, line) or str(exc)) from None


# A JSON string (skipped: its digits are text) or a number; outside strings, digits are only in numbers.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?')


def _long_number(text: str, line: int | None) -> str | None:
    """Where the first whole number too long for int() is, and how long it is (None: there is none)."""
    most = sys.get_int_max_str_digits()
    for token in _TOKEN.finditer(text):
        digits = token.group().lstrip("-")
        if digits.isdigit() and most and len(digits) > most:
            at = f"line {line}" if line is not None else f"line {text.count(chr(10), 0, token.start()) + 1}"
            return f"{at} holds a whole number of {len(digits):,} digits, more than the {most:,} Python converts"
    return None


def jsonl_values(text: str, file) -> list[tuple[int, object]]:
    """(0-based line number, value) of each non-blank line of a JSON Lines text; a line that is not JSON gives
    a BrokenLine saying why (the caller decides whether it stops the file). Lines end at '\\n' only:
    splitlines() would also cut a record at a U+2028 or U+0085 inside a string."""
    rows: list[tuple[int, object]] = []
    for number, line in enumerate(text.split("\n")):
        if line.strip():
            try:
                rows.append((number, json_value(line, file, line=number + 1)))
            except TextError as exc:
                rows.append((number, BrokenLine(exc.reason)))
    return rows


# --- YAML ------------------------------------------------------------------------------------------------


class _Loader(_SafeLoader):
    """The safe loader, whose constructor names the place of a value it cannot make (a whole number of too
    many digits, a date that is no date raise a ValueError without one)."""

    def construct_object(self, node, deep=False):
        try:
            return super().construct_object(node, deep=deep)
        except (ValueError, TypeError, OverflowError) as exc:
            raise ConstructorError(None, None, _value_problem(exc), node.start_mark) from None


# What aliases (*name) may add to a YAML document, in values and characters of text: each alias repeats its
# anchor's value, so nine lines of aliases of aliases (a "billion laughs") make a value of 9^9 strings, which no
# check of it, nor a repr, ends. The package's own files repeat a list of labels or a resource block.
ALIAS_ROOM = 1_000_000


class _AliasedLoader(_Loader):
    """The loader of a text that holds an anchor (&name): its document, composed, is measured as its aliases
    expand it before any Python value is made of it (the nodes of an alias are shared, so that costs the
    document's own size)."""

    def get_single_data(self):
        node = self.get_single_node()
        if node is None:
            return None
        _check_expansion(node)
        return self.construct_document(node)


class _Expansive(yaml.YAMLError):
    """A document whose aliases repeat too much, or hold the value they name."""


def _check_expansion(root) -> None:
    """Refuse a document that its aliases make more than ALIAS_ROOM larger, or that holds itself."""
    sizes: dict[int, int] = {}  # id(node) -> its size, its aliases expanded (capped: 9^1000 is no size to add)
    own = 0  # the size of each node counted once: the document as written
    cap = 1 << 62
    open_nodes: set[int] = set()  # the nodes whose children are being measured: an alias to one is a cycle
    stack = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        children = _children(node)
        if children_done:
            open_nodes.discard(key)
            weight = _weight(node)
            own += weight
            sizes[key] = min(cap, weight + sum(sizes[id(child)] for child in children))
        elif key not in sizes:
            if key in open_nodes:
                line = node.start_mark.line + 1
                raise _Expansive(f"an alias (*name) inside the value it names, at line {line}: write that value out")
            open_nodes.add(key)
            stack.append((node, True))
            stack.extend((child, False) for child in children if id(child) not in sizes)
    if sizes[id(root)] - own > ALIAS_ROOM:
        raise _Expansive(
            f"its aliases (*name) repeat more than {ALIAS_ROOM:,} values and characters (aliases of aliases: a "
            '"billion laughs"); write the repeated values out, or repeat less'
        )


def _children(node) -> list:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return node.value if isinstance(node, yaml.SequenceNode) else []


def _weight(node) -> int:
    """A node's own size: a scalar's characters, 1 for a list or a mapping."""
    return 1 + len(node.value) if isinstance(node, yaml.ScalarNode) else 1


_DIGITS = re.compile(r"\((\d+) digits\).*value has (\d+) digits")


def _value_problem(exc: Exception) -> str:
    found = _DIGITS.search(str(exc))
    if found:
        most, digits = (int(n) for n in found.groups())
        return f"is a whole number of {digits:,} digits, more than the {most:,} Python converts"
    return f"cannot be read ({exc})"


def yaml_value(text: str, file):
    """The value of a YAML text (safe tags only), or TextError naming the file and the line."""
    try:  # an alias needs an anchor (&name): a text without '&' is read without measuring its aliases
        return yaml.load(text, Loader=_AliasedLoader if "&" in text else _Loader)
    except _Expansive as exc:
        raise TextError(file, str(exc)) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1} column {mark.column + 1}" if mark is not None else "a place not told"
        if isinstance(exc, ConstructorError) and exc.context is None:  # _Loader's: a value it cannot make
            raise TextError(file, f"the value at {where} {exc.problem}") from None
        raise TextError(file, f"invalid YAML at {where}: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise TextError(file, f"invalid YAML: {exc}") from None
    except RecursionError:
        raise TextError(file, "lists or mappings nested too deep to read") from None
