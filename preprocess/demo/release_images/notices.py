"""The placeholder the release leaves in each image folder it may not redistribute (the benchmark card's
list of ten), in our own words: what is missing, why, where to get it and how to rebuild it."""

from __future__ import annotations


def restricted(registry) -> dict[str, str]:
    """subset -> the folder under DATA_BASEDIR that holds its placeholder: the registry's subsets that the
    release does not redistribute (`redistributed: false`, the card's list), the first two parts of each root."""
    return {
        subset.key: "/".join(subset.image_root.split("/")[:2])
        for subset in registry.subsets
        if not subset.redistributed and subset.image_root
    }


NOTICE = "LICENSE_NOTICE.md"


def notice(subset, registry) -> str:
    """The text of the subset's placeholder, its sources' names, licences and pages taken from the registry."""
    sources = [registry.sources[ref.source] for ref in subset.sources]
    lines = [f"- {s.name}: {s.licence}; get it from {s.homepage}" for s in sources]
    return "\n".join(
        [
            f"# {subset.folder}: images not included",
            "",
            "This folder holds no images on purpose. The terms under which the upstream data is shared do not",
            "allow this release to pass its images on, so only the task files are here",
            f"({subset.key}/), to show what the benchmark asks of them.",
            "",
            "Upstream data:",
            *lines,
            "",
            "Accept those terms and download the data yourself, then rebuild this folder from your own copy with",
            f"the preprocessing pipeline: `python -m preprocess convert {subset.key}`, or the whole workflow",
            "(`snakemake --cores 4`).",
            "",
        ]
    )
