"""The kinds' recipes: each dataset folder's recipes.yaml, merged into the kinds of kinds.yaml.

kinds.yaml says what a kind is (its module, params, items, resources) and which parameter names a recipe; a
recipe (the per-dataset data and code a kind reads) is declared in the folder of the dataset it reads, as an
extra folder declares its own (datasets/README.md). The folders are read in the loader's order, shipped ones
first: a recipe name is declared once per kind, and a recipe is only checked here against its kind's
declaration, never imported (its code is, when a job runs).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from preprocess.errors import RegistryError, did_you_mean
from preprocess.registry.model import ITEM_UNITS, Kind

# kind -> recipe name -> (its entry, the recipes.yaml that declares it)
Declared = dict[str, dict[str, tuple[dict, Path]]]


def collect(declared: Declared, kinds: dict[str, Kind], recipes: dict, path: Path) -> None:
    """Add the `recipes` of one folder's recipes.yaml (`path`, already schema-checked) to `declared`; a kind
    unknown or without recipes, a recipe another folder declares, or one asking for a parameter its kind
    lacks, is refused naming the file."""
    for kind_name, entries in recipes.items():
        if kind_name not in kinds:
            raise RegistryError(
                f"{path}: recipes of unknown conversion kind {kind_name!r}{did_you_mean(kind_name, kinds)}"
            )
        kind = kinds[kind_name]
        if kind.recipe_param is None:
            with_recipes = sorted(name for name, other in kinds.items() if other.recipe_param)
            raise RegistryError(
                f"{path}: kind {kind_name} takes no recipes (kinds with recipes: {', '.join(with_recipes)})"
            )
        mine = declared.setdefault(kind_name, {})
        for name, entry in entries.items():
            if name in mine:
                raise RegistryError(
                    f"{path}: recipe {name!r} of kind {kind_name} is declared in {mine[name][1]} already; "
                    "a folder adds recipes, it never replaces one (give it another name)"
                )
            _check_entry(kind, name, entry, path)
            mine[name] = (entry, path)


def merged(kinds: dict[str, Kind], declared: Declared) -> dict[str, Kind]:
    """The kinds, each with the recipes the folders declare for it, in the folders' order."""
    return {
        name: replace(kind, recipes={recipe: entry for recipe, (entry, _) in declared.get(name, {}).items()})
        for name, kind in kinds.items()
    }


def _check_entry(kind: Kind, name: str, entry: dict, path: Path) -> None:
    """A recipe asks only for parameters its kind takes, and says an item unit there is (a typo there would
    make every subset of the recipe fail to load, or none)."""
    if entry.get("items", "files") not in ITEM_UNITS:
        raise RegistryError(f"{path}: recipe {name} of kind {kind.name}: items is one of {ITEM_UNITS}")
    known = kind.params.get("properties", {})
    for key in entry.get("requires", ()):
        if key not in known:
            raise RegistryError(
                f"{path}: recipe {name} of kind {kind.name} requires {key!r}, none of its params"
                f"{did_you_mean(key, known)}"
            )
