"""A raw file the build needs that the upstream does not publish (sources.yaml `unpublished`: ROCO-QA's two Valid
shards, which only the benchmark's own script names). Its absence is no download left undone: `check` and
`info` say so in these words, with the subsets it blocks, whether the release ships their images (then the
build takes those and needs no raw file), and what would unblock a build from the raw files."""

from __future__ import annotations

from preprocess.registry.model import TRAIN, FileSpec, Registry, Source


def blocked(registry: Registry, source: Source, spec: FileSpec) -> list:
    """The subsets a build of which needs `spec` (of the splits it builds; a train-only file, their train split)."""
    found = []
    for subset in registry.subsets:
        if subset.is_text or source.id not in subset.source_ids:
            continue
        if any(s.id == spec.id for s in registry.files_needed(subset)[source.id]):
            found.append(subset)
    return found


def note(registry: Registry, source: Source, spec: FileSpec) -> str:
    """Why `spec` is absent, what it blocks and what would unblock it, in one paragraph (no raw root needed)."""
    subsets = blocked(registry, source, spec)
    one = len(subsets) == 1
    if spec.split == TRAIN:
        which = f"{'its' if one else 'their'} train split, built with splits: all"
    else:
        which = "every split it builds" if one else "every split they build"
    text = f"{spec.unpublished['evidence']}. It blocks {', '.join(s.key for s in subsets) or 'no subset'} ({which})"
    shipped = [s.key for s in subsets if s.redistributed]
    if shipped:
        commands = "; ".join(f"medheb download release --subset {key}" for key in shipped)
        what = "what the release holds of the train images" if spec.split == TRAIN else "the release ships the images"
        text += (
            f"; {what} of {', '.join(shipped)} ({commands}): with them in DATA_BASEDIR the build takes them as they "
            "are and needs no raw file"
        )
    return f"{text}. To build from the raw files instead: {spec.unpublished['unblock']}"
