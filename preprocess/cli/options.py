"""What several commands share: the data options (--config, --raw-root, --data-basedir, --results), the
settings they give (checked by preprocess/pipeline/settings.py), and the check of a file named for writing."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from preprocess.errors import quoted

DEFAULT_RESULTS = Path("results")


def whole_number(least: int):
    """An argparse type: a whole number of at least `least`, checked as the config's counts are (workers, cores,
    shards: 1 or more), so that 0 or -1 stops at the command line with exit 2, never inside a command."""

    def checked(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{quoted(text)} is not a whole number") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"{value} is less than {least}: give a whole number of {least} or more")
        return value

    checked.__name__ = f"whole number of at least {least}"  # what argparse's own messages call the type
    return checked


positive = whole_number(1)
at_least_zero = whole_number(0)


def finite_number(text: str) -> float:
    """An argparse type: a number that is neither infinite nor NaN (float() takes 'inf' and 'nan')."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{quoted(text)} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{quoted(text)} is not a finite number")
    return value


def percentile(text: str) -> float:
    """An argparse type: a finite number from 0 to 100."""
    value = finite_number(text)
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"{value:g} is not a percentile: give a number from 0 to 100")
    return value


def data_options(parser: argparse.ArgumentParser, basedir_positional: bool = False) -> None:
    parser.add_argument(
        "--config",
        help="YAML file with the keys of config.yaml, read instead of it (default: ./config.yaml when present); "
        "relative paths are relative to the working directory",
    )
    parser.add_argument("--raw-root", dest="raw_root", help="folder holding the raw downloads")
    if not basedir_positional:
        parser.add_argument("--data-basedir", dest="data_basedir", help="the canonical benchmark tree")
    parser.add_argument(
        "--results",
        type=Path,
        default=DEFAULT_RESULTS,
        help="workflow results folder (checksum and schema-check caches, reports); default ./results",
    )


def tree_options(parser: argparse.ArgumentParser) -> None:
    """Commands that read a DATA_BASEDIR given as their first argument."""
    parser.add_argument("data_basedir", metavar="DATA_BASEDIR")
    data_options(parser, basedir_positional=True)


def settings(args, require_raw: bool = True, basedir: str | None = None, raw_must_exist: bool = True, **values):
    """Settings of a command: --config, else ./config.yaml when present (as the workflow), then the options.

    `basedir`: 'read' or 'write' when the command needs DATA_BASEDIR to be a folder (and writable); `values`:
    config keys an option sets (None: not given), checked by the schema as the file's."""
    from preprocess.pipeline.settings import command_settings

    return command_settings(
        args.config,
        data_basedir=getattr(args, "data_basedir", None),
        raw_root=getattr(args, "raw_root", None),
        results=getattr(args, "results", None),
        require_raw=require_raw,
        basedir=basedir,
        raw_must_exist=raw_must_exist,
        **values,
    )


def output(settings, args, path: Path, option: str, names: tuple[str, ...] | None = None) -> None:
    """A file named on the command line for writing (with `names`: a folder, and the files written into it):
    not in the raw root, not a link, not a file of DATA_BASEDIR outside the results folder."""
    from preprocess.pipeline.settings import require_written

    require_written(settings, getattr(args, "results", None), Path(path), option, names)
