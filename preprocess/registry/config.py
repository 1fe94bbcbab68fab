"""Build settings: config.yaml keys, their defaults, and the schema check."""

from __future__ import annotations

import copy
import tempfile
from dataclasses import dataclass, fields
from pathlib import Path

from preprocess.errors import ConfigError, did_you_mean, quoted
from preprocess.formats import textparse
from preprocess.registry.loader import check_schema, load_registry, load_schema
from preprocess.registry.model import Registry


@dataclass(frozen=True)
class Settings:
    data_basedir: Path
    raw_root: Path
    subsets: object
    splits: object
    demo: Path | None
    source_variants: dict
    registry_overrides: Path | None
    verify_checksums: object
    validate_decode: str
    build: str  # missing | all: what to do with a subset whose images are already in DATA_BASEDIR
    overwrite_existing: bool
    allow_download: bool
    download_deadline: float  # seconds one downloaded file may take (preprocess/rawdata/fetch.py)
    download_max_bytes: int  # the most a downloaded file of no listed size may hold
    release_repo: str  # the Hugging Face dataset `download release` fetches from
    on_bad_input: str
    orientation: object
    drr: dict
    shards: dict
    cores: int | None  # the cores the build's jobs are cut for (preprocess/sizing/allocation.py); None: the run's
    progress_interval: float
    max_volume_voxels: int
    raw_root_given: bool = True  # False: a DATA_BASEDIR-only command filled raw_root in itself

    def verifies_checksums(self, source_id: str) -> bool:
        if isinstance(self.verify_checksums, bool):
            return self.verify_checksums
        return self.verify_checksums.get(source_id, True)

    def orientation_for(self, subset_key: str) -> str:
        """'reference' (the benchmark's behaviour, default) or 'canonical' (corrected), per subset or for all."""
        if isinstance(self.orientation, str):
            return self.orientation
        return self.orientation.get(subset_key, self.orientation.get("default", "reference"))

    def registry(self) -> Registry:
        return load_registry(self.registry_overrides, self.source_variants)


def defaults() -> dict:
    """Each key's default, as the config schema declares it."""
    properties = load_schema("config.schema.yaml")["properties"]
    return {key: copy.deepcopy(spec["default"]) for key, spec in properties.items() if "default" in spec}


def check_config(values: dict) -> None:
    """The configuration's keys and values against config.schema.yaml: a misspelt key first, by itself, with
    the key it is close to (the schema's own message only says that it was unexpected)."""
    known = load_schema("config.schema.yaml")["properties"]
    unknown = [key for key in values if key not in known]
    if unknown:
        named = ", ".join(f"{quoted(key)}{did_you_mean(str(key), known)}" for key in unknown)
        raise ConfigError(
            f"unknown key{'s' if len(unknown) > 1 else ''} in the configuration: {named}; the keys are those of "
            "the shipped config.yaml (config.schema.yaml describes each)"
        )
    check_schema(values, "config.schema.yaml", "the configuration", error=ConfigError)


# Settings fields that hold folders or files: resolved against the working directory.
PATH_FIELDS = tuple(f.name for f in fields(Settings) if "Path" in str(f.type))


def settings_from_dict(values: dict, base_dir: Path | None = None) -> Settings:
    """Fill defaults, check the schema, make relative paths relative to `base_dir` (default: the working
    directory, as Snakemake does: one rule for the CLI and the workflow)."""
    given = values.get("_raw_root_given", True)
    chosen = {k: v for k, v in values.items() if k != "_raw_root_given"}
    merged = {**defaults(), **{k: v for k, v in chosen.items() if v is not None or k not in defaults()}}
    check_config(merged)
    base = base_dir or Path.cwd()
    for key in PATH_FIELDS:
        if merged.get(key) is not None:
            merged[key] = (base / Path(merged[key]).expanduser()).resolve()
    names = [f.name for f in fields(Settings) if f.name != "raw_root_given"]
    return Settings(**{name: merged[name] for name in names}, raw_root_given=bool(given))


def read_config_file(path: str | Path) -> dict:
    path = Path(path)
    try:  # bounded: a FIFO, a device or a folder named by --config is refused at once, never waited on
        values = textparse.read_yaml(path) or {}
    except textparse.TextError as exc:
        raise ConfigError(f"cannot read config file {exc}; give a YAML file of the keys of config.yaml") from None
    if not isinstance(values, dict):
        raise ConfigError(f"config file {path} must hold a mapping of keys (see config.yaml)")
    return values


SHIPPED_CONFIG = "config.yaml"


def find_config(explicit: str | Path | None, data_basedir: str | Path | None = None) -> Path | None:
    """The config file a command reads: the one given, else ./config.yaml when present (as the workflow).

    A ./config.yaml that builds the demo is not read for an explicit DATA_BASEDIR outside the demo's folder:
    its raw root, overrides and demo check are the demo's, not those of the tree the user named."""
    if explicit:
        return Path(explicit)
    shipped = Path(SHIPPED_CONFIG)
    if not shipped.is_file():
        return None
    if data_basedir is not None:
        demo = read_config_file(shipped).get("demo")
        if demo and not Path(data_basedir).resolve().is_relative_to(Path(demo).resolve()):
            return None
    return shipped


def load_settings(config_file: str | Path | None = None, require_raw: bool = True, **cli_values) -> Settings:
    """Settings from a config file (optional) overridden by command-line values that are not None.

    Relative paths, in the file and on the command line, are relative to the working directory."""
    values: dict = {}
    if config_file:
        values = read_config_file(config_file)
    for key, value in cli_values.items():
        if value is not None:
            values[key] = str(Path(value).resolve()) if key in ("data_basedir", "raw_root") else value
    if not require_raw and "data_basedir" in values and values.get("raw_root") is None:
        # Commands that read only DATA_BASEDIR still get a complete Settings object.
        values["raw_root"] = values["data_basedir"]
        values["_raw_root_given"] = False
    for key in ("data_basedir", "raw_root"):
        if values.get(key) is None:
            raise ConfigError(f"no {key}: pass --{key.replace('_', '-')} DIR or a --config file that sets it")
    values.setdefault("subsets", "all")
    return settings_from_dict(values)


def require_directory(path: Path, what: str, writable: bool = False) -> None:
    """Stop with a message naming `path` when it is absent, not a folder, or (if asked) not writable."""
    if not path.exists():
        raise ConfigError(f"{what} {path} does not exist: create it, or fix {_where(what)}")
    if not path.is_dir():
        raise ConfigError(f"{what} {path} is not a directory: point {_where(what)} at a folder")
    if writable:
        try:
            with tempfile.TemporaryFile(dir=path):
                pass
        except OSError as exc:
            raise ConfigError(
                f"{what} {path} is not writable ({exc.strerror}): the built images go there; "
                "fix its permissions or choose another folder"
            ) from None


def _where(what: str) -> str:
    key = "raw_root" if what == "raw root" else "data_basedir"
    return f"{key} in the config (or --{key.replace('_', '-')})"
