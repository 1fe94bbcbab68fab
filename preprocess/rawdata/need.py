"""The raw files a build reads, from the release's own records (`medheb need`): the download narrowed to them.

The task JSONs and Train_Data JSONLs under DATA_BASEDIR name every image the benchmark uses; a conversion's
`raw_file` (its entry in subsets.yaml) turns such an image path back into the raw file it is made from:
- a slice or DRR folder names its scan, and the scan its volume (CT-RATE, RadGenome-ChestCT); the query image
  names the DICOM (VinDr-CXR): `path`, a template of the record's fields;
- a crop's image id is the name of a JPEG the subset's symlink farm links (Chest ImaGenome on MIMIC):
  `farm_name`;
- symlink_farm (MIMIC-CXR-JPG, CheXpert Plus) needs none: the farm links whole folders (`files`,
  `p10`..`p19`), so a record path under a link is the raw path under the link's target.
The files a source's conversions read whole (an npz, a parquet, an annotation CSV, a split table) are its
`path` entries in sources.yaml; a conversion without `raw_file`, or a side whose records are absent, keeps its
globs (the whole download of that part), and the result says so.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from preprocess.formats import unpacked
from preprocess.formats.rawroot import Boundary
from preprocess.registry import layout, splits
from preprocess.registry.model import Conversion, Registry, Source, Subset
from preprocess.release import holdings, releasenames, trainlist


@dataclass
class Need:
    """What one source must hold for the selected subsets and splits."""

    source: Source
    files: set[str] = field(default_factory=set)  # exact paths, relative to the source's raw folder
    patterns: set[str] = field(default_factory=set)  # globs of parts no record narrows (the whole part)
    notes: list[str] = field(default_factory=list)  # why a part is not narrowed

    def lines(self) -> list[str]:
        """The list `medheb need` prints: exact paths, then the globs of the parts taken whole."""
        return sorted(self.files) + sorted(self.patterns)


def _template_pattern(template: str) -> re.Pattern:
    """A template as a pattern of the names it makes; the field `path` (a folder path) may span folders."""
    return re.compile(trainlist.template_pattern(template).pattern.replace("(?P<path>[^/]+?)", "(?P<path>.+)"))


def named_paths(settings, registry: Registry, subset: Subset) -> list[str]:
    """Every image path the release's records name for the subset (test, and train with splits: all), relative
    to DATA_BASEDIR, normalised."""
    data_basedir = Path(settings.data_basedir)
    sides = [releasenames.TEST] + ([releasenames.TRAIN] if splits.wanted(settings, subset) == splits.ALL else [])
    found: dict[str, None] = {}
    for side in sides:
        for record in releasenames.named_records(data_basedir, registry, subset, side):
            found.update(dict.fromkeys(record.paths))
    return list(found)


def _under(paths: list[str], folder: str) -> list[str]:
    """The paths under `folder` (relative to DATA_BASEDIR), relative to it."""
    top = posixpath.normpath(folder) + "/"
    return [p[len(top) :] for p in paths if p.startswith(top)]


def _farm_files(conversion: Conversion, relative: list[str]) -> set[str]:
    """The raw paths behind the farm's links: `p10/x.jpg` under the link p10 -> files/p10 is files/p10/x.jpg."""
    links = conversion.params["links"]
    found = set()
    for path in relative:
        head, _, rest = path.partition("/")
        if head in links and rest:
            found.add(posixpath.normpath(f"{links[head]}/{rest}"))
        elif "." in links:
            found.add(posixpath.normpath(f"{links['.']}/{path}"))
    return found


def _record_fields(conversion: Conversion, relative: list[str], pattern_of) -> list[dict]:
    """The fields of each record path one of the templates `raw_file.from` names could have made (a template
    of a ...folder parameter names the file's folder), in a split the conversion builds; with the fields
    `raw_file.derive` makes from them (each a field, then re.sub substitutions in turn)."""
    wanted_splits = conversion.params.get("splits")
    derive = conversion.raw_file.get("derive") or {}
    found = []
    for name in conversion.raw_file["from"]:
        template = conversion.params.get(name)
        if not isinstance(template, str):
            continue
        pattern = pattern_of(template)
        for path in relative:
            match = pattern.fullmatch(posixpath.dirname(path) if name.endswith("folder") else path)
            if match and (wanted_splits is None or match.groupdict().get("split", wanted_splits[0]) in wanted_splits):
                fields = match.groupdict()
                for field_name, rule in derive.items():
                    value = fields[rule["field"]]
                    for old, new in rule["sub"]:
                        value = re.sub(old, new, value)
                    fields[field_name] = value
                found.append(fields)
    return found


