"""Chest ImaGenome's silver scene graphs (`<dicom_id>_SceneGraph.json`), read where they lie: as members of
silver_dataset/scene_graph.zip (never extracted: hundreds of thousands of files) or in an extracted folder (the
level that holds them: the caller finds it, ConversionContext.raw_content, since an unpacking may have put them
one level deeper, scene_graph/scene_graph/).

A scene graph holds the image's `patient_id`, `study_id` and `objects`: one per region with its `bbox_name`
and its box in the original image (`original_x1`, `original_y1`, `original_x2`, `original_y2`; null when the
region was not located).
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

from preprocess.errors import RawDataError
from preprocess.formats import textparse
from preprocess.formats.archive import MAX_MEMBER_BYTES, copies_by_name, read_member
from preprocess.formats.fsutil import open_regular

SUFFIX = "_SceneGraph.json"
BOX = ("original_x1", "original_y1", "original_x2", "original_y2")


class SceneGraphs:
    def __init__(self, path: Path, raw_file=None):
        """`path`: the zip, or the folder that holds the scene graphs; `raw_file` (ConversionContext.raw_file)
        judges each file of a folder before it is read (a link out of the raw root, a FIFO)."""
        self.path = path
        self._raw_file = raw_file or (lambda file: file)
        self._zip, self._pid, self._members, self._copies = None, None, None, {}

    def _archive(self) -> zipfile.ZipFile:
        """The zip, opened once per process: a forked helper must not share the parent's file position."""
        if self._pid != os.getpid():
            try:
                self._zip, self._pid = zipfile.ZipFile(self.path), os.getpid()
            except (OSError, zipfile.BadZipFile) as exc:
                raise RawDataError(f"{self.path}: not a readable zip ({exc}); download it again") from None
        return self._zip

    def members(self) -> dict[str, str]:
        """dicom id -> member name (zip) or file name (folder) of every scene graph."""
        if self._members is None:
            if self.path.is_dir():
                names = [n for n in os.listdir(self.path) if n.endswith(SUFFIX)]
            else:
                self._copies = copies_by_name(self._archive().infolist())  # a name held twice: every copy
                names = [n for n in self._copies if n.endswith(SUFFIX)]
            self._members = {n.rsplit("/", 1)[-1][: -len(SUFFIX)]: n for n in names}
        return self._members

    def read(self, dicom_id: str) -> dict | None:
        """The scene graph of one image; None when there is none."""
        name = self.members().get(dicom_id)
        if name is None:
            return None
        where = f"{self.path}: {name}"
        try:
            if self.path.is_dir():
                data = _read_bounded(self._raw_file(self.path / name), where)
            else:
                data = read_member(self._archive(), self.path, self._copies[name])
            graph = textparse.json_value(data, where)
        except textparse.TextError as exc:
            raise RawDataError(f"{exc}; download the scene graphs again") from None
        except (OSError, ValueError, zipfile.BadZipFile) as exc:
            raise RawDataError(f"{where}: unreadable scene graph ({exc}); download the scene graphs again") from None
        if not isinstance(graph, dict) or not isinstance(graph.get("objects", []), list):
            raise RawDataError(f"{where}: not a scene graph (no list of objects); is it the right file?")
        return graph

    def names(self) -> set[str]:
        """Every region name whose object has an original_x1 in any scene graph (reads them all), the names the
        reference numbers."""
        found = set()
        for dicom_id in self.members():
            objects = self.read(dicom_id).get("objects", [])
            found.update(o["bbox_name"] for o in objects if isinstance(o, dict) and o.get("original_x1") is not None)
        return found


def _read_bounded(path: Path, where: str) -> bytes:
    """A scene graph file's bytes, refused unread over the bound a zip member has (archive.MAX_MEMBER_BYTES)."""
    with open_regular(path) as handle:
        data = handle.read(MAX_MEMBER_BYTES + 1)
    if len(data) > MAX_MEMBER_BYTES:
        raise RawDataError(
            f"{where}: over {MAX_MEMBER_BYTES:,} bytes, not a scene graph; download the scene graphs again"
        )
    return data


def regions(graph: dict) -> dict[str, tuple]:
    """bbox_name -> its original box (values as stored) of the regions that have one; a name listed twice keeps
    its last object."""
    objects = {obj.get("bbox_name"): obj for obj in graph.get("objects", []) if isinstance(obj, dict)}
    return {
        name: tuple(obj[c] for c in BOX)
        for name, obj in objects.items()
        if name is not None and all(obj.get(c) is not None for c in BOX)
    }
