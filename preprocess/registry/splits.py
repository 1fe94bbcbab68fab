"""Which splits a build makes: the `splits` config key, applied in one place.

`splits: test` (default) builds only what the test task files need; `all` also builds the train and val
outputs the benchmark's scripts write (what Train_Data references); a mapping chooses per subset.

How the registry declares train outputs (subsets.yaml, sources.yaml):
- a conversion with `split: train` runs only when its subset wants all;
- a parameter `train_<name>` of a conversion (e.g. `train_splits: [train, val]` beside `splits: [test]`) makes
  a second conversion, `<name of the conversion>_train`, whose `<name>` is that value (registry.Conversion.twins);
  it runs only with all (its own jobs, manifests and shards). The test conversion never sees the `train_`
  parameters;
- a file of a source with `split: train` is checked only when a subset that needs it wants all.
Every caller (steps, the workflow's rules, the raw check, the CLI) asks this module.
"""

from __future__ import annotations

from dataclasses import replace

from preprocess.errors import ConfigError, did_you_mean, quoted
from preprocess.registry.model import TEST, TRAIN, Conversion, FileSpec, Registry, Source, Subset

ALL = "all"


def wanted(settings, subset: Subset) -> str:
    """'test' or 'all' for this subset (settings None: test)."""
    value = getattr(settings, "splits", TEST) if settings is not None else TEST
    if isinstance(value, str):
        return value
    return value.get(subset.key, TEST)


def check_keys(settings, registry: Registry) -> None:
    """A `splits` mapping may only name subsets of the registry; a `shards` mapping subsets or their
    conversions ('2D_Task/APTOS', '3D_Task/CT_RATE/volumes_train'): a misspelt key would be ignored."""
    value = getattr(settings, "splits", TEST)
    keys = [s.key for s in registry.subsets]
    if isinstance(value, dict):
        for key in value:
            if key not in keys:
                raise ConfigError(f"splits names unknown subset {quoted(key)}{did_you_mean(key, keys)}")
    conversions = [f"{s.key}/{c.name}" for s in registry.subsets for conv in s.conversions for c in conv.twins()]
    for key in getattr(settings, "shards", None) or {}:
        if key not in keys and key not in conversions:
            raise ConfigError(
                f"shards names unknown subset or conversion {quoted(key)}{did_you_mean(key, keys + conversions)}; "
                "keys are a subset ('2D_Task/APTOS') or one of its conversions ('2D_Task/APTOS/<conversion>', "
                "see `python -m preprocess plan`)"
            )


def conversions(settings, subset: Subset, which: str | None = None) -> list[Conversion]:
    """The conversions a build runs for the subset: the test ones, and with all the train ones too.
    `which` ('test' or 'all') overrides the settings."""
    mode = which or wanted(settings, subset)
    return [c for conv in subset.conversions for c in conv.twins() if c.split != TRAIN or mode == ALL]


def by_split(subset: Subset) -> dict[str, list[Conversion]]:
    """Every conversion of the subset, test and train apart (for status)."""
    found: dict[str, list[Conversion]] = {TEST: [], TRAIN: []}
    for conv in subset.conversions:
        for c in conv.twins():
            found[c.split].append(c)
    return found


def files(registry: Registry, settings, subset: Subset) -> dict[str, tuple[FileSpec, ...]]:
    """Source id -> the file specs the subset needs for the splits it builds (train files only with all)."""
    train = wanted(settings, subset) == ALL
    return {
        source_id: tuple(spec for spec in specs if train or spec.split != TRAIN)
        for source_id, specs in registry.files_needed(subset).items()
    }


def checked_source(registry: Registry, settings, source: Source) -> Source:
    """The source with only the files the raw check asks for: its train files only when a subset that needs
    them wants all (any subset: a check report serves every subset of the source)."""
    if all(spec.split != TRAIN for spec in source.files):
        return source
    train_ids = {
        spec.id
        for subset in registry.subsets
        if wanted(settings, subset) == ALL
        for spec in registry.files_needed(subset).get(source.id, ())
    }
    return replace(source, files=tuple(f for f in source.files if f.split != TRAIN or f.id in train_ids))
