"""A conversion's `raw_file` (subsets.yaml), checked when the registry loads: the parameters it reads names
from are templates of the conversion, and every field it fills is one they give or one it derives
(preprocess/rawdata/need.py reads it)."""

from __future__ import annotations

import re
import string

from preprocess.errors import RegistryError
from preprocess.registry.model import Conversion


def _fields(template: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(template) if field}


def check(where: str, conversion: Conversion) -> None:
    """Raise naming the subset and conversion when its raw_file cannot name a file from a record path."""
    spec = conversion.raw_file
    if spec is None:
        return
    given = set()
    for name in spec["from"]:
        template = conversion.params.get(name)
        if not isinstance(template, str):
            raise RegistryError(f"{where}: raw_file reads names from {name!r}, which is no template parameter of it")
        given |= _fields(template)
    for name, rule in (spec.get("derive") or {}).items():
        if rule["field"] not in given:
            raise RegistryError(f"{where}: raw_file derives {name!r} from {rule['field']!r}, a field no template gives")
        for pattern, _ in rule["sub"]:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise RegistryError(
                    f"{where}: raw_file derives {name!r} with a bad pattern {pattern!r}: {exc}"
                ) from None
    given |= set(spec.get("derive") or {})
    target = spec.get("path") or spec["farm_name"]
    unknown = sorted(_fields(target) - given)
    if unknown:
        raise RegistryError(f"{where}: raw_file {target!r} uses {unknown}, which neither its templates nor derive give")
