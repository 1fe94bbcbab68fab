"""The settings a run works with, and the checks they pass before anything is read or written: written once,
for the command line (`command_settings`) and the workflow (`workflow_settings`, workflow/rules/common.smk)."""

from __future__ import annotations

from pathlib import Path

from preprocess.formats.rawroot import require_apart, require_output
from preprocess.registry import splits
from preprocess.registry.config import find_config, load_settings, require_directory, settings_from_dict
from preprocess.registry.loader import load_registry


def require_usable(settings, results: Path | None, basedir: str | None = None, raw_must_exist: bool = True) -> None:
    """The folders of `settings` kept apart and in place. `basedir`: 'read' or 'write' when the run needs
    DATA_BASEDIR to be a folder (and writable); `raw_must_exist` False: a command that may run before the raw
    downloads exist (need, download)."""
    raw_root = settings.raw_root if settings.raw_root_given else None
    require_apart(raw_root, settings.data_basedir, results, builds=basedir == "write")
    if settings.demo is not None:  # the shipped config builds the demo: it must have been written
        from preprocess.demo import require_demo  # here: the demo's writers are slow to import

        require_demo(settings.demo)
    if settings.raw_root_given and raw_must_exist:
        require_directory(settings.raw_root, "raw root")
    if basedir is not None:
        require_directory(settings.data_basedir, "DATA_BASEDIR", writable=basedir == "write")


def command_settings(
    config: str | None,
    data_basedir: str | None = None,
    raw_root: str | None = None,
    results: Path | None = None,
    require_raw: bool = True,
    basedir: str | None = None,
    raw_must_exist: bool = True,
    **values,
):
    """Settings of a command: `config`, else ./config.yaml when present (as the workflow), then the options.

    `values`: config keys an option sets (None: not given), checked by the schema as the file's."""
    settings = load_settings(
        find_config(config, data_basedir),
        require_raw=require_raw,
        data_basedir=data_basedir,
        raw_root=raw_root,
        **values,
    )
    require_usable(settings, results, basedir, raw_must_exist)
    return settings


def checked_registry(settings):
    """The registry of `settings`, its per-subset config keys (shards, splits) checked against it, as a build
    checks them: a misspelt key is not ignored."""
    registry = settings.registry()
    splits.check_keys(settings, registry)
    return registry


def workflow_settings(config: dict, results: Path):
    """(settings, registry) of a Snakemake run: the folders as a build needs them, before any job."""
    settings = settings_from_dict(config)
    require_usable(settings, results, basedir="write")
    return settings, checked_registry(settings)


def shipped_registry():
    """The registry as the package ships it (no config read)."""
    return load_registry()


def require_written(settings, results: Path | None, path: Path, option: str, names: tuple[str, ...] | None = None):
    """A file named on the command line for writing (with `names`: a folder, and the files written into it):
    not in the raw root, not a link, not a file of DATA_BASEDIR outside the results folder
    (rawroot.require_output)."""
    raw_root = settings.raw_root if settings.raw_root_given else None
    require_output(Path(path), option, raw_root, settings.data_basedir, results, names)
