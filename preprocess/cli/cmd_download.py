"""`download SOURCE...`: a source's needed files into the raw root; `download release`: the release into
DATA_BASEDIR."""

from __future__ import annotations

from preprocess.cli.options import data_options, settings
from preprocess.errors import PreprocessError

HELP = "fetch those files of open and Hugging Face sources into the raw root; `download release`: the release"
RELEASE_OPTIONS = ("repo", "revision", "include", "subset")


def arguments(p) -> None:
    p.add_argument(
        "source", nargs="+", help="source ids (see `list`): their needed files into the raw root; or `release`: the "
        "benchmark's release from Hugging Face into DATA_BASEDIR (the options below)",
    )  # fmt: skip
    data_options(p)
    release = p.add_argument_group(
        "download release",
        "Without --include or --subset: the task files (2D_Task/, 3D_Task/, Text_Task/) and Train_Data/ only, no "
        "image (most of the release's size). A file already in DATA_BASEDIR is never replaced; one with other "
        "bytes is listed, and the command exits 1.",
    )
    release.add_argument(
        "--repo", help="the release's Hugging Face dataset, owner/name (default: the config's release_repo, "
        "itself by default the public reviewer sample)",
    )  # fmt: skip
    release.add_argument("--revision", help="a branch, tag or commit of it (default: main)")
    release.add_argument(
        "--include", action="append", default=[], metavar="PATTERN", help="files to fetch, as huggingface_hub's "
        "allow_patterns ('*' crosses '/'), e.g. 'Train_Data/**'; repeatable",
    )  # fmt: skip
    release.add_argument(
        "--subset", action="append", default=[], metavar="KEY", help="a subset's task files, Train_Data files and "
        "images (e.g. APTOS or 2D_Task/APTOS); repeatable",
    )  # fmt: skip


def run(args) -> int:
    from preprocess.pipeline import rawdata

    if "release" in args.source:
        return _release(args)
    given = [f"--{name}" for name in RELEASE_OPTIONS if getattr(args, name)]
    if given:
        raise PreprocessError(f"{', '.join(given)}: options of `medheb download release` only")
    chosen = settings(args, raw_must_exist=False)
    rawdata.download_sources(chosen, chosen.registry(), args.source, args.results, args.config)
    return 0


def _release(args) -> int:
    """The release's files into DATA_BASEDIR: exit 1 when files already there with other bytes were kept."""
    from preprocess.pipeline import rawdata

    if args.source != ["release"]:
        others = " ".join(name for name in args.source if name != "release")
        raise PreprocessError(
            f"`release` is downloaded by itself: run `medheb download release`, then `medheb download {others}`"
        )
    chosen = settings(args, require_raw=False, basedir="write", raw_must_exist=False, release_repo=args.repo)
    return rawdata.download_release(chosen, chosen.registry(), args.subset, args.include, args.revision)
