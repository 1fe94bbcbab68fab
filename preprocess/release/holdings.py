"""What DATA_BASEDIR already holds of a subset before a build: the images its release records name that are in
place, and whether this pipeline wrote them.

The benchmark's release ships the images of every subset but the ten it may not redistribute (the registry's
`release: restricted`); a subset whose named images are all in place and that no manifest of ours lists is
*from the release*: it is validated, never rebuilt unless the config says `build: all`, and its raw download
is not asked for."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from preprocess.registry import splits
from preprocess.registry.layout import shard_manifests
from preprocess.release import releasenames

FROM_RELEASE = "from the release"
ABSENT = "images absent"  # the end of a partly present subset's plan reason
NOT_NEEDED = (
    "every image its records name is in DATA_BASEDIR, so none of its raw files is needed (build: all rebuilds it)"
)
TEXT_ONLY = "a text subset: its task files are the release's, validated as they are, and no raw file is read"


@dataclass(frozen=True)
class Presence:
    named: int  # image paths the subset's release records name (the splits the build asks for)
    present: int  # of them, those in DATA_BASEDIR
    ours: bool  # a manifest of ours in the results folder lists outputs of the subset

    @property
    def complete(self) -> bool:
        return self.named > 0 and self.present == self.named

    @property
    def from_release(self) -> bool:
        return self.complete and not self.ours

    def absent_text(self) -> str:
        """'N of M images absent', for a subset partly in place."""
        return f"{self.named - self.present} of {self.named} {ABSENT}"


def presence(registry, subset, settings, results: Path | None) -> Presence:
    """Count the subset's named images that are in DATA_BASEDIR (a file there, links followed: the MIMIC-CXR
    links count when their targets exist). Records that cannot be read name nothing here: the build's release
    check says what is wrong with them."""
    data_basedir = Path(settings.data_basedir)
    paths = {path for record in releasenames.task_records(data_basedir, subset) for path in record.paths}
    if splits.wanted(settings, subset) == splits.ALL:
        train = releasenames.train_records(data_basedir, registry, subset)
        paths |= {path for record in train for path in record.paths}
    present = sum(os.path.isfile(data_basedir / path) for path in paths)
    return Presence(len(paths), present, bool(shard_manifests(results, subset)))


def taken_from_release(registry, subset, settings, results: Path | None) -> bool:
    """Whether a build with these settings leaves the subset as the release has it, needing none of its raw
    data: redistributed, every named image in place, none written by us, and `build: missing`."""
    if settings.build != "missing" or subset.is_text or not subset.redistributed:
        return False
    return presence(registry, subset, settings, results).from_release


def released_subsets(registry, settings, results: Path | None) -> set[str]:
    """The selected subsets a build takes from the release (taken_from_release)."""
    chosen = registry.select(settings.subsets)
    return {subset.key for subset in chosen if taken_from_release(registry, subset, settings, results)}
