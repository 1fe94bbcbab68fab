"""The embedded demo: a tiny raw root, a tiny release tree and the config that builds them."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

import yaml

from preprocess.demo.folders import demo_writers, release_oracles
from preprocess.demo.release_images import write_release_images
from preprocess.errors import PreprocessError
from preprocess.rawdata.register import observed_files
from preprocess.registry import layout
from preprocess.registry.loader import extra_registry_dirs, load_registry

MARKER = ".medheb-demo"
# The demo's release tree as literal data: task JSONs (and Train_Data JSONL) in the benchmark's record shapes,
# whose image paths are written out by hand from the reference names, never produced by the naming code.
RELEASE = Path(__file__).parent / "release"
# An extra registry folder (MEDHEB_EXTRA_REGISTRY) gives the demo its subsets' data the same way, as files:
# EXTRA/demo/raw/<raw_dir>/... is copied into the demo's raw root, EXTRA/demo/release/... into DATA_BASEDIR.
EXTRA_DEMO = "demo"


def releases() -> list[Path]:
    """The folders of the demo's release files: its own, then each extra registry folder's that has one."""
    extras = [folder / EXTRA_DEMO / "release" for folder in extra_registry_dirs()]
    return [RELEASE, *(release for release in extras if release.is_dir())]


def fingerprint() -> str:
    """A digest of what the demo is made from (its helpers, the dataset folders' writers, release files and the
    registry; the files of the extra registry folders by name, size and modification time): a demo folder
    written by another version of the package, or from other extra files, is written again."""
    digest = hashlib.sha256()
    package = Path(__file__).parents[1]
    for path in sorted(
        [
            *Path(__file__).parent.rglob("*.py"),
            *RELEASE.rglob("*"),
            *package.glob("registry/*.yaml"),
            *package.glob("datasets/**/*.yaml"),
            *package.glob("datasets/**/*.py"),
        ]
    ):
        if path.is_file():
            digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes())
    for number, folder in enumerate(extra_registry_dirs()):
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                # An extra folder's files by name, size and time, never read: every command that checks the
                # demo fingerprints them, and the folder may hold gigabytes of the demo's raw data.
                info = path.stat()
                name = f"extra{number}/{path.relative_to(folder).as_posix()}"
                digest.update(f"{name}\0{info.st_size}\0{info.st_mtime_ns}\0".encode())
    return digest.hexdigest()


def _marker_text(release_images: bool, restricted_raw_only: bool = False) -> str:
    flags = (" --release-images" if release_images else "") + (" --restricted-raw-only" if restricted_raw_only else "")
    return f"written by python -m preprocess demo{flags}, version {fingerprint()}\n"


def is_current(directory: Path, release_images: bool | None = None, restricted_raw_only: bool = False) -> bool:
    """Whether `directory` holds a demo written by this version of the package (write_demo keeps it); with
    `release_images` True or False, also one written with (or without) the release's images and with (or
    without) `restricted_raw_only`."""
    marker = Path(directory) / MARKER
    if not marker.is_file():
        return False
    text = marker.read_text(encoding="utf-8")
    if release_images is not None:
        return text == _marker_text(release_images, restricted_raw_only)
    return text.split()[-1:] == [fingerprint()]


def require_demo(directory: Path) -> None:
    """Stop with what to run when the config builds the demo but its folder is absent or of another version."""
    if not is_current(directory):
        raise PreprocessError(
            f"the demo in {directory} is not written yet (or was written by another version): run "
            f"`python -m preprocess demo {directory}` first (`make demo` does both), or set demo: null for real data"
        )


def write_demo(
    directory: Path, force: bool = False, release_images: bool = False, restricted_raw_only: bool = False
) -> Path:
    """Write DIR/raw, DIR/DATA_BASEDIR (task JSONs only) and DIR/registry-overrides.yaml, atomically; an
    existing demo folder of this version (and of this choice of release images and raw downloads) is kept as
    it is.

    `release_images`: DATA_BASEDIR also gets what the real release ships beside its task files, the images
    of the demo's open subsets (preprocess/demo/release_images) and a LICENSE_NOTICE.md in each restricted
    subset's image folder. `restricted_raw_only`: the raw root then keeps only the downloads of the subsets
    the release does not redistribute (a user who downloaded the release and fetched only what it lacks)."""
    directory = Path(directory).resolve()
    if is_current(directory, release_images, restricted_raw_only) and not force:
        return directory
    if directory.exists() and any(directory.iterdir()) and not (directory / MARKER).exists():
        raise PreprocessError(f"{directory} exists and is not a demo folder; choose an empty or new folder")
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=directory.parent))
    try:
        _write(staging, release_images, restricted_raw_only)
        if directory.exists():
            shutil.rmtree(directory)
        os.replace(staging, directory)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return directory


def _write(out: Path, release_images: bool = False, restricted_raw_only: bool = False) -> None:
    registry = load_registry()
    raw_root, data_basedir = out / "raw", out / "DATA_BASEDIR"
    overrides = {}
    writers = demo_writers()  # each dataset folder's fakes.py, shipped then extra
    for source_id, writer in writers.items():
        source = registry.source(source_id)
        writer(layout.raw_dir(raw_root, source))
        overrides[source_id] = {"files": observed_files(source, raw_root)[0]}
    extras = [folder / EXTRA_DEMO for folder in extra_registry_dirs()]
    for extra in extras:
        if (extra / "raw").is_dir():
            shutil.copytree(extra / "raw", raw_root, dirs_exist_ok=True)
    for source_id, source in registry.sources.items():  # a source whose raw folder an extra gave
        if source_id not in writers and any((extra / "raw" / source.raw_dir).is_dir() for extra in extras):
            overrides[source_id] = {"files": observed_files(source, raw_root)[0]}
    (out / "registry-overrides.yaml").write_text(
        "# The demo's own expectations: its copies are tiny, so counts and MD5s differ from the real ones.\n"
        + yaml.safe_dump({"sources": overrides}, sort_keys=True),
        encoding="utf-8",
    )
    for release in releases():
        for path in sorted(release.rglob("*.json*")):  # the literal task JSONs and Train_Data JSONL
            target = data_basedir / path.relative_to(release)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    if release_images:
        write_release_images(raw_root, data_basedir, registry, release_oracles())
    if restricted_raw_only:
        keep_restricted_raw(raw_root, registry)
    (out / MARKER).write_text(_marker_text(release_images, restricted_raw_only), encoding="utf-8")


def restricted_sources(registry) -> set[str]:
    """The sources of the subsets whose images the release does not redistribute (`redistributed: false`)."""
    return {source for subset in registry.subsets if not subset.redistributed for source in subset.source_ids}


def keep_restricted_raw(raw_root: Path, registry) -> None:
    """Remove every download from the demo's raw root but the restricted subsets' sources' (the release's
    images, written before from the full raw root, stay)."""
    keep = {registry.sources[source].raw_dir for source in restricted_sources(registry)}
    for folder in sorted(Path(raw_root).iterdir()):
        if folder.name not in keep:
            shutil.rmtree(folder)