def _raw_files(conversion: Conversion, relative: list[str]) -> set[str]:
    """`raw_file.path` filled with the fields of each record path the conversion's templates could have made."""
    template = conversion.raw_file["path"]
    return {template.format(**fields) for fields in _record_fields(conversion, relative, _template_pattern)}


def _farm_names(conversion: Conversion, relative: list[str], farm: set[str]) -> tuple[set[str], int]:
    """The files of the farm whose name (without suffix) is `raw_file.farm_name` filled with a record path's
    fields (a crop's image id is a MIMIC JPEG's name); and how many names no record path under the farm gives."""
    by_name = {PurePosixPath(p).stem: p for p in farm}
    names = set()
    for fields in _record_fields(conversion, relative, trainlist.template_pattern):
        try:
            names.add(conversion.raw_file["farm_name"].format(**fields))
        except KeyError:  # a record path the template makes without the field the name needs
            continue
    return {by_name[n] for n in names if n in by_name}, len([n for n in names if n not in by_name])


def _conversion_sources(subset: Subset, conversion: Conversion) -> list[str]:
    named = conversion.params.get("source")
    return [named] if named else list(subset.source_ids)


def needs(settings, registry: Registry, source_ids: list[str], results=None) -> dict[str, Need]:
    """The need of each source, for the subsets and splits `settings` selects; a subset the build takes from
    the release (its images in DATA_BASEDIR, `results` holding none of our manifests for it; a text subset,
    its task files alone) needs nothing."""
    result = {sid: Need(registry.source(sid)) for sid in source_ids}
    for subset in registry.select(settings.subsets):
        users = [sid for sid in subset.source_ids if sid in result]
        if not users:
            continue
        if subset.is_text or holdings.taken_from_release(registry, subset, settings, results):
            why = holdings.TEXT_ONLY if subset.is_text else holdings.NOT_NEEDED
            for sid in users:
                result[sid].notes.append(f"{subset.key}: {holdings.FROM_RELEASE}: {why}")
            continue
        named = named_paths(settings, registry, subset) if subset.image_root else []
        # a farm's links and a crop's names are relative to the image root; slice folders to the subset's folder
        in_root = _under(named, subset.image_root) if named else []
        in_subset = _under(named, "/".join(PurePosixPath(subset.image_root).parts[:2])) if named else []
        # (source, split) -> a raw_file covers that split's images of the source here: True, with records naming some
        narrowed: dict[tuple[str, str], bool] = {}
        conversions = splits.conversions(settings, subset)
        farm = {f for c in conversions if c.kind == "symlink_farm" for f in _farm_files(c, in_root)}
        for conversion in conversions:
            targets = _conversion_sources(subset, conversion)
            if conversion.kind == "symlink_farm":
                files = _farm_files(conversion, in_root)
            elif conversion.raw_file and "path" in conversion.raw_file:
                files = _raw_files(conversion, in_root if conversion.kind == "annotation_crop" else in_subset)
            elif conversion.raw_file:
                files, unresolved = _farm_names(conversion, in_root, farm)
                targets = [
                    sid for c in conversions if c.kind == "symlink_farm" for sid in _conversion_sources(subset, c)
                ]
                for sid in targets if unresolved else ():
                    if sid in result:
                        result[sid].notes.append(f"{subset.key}: {unresolved} {conversion.raw_file['unmatched']}")
            else:
                continue
            for sid in targets:
                if sid in result:
                    result[sid].files |= files
                    where = (sid, conversion.split)
                    narrowed[where] = narrowed.get(where, False) or bool(files)
        for sid in users:
            _add_specs(result[sid], registry, settings, subset, narrowed)
    return result


