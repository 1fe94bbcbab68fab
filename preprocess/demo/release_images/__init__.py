"""The demo's release images: what the benchmark's release ships for the demo's open subsets, made from the
demo's raw files by an independent statement of each reference rule (the benchmark's scripts, as
docs/conversions/ describes them), never by the pipeline's conversions, and a LICENSE_NOTICE.md in each image
folder the release may not redistribute.

No module here imports preprocess.convert, preprocess.volumes or preprocess.formats (a test parses the
imports): a rebuild compared with these files compares two statements of each rule. PNGs are saved with
Pillow (outputs.py), so their bytes differ from the pipeline's while their pixels must not.

A release file is written where the demo's release records (its task JSONs and Train_Data JSONLs) name it,
as the real release's images are the ones its records resolve to; a named path of a shipped subset that its
oracle does not make stops the demo, naming it.
"""

from __future__ import annotations

from pathlib import Path

from preprocess.demo.release_images import notices, records
from preprocess.demo.release_images.outputs import write
from preprocess.errors import PreprocessError


def not_shipped(registry, left_out: dict[str, str]) -> dict[str, str]:
    """Why the release ships no images for the rest of the registry's image subsets (text subsets have none),
    given the subsets the demo leaves out (demo/folders.py left_out)."""
    return {
        **{
            key: "restricted: the card's placeholder, LICENSE_NOTICE.md, instead"
            for key in notices.restricted(registry)
        },
        **{key: f"left out of the demo: {why}" for key, why in left_out.items()},  # no raw data, no task files
    }


def subset_folder(subset) -> str:
    """The folder under DATA_BASEDIR that holds all of a subset's images: the first two parts of its root."""
    return "/".join(Path(subset.image_root).parts[:2])


def write_release_images(raw_root: Path, data_basedir: Path, registry, oracles: dict) -> dict[str, int]:
    """Write the release's images of the subsets `oracles` names (subset key -> oracle: the dataset folders'
    RELEASE_IMAGES, demo/folders.py) and the restricted folders' notices into DATA_BASEDIR (whose release files
    are in place); returns the count of files per subset."""
    named = records.named(data_basedir, registry)
    paths = {one.path for one in named}

    def raw(source_id: str) -> Path:  # the source's folder under the raw root, as the registry names it
        return Path(raw_root) / registry.sources[source_id].raw_dir

    counts = {}
    for key, oracle in oracles.items():
        made = oracle(raw, named)
        wanted = sorted(p for p in paths if p.startswith(subset_folder(registry.subset(key)) + "/"))
        unmade = [p for p in wanted if p not in made]
        if unmade:
            raise PreprocessError(
                f"the demo's release names {len(unmade)} {key} file(s) that its oracle does not make, such as "
                f"{unmade[0]}: fix preprocess/demo/release_images or the demo's release records"
            )
        for name in wanted:
            write(data_basedir, name, made[name]())
        counts[key] = len(wanted)
    for key, folder in notices.restricted(registry).items():
        write(data_basedir, f"{folder}/{notices.NOTICE}", notices.notice(registry.subset(key), registry).encode())
    return counts
