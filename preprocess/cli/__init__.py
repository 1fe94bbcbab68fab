"""`python -m preprocess`: the same functions the Snakemake rules call, for one subset or one source."""

from __future__ import annotations

import argparse
import os
import sys

from preprocess.cli import (
    cmd_attest,
    cmd_check,
    cmd_convert,
    cmd_demo,
    cmd_download,
    cmd_eval_config,
    cmd_info,
    cmd_list,
    cmd_need,
    cmd_plan,
    cmd_register,
    cmd_slice,
    cmd_status,
    cmd_validate,
)
from preprocess.errors import PreprocessError
from preprocess.pipeline.interrupts import INTERRUPTED, interrupt_in_parent_only

# command: its module (HELP, arguments(parser), run(args) -> exit status), one module a command
COMMANDS = {
    "list": cmd_list,
    "info": cmd_info,
    "check": cmd_check,
    "need": cmd_need,
    "download": cmd_download,
    "convert": cmd_convert,
    "plan": cmd_plan,
    "validate": cmd_validate,
    "attest": cmd_attest,
    "slice": cmd_slice,
    "status": cmd_status,
    "eval-config": cmd_eval_config,
    "demo": cmd_demo,
    "register": cmd_register,
}

# Exit statuses besides a command's own 0 and 1.
ERROR = 2  # a clear error: the line says which file and what to do
INTERRUPTED_STATUS = 130  # Ctrl-C, as a shell reports SIGINT
CLOSED_PIPE = 141  # `| head` closed standard output, as a shell reports SIGPIPE

# Commands that only read a tree: they use a results folder's caches when it exists, and never create one.
READ_ONLY = ("validate", "status", "eval-config", "plan")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("medheb-preprocess")
    except PackageNotFoundError:  # run from a source tree that is not installed
        return "unknown (not installed)"


class _VersionAction(argparse.Action):
    """`--version`, whose text is looked up only when asked for (importlib.metadata is slow to import)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest, nargs=0, default=default, help=help or "print the version and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        sys.stdout.write(f"medheb-preprocess {_version()}\n")
        parser.exit()


def build_parser(prog: str = "python -m preprocess") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, module in COMMANDS.items():
        command = sub.add_parser(name, help=module.HELP)
        module.arguments(command)
        command.set_defaults(func=module.run)
    return parser


def main(argv=None, prog: str = "python -m preprocess") -> int:
    args = build_parser(prog).parse_args(argv)
    interrupt_in_parent_only()
    if args.command in READ_ONLY and not args.results.is_dir():
        args.results = None
    try:
        code = args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
        return code
    except PreprocessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return ERROR
    except KeyboardInterrupt:
        print(f"\n{INTERRUPTED}", file=sys.stderr)
        return INTERRUPTED_STATUS
    except BrokenPipeError:  # `| head` closed the pipe: what was wanted is printed
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return CLOSED_PIPE
    except OSError as exc:  # outside any item: a full disk, a read-only or missing folder
        print(
            f"error: {exc.strerror or exc}: {exc.filename or ''}; make room, fix the permissions or the path, "
            "then run again (finished files are kept)",
            file=sys.stderr,
        )
        return ERROR
    except Exception as exc:  # a fault no check names yet: one line, the traceback only on request
        if os.environ.get("MEDHEB_TRACEBACK"):
            raise
        print(
            f"error: unexpected {type(exc).__name__}: {exc}; please report it (MEDHEB_TRACEBACK=1 shows where "
            "it happened)",
            file=sys.stderr,
        )
        return ERROR


def run() -> None:
    """The `medheb` console script."""
    sys.exit(main(prog="medheb"))
