"""One guarded way to read a number from a file's header (a DICOM tag, a NIfTI or NRRD field) before it shapes
pixels: text (`abc`), inf, NaN, or a value outside the field's sane range makes the file bad input, named with
the field (a RawDataError: `on_bad_input` stops on it or skips and counts the item), never an all-black image
or a numpy RuntimeWarning further on.

Where a format's standard gives a value a meaning (NIfTI's scl_slope 0: no scaling; a DICOM window narrower
than 1: not a usable window), the reader applies that meaning before it asks for a number here.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from pathlib import Path

from preprocess.errors import RawDataError

# No header value that maps stored values to pixels (a rescale slope or intercept, a window) is this large in
# a real file; past it the arithmetic downstream nears float32's range (3.4e38 after a slope times a 32-bit
# value) and its result would be no picture anyway.
LARGEST = 1e12


@dataclass(frozen=True)
class Field:
    """A header field as the user finds it in the file (`RescaleSlope (0028,1053)`, `scl_slope`, `pixdim[1]`)
    and its sane range: |value| <= largest; >= smallest (when set; a nonzero field); > 0 when positive."""

    name: str
    largest: float = LARGEST
    smallest: float = 0.0
    positive: bool = False
    integer: bool = False


def number(value, path: Path | str, field: Field) -> float:
    """`value` (a number, or text as a header stores it) as a float, checked against `field`; else a
    RawDataError naming the file and the field."""
    parsed = _parse(value)
    if parsed is None:
        why = "not a number"
    elif not math.isfinite(parsed):
        why = "not a finite number"
    elif field.integer and parsed != int(parsed):
        why = "not a whole number"
    elif field.positive and parsed <= 0:
        why = "not positive"
    elif abs(parsed) > field.largest or abs(parsed) < field.smallest:
        why = f"outside the sane range {_range(field)}"
    else:
        return parsed
    raise bad_value(path, field, value, why)


def numbers_of(values, path: Path | str, field: Field) -> list[float]:
    """Every value of a multi-valued field (DICOM's backslash-separated values), each checked: a header whose
    field holds one bad value among good ones is damaged as a whole."""
    if isinstance(values, str | bytes) or not hasattr(values, "__len__"):
        values = [values]
    return [number(value, path, field) for value in values]


def bad_value(path: Path | str, field: Field, value, why: str) -> RawDataError:
    shown = value.decode("latin-1") if isinstance(value, bytes) else value
    return RawDataError(
        f"{path}: header field {field.name} is {str(shown)[:40]!r}, {why}; the item is bad input (a damaged or "
        "hand-edited header): download the file again, or leave it out with on_bad_input: skip"
    )


def _parse(value) -> float | None:
    """A float from a number or from text; None for anything else (a bool is not a header number)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    if isinstance(value, str):
        if "_" in value:  # float() reads '1_000'; no header spells a number so
            return None
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def _range(field: Field) -> str:
    if field.positive:
        low = f"{field.smallest:g} <=" if field.smallest else "0 <"
        return f"{low} value <= {field.largest:g}"
    if field.smallest:
        return f"{field.smallest:g} <= |value| <= {field.largest:g}"
    return f"|value| <= {field.largest:g}"