def _add_specs(need: Need, registry: Registry, settings, subset: Subset, narrowed: dict) -> None:
    """The source's files the subset reads whole (its `path` entries) and, where no record narrows a split's
    images, that split's globs (`narrowed`: (source, split) -> whether records named some of them)."""
    for spec in splits.files(registry, settings, subset).get(need.source.id, ()):
        covered = narrowed.get((need.source.id, spec.split))
        if spec.paths:
            need.files.add(spec.paths[0])
        elif not covered:
            need.patterns.add(spec.glob)
            if covered is False:
                need.notes.append(
                    f"{subset.key}: no release record under DATA_BASEDIR names the files of {spec.glob}, so the "
                    "whole of it is listed; put the benchmark release in DATA_BASEDIR to narrow it"
                )


def whole_count(source: Source) -> int:
    """The files of the whole download as the registry knows them (each glob at its minimum count)."""
    return sum(spec.min_count if spec.glob else 1 for spec in source.files)


def _placed(source: Source, raw_root: Path) -> Callable[[str], Path]:
    """Where a needed path lies in this copy: a file a spec names first (`_add_specs`), where the copy holds
    another of its names (the extracted scene_graph/ for scene_graph.zip); under a folder whose content was
    unpacked one level deeper (CheXpert Plus's PNG/PNG/train/...; formats/unpacked.py), there; else where the
    registry says (under the project folder a whole-project download adds, when it is there: layout.raw_dir)."""
    base = layout.raw_dir(Path(raw_root), source)
    boundary, moved, other = Boundary(raw_root, base), {}, {}
    for spec in source.files:
        held = [p for p in spec.paths if os.path.lexists(base / p)]
        if held and held[0] != spec.paths[0]:
            other[spec.paths[0]] = base / held[0]
        for folder in (spec.glob_folder, *spec.paths) if spec.holds else ():
            if folder and os.path.isdir(base / folder):
                found, _ = unpacked.content_folder(base / folder, spec.holds, boundary)
                moved[folder + "/"] = found or base / folder

    def place(path: str) -> Path:
        top = next((folder for folder in moved if path.startswith(folder)), None)
        return other.get(path) or (moved[top] / path[len(top) :] if top else base / path)

    return place


def present(need: Need, raw_root: Path) -> tuple[list[str], list[str], int]:
    """(present, missing, bytes present) of the exact paths of a need under the raw root."""
    place = _placed(need.source, raw_root)
    have, lack, size = [], [], 0
    for path in sorted(need.files):
        try:
            size += os.stat(place(path)).st_size
            have.append(path)
        except OSError:
            lack.append(path)
    return have, lack, size


def summary(need: Need, raw_root: Path | None) -> str:
    """One line: how many files, their bytes where present, against the whole download."""
    text = f"{need.source.id}: {len(need.files)} files"
    if need.patterns:
        text += f" and {len(need.patterns)} patterns taken whole"
    if raw_root is not None and Path(raw_root, need.source.raw_dir).is_dir():
        have, _, size = present(need, raw_root)
        text += f" ({len(have)} present here, {_size(size)})"
    return text + f"; the whole download: at least {whole_count(need.source)} files by the registry's counts"


def _size(count: int) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if count < 1000:
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1000
    return f"{count:.1f} TB"


def check_lines(needs_found: dict[str, Need], raw_root: Path, results: Path | None, shown: int = 5) -> list[str]:
    """`check`'s count against the need lists: per source, needed files present and missing (the first few
    here, all of them in results/need/<source>-missing.txt, which a source with none missing has not)."""
    from preprocess.formats.fsutil import atomic_write_text

    lines = []
    for sid, found in needs_found.items():
        have, lack, _ = present(found, raw_root)
        whole = f", {len(found.patterns)} patterns taken whole" if found.patterns else ""
        lines.append(f"  {sid}: {len(have)} of {len(found.files)} needed files present{whole}")
        target = layout.need_missing(results, sid) if results is not None else None
        if target is not None and lack:
            atomic_write_text(target, "".join(f"{path}\n" for path in lack))
        elif target is not None and target.exists():
            target.unlink()
        unpublished = {path for spec in found.source.files if spec.unpublished for path in spec.paths}
        for path in lack[:shown]:
            said = " (not published upstream: the check above says what it blocks)" if path in unpublished else ""
            lines.append(f"    missing {path}{said}")
        if len(lack) > shown:
            lines.append(f"    ... and {len(lack) - shown} more" + (f": all in {target}" if target else ""))
    return lines
