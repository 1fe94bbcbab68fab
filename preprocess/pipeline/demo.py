"""`demo`: the embedded demo (a tiny raw root and release tree), or the real-size fakes, written to a folder."""

from __future__ import annotations

from pathlib import Path

from preprocess.demo import is_current, write_demo


def write(directory, force: bool = False, release_images: bool = False, restricted_raw_only: bool = False) -> str:
    """Write the demo into `directory` (kept when this version wrote it, unless `force`); the line saying so."""
    only = restricted_raw_only
    kept = is_current(Path(directory), release_images, only) and not force
    out = write_demo(Path(directory), force, release_images, only)
    where = f"raw root {out / 'raw'}, release tree {out / 'DATA_BASEDIR'}"
    if release_images:
        from preprocess.demo.folders import release_oracles
        from preprocess.demo.release_images import notices
        from preprocess.registry.loader import load_registry

        shipped = len(release_oracles())
        where += (
            f" (with the release's images of {shipped} open subsets and a {notices.NOTICE} in each of the "
            f"{len(notices.restricted(load_registry()))} restricted image folders)"
        )
    if only:
        where += "; the raw root holds only the restricted subsets' downloads"
    if kept:
        return f"demo in {out} kept as it is (this version wrote it; --force writes it again): {where}"
    return f"demo written to {out}: {where}"


def write_real_sizes(directory, items: int, sources=None, full_counts: bool = False) -> str:
    """The demo plus `items` items a source at the upstream's real sizes (demo/real.py); the line saying so."""
    from preprocess.demo.real import write_real

    out = write_real(Path(directory), items, sources, full_counts=full_counts)
    return f"real-size fakes written to {out}: {items} items a source; config {out / 'config.yaml'}"
