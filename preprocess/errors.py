"""One error family: every message says what failed, where, and what to do."""

import sys
from typing import NoReturn


class PreprocessError(Exception):
    """Base of every error this package raises on purpose."""


class RegistryError(PreprocessError):
    """The registry (or an override file) does not match its schema or refers to unknown names."""


class ConfigError(PreprocessError):
    """config.yaml or a --config file is invalid."""


class RawDataError(PreprocessError):
    """A raw download is missing, incomplete, corrupt or unreadable."""


class OutputConflictError(PreprocessError):
    """DATA_BASEDIR already holds a different file where the pipeline would write."""


class OutputWriteError(PreprocessError):
    """An output cannot be written into DATA_BASEDIR (a full disk, a read-only folder): the job stops."""


class UnsafePathError(PreprocessError):
    """A path from a JSON, CSV or archive points outside the folder it must stay in."""


QUOTED_CHARACTERS = 80  # of a name the user gave, quoted in a message: a name is a few dozen characters


def quoted(value, most: int = QUOTED_CHARACTERS) -> str:
    """The repr of a value the user gave (a subset name, a config key), cut to its first `most` characters
    with its length said: a message quotes a name of a million characters by its start, on one short line."""
    if not isinstance(value, str):
        return repr(value)  # a number or a boolean (a YAML key): short
    if len(value) <= most:
        return repr(value)
    return f"{value[:most]!r}... ({len(value):,} characters)"


def did_you_mean(name: str, candidates) -> str:
    """A ' (did you mean ...?)' hint, or an empty string."""
    import difflib

    close = difflib.get_close_matches(name, list(candidates), n=3, cutoff=0.6)
    return f" (did you mean {', '.join(close)}?)" if close else ""


def stop_workflow(error: Exception) -> NoReturn:
    """End a Snakemake run on a configuration error found while the Snakefile is read, with the error's message
    alone: raised as a WorkflowError, Snakemake adds the Snakefile's name, line and a traceback line, which say
    nothing about the user's config."""
    sys.exit(f"Error: {error}")
