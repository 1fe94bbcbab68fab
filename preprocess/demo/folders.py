"""The fakes of the dataset folders: each folder's fakes.py (preprocess/datasets/README.md), found through the
registry loader's list of folders, the shipped ones then those of MEDHEB_EXTRA_REGISTRY, so that an added folder
brings its own writers by the same route.

A fakes.py writes the one source of its folder's sources.yaml: `demo(base)` the demo's tiny copy into its raw
folder `base`; `real_size(base, n, seed) -> {task file: records}` (optional) n items at the upstream's real
sizes, with `SIZE` (what an item is, where the figure comes from) and `REAL_SEED` (the offset added to the
run's seed). It may also declare what the demo does with its folder's subsets, keyed "<group>/<folder>":
`RELEASE_IMAGES` the subsets whose images the demo's release ships, each with its oracle
(preprocess/demo/release_images), and `DEMO_LEFT_OUT` those the demo leaves unbuilt, with the reason a build
gives. A shipped folder's module is imported as preprocess.datasets.<folder>.fakes (so import-linter
checks its imports); an extra folder's from its file.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from preprocess.errors import PreprocessError
from preprocess.registry.loader import DATASETS_DIR, dataset_dirs, extra_registry_dirs, folder_entries

MODULE = "fakes.py"
REAL_SIZE = ("real_size", "SIZE", "REAL_SEED")  # what a module with real-size fakes defines


def _import(folder: Path) -> ModuleType:
    if folder.parent == DATASETS_DIR:
        return importlib.import_module(f"preprocess.datasets.{folder.name}.fakes")
    name = "medheb_extra_fakes_" + hashlib.sha256(str(folder).encode()).hexdigest()[:16]
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, folder / MODULE)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # before it runs, as an import does (its dataclasses look it up)
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
    return sys.modules[name]


def _source(folder: Path) -> str:
    """The one source of the folder's sources.yaml, the one its fakes.py writes."""
    path = folder / "sources.yaml"
    sources = list(folder_entries(folder, "sources"))
    if len(sources) != 1:
        raise PreprocessError(
            f"{folder / MODULE} writes the one source of {path}, which lists {len(sources)}: give the folder "
            "exactly one source, or move the fakes to the folder of each"
        )
    return sources[0]


def fakes() -> dict[str, ModuleType]:
    """Source id -> the fakes.py module of its dataset folder, in the registry's order of folders."""
    folders = [*dataset_dirs(), *extra_registry_dirs()]
    return {_source(folder): _import(folder) for folder in folders if (folder / MODULE).is_file()}


def demo_writers() -> dict:
    """Source id -> the `demo(base)` writer of its folder's fakes.py."""
    return {source_id: module.demo for source_id, module in fakes().items() if hasattr(module, "demo")}


def real_size_fakes() -> dict[str, ModuleType]:
    """Source id -> its fakes.py, for those with real-size fakes (each with all of REAL_SIZE)."""
    found = {source_id: module for source_id, module in fakes().items() if hasattr(module, "real_size")}
    for module in found.values():
        missing = [name for name in REAL_SIZE if not hasattr(module, name)]
        if missing:
            raise PreprocessError(
                f"{module.__file__} has real_size but not {', '.join(missing)} (preprocess/demo/folders.py)"
            )
    return found


def _subset_keys(folder: Path) -> set[str]:
    return {f"{subset.get('group')}/{subset.get('folder')}" for subset in folder_entries(folder, "subsets")}


def _declared(name: str) -> dict:
    """Subset key -> value, the `name` dicts of the folders' fakes.py merged; each key is one of its folder's."""
    found = {}
    for module in fakes().values():
        declared = getattr(module, name, {})
        foreign = sorted(set(declared) - _subset_keys(Path(module.__file__).parent))
        if foreign:
            raise PreprocessError(
                f"{module.__file__} declares {foreign[0]} in {name}, a subset its folder's subsets.yaml does not "
                "list: declare it in the fakes.py of the folder that holds it"
            )
        found.update(declared)
    return found


def release_oracles() -> dict:
    """Subset key -> the oracle that writes its release images, for the subsets whose images the demo's
    release ships (the folders' RELEASE_IMAGES)."""
    return _declared("RELEASE_IMAGES")


def left_out() -> dict[str, str]:
    """Subset key -> why a demo build leaves it unbuilt, for the subsets the demo leaves out on purpose (the
    folders' DEMO_LEFT_OUT): it writes no raw files and ships no task files for them."""
    return _declared("DEMO_LEFT_OUT")
