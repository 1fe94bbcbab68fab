"""Reprs of bounded length for messages about values read from a user's file: built from the value's start,
never from the whole value (a list of a million strings is quoted by its first few, in time of the quote's
length, not the list's).

`brief(value)` is the quote; `briefly(document)` is a copy of a JSON-like document whose lists, mappings and
long strings have `brief` as their repr, for a checker that quotes the values it refuses with repr(): the
jsonschema messages ("[...] is not of type 'string'") are then bounded too, whatever the keyword.
"""

from __future__ import annotations

ROOM = 200  # characters of a quote: enough to recognise the value, short enough for one line
LONG_TEXT = 2 * ROOM  # strings longer than this are wrapped by briefly(); shorter ones quote short as they are


def brief(value, room: int = ROOM) -> str:
    """A repr of about `room` characters at most, '...' where it is cut."""
    if room <= 0:
        return "..."
    if isinstance(value, str):
        return repr(value[:room]) + ("..." if len(value) > room else "")
    if isinstance(value, dict):
        return _items(iter(value.items()), len(value), room, "{}", True)
    if isinstance(value, list | tuple):
        return _items(iter(value), len(value), room, "[]", False)
    text = repr(value)  # a number, a boolean, None, a date: short (YAML's whole numbers have at most 4300 digits)
    return text if len(text) <= room else text[:room] + "..."


def _items(items, count: int, room: int, brackets: str, pairs: bool) -> str:
    parts: list[str] = []
    used = 2
    for item in items:
        if used >= room:
            parts.append(f"... of {count:,}")
            break
        if pairs:
            key = brief(item[0], room - used)
            text = f"{key}: {brief(item[1], room - used - len(key) - 2)}"
        else:
            text = brief(item, room - used)
        parts.append(text)
        used += len(text) + 2
    return brackets[0] + ", ".join(parts) + brackets[1]


class _Mapping(dict):
    def __repr__(self) -> str:
        return brief(self)


class _List(list):
    def __repr__(self) -> str:
        return brief(self)


class _Text(str):
    __slots__ = ()

    def __repr__(self) -> str:
        return brief(str(self))


def briefly(value, _copies: dict | None = None):
    """A copy of a JSON-like value (mappings, lists, strings, numbers) equal to it, whose repr() at any depth
    is `brief`: a checker's messages quote its parts in bounded length. A list or mapping the value holds twice
    (a YAML alias) is copied once, and held twice by the copy."""
    copies = {} if _copies is None else _copies
    if isinstance(value, str):
        return _Text(value) if len(value) > LONG_TEXT else value
    if not isinstance(value, dict | list):
        return value
    if id(value) in copies:
        return copies[id(value)]
    copy = copies[id(value)] = _Mapping() if isinstance(value, dict) else _List()
    if isinstance(value, dict):
        copy.update((briefly(key, copies), briefly(item, copies)) for key, item in value.items())
    else:
        copy.extend(briefly(item, copies) for item in value)
    return copy
