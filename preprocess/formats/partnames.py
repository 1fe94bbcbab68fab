"""The pipeline's names for its temporary files, shared by the conversions (convert/outputs.py) and the
downloads (rawdata/partfile.py), in a module that imports nothing heavy: `.<name>.medheb-<tag>.part`, hidden
and marked as the pipeline's, so that no file of anyone else's matches."""

from __future__ import annotations

PART_MARK = "medheb-"


def is_part_name(name: str, tag: str | None = None) -> bool:
    """Is `name` a temporary name the pipeline writes (of the job `tag`; None: of any job)?"""
    if not (name.startswith(".") and name.endswith(".part")):
        return False
    stem = name[1 : -len(".part")]
    mark = stem.rfind(f".{PART_MARK}")
    return mark > 0 and (tag is None or stem[mark + 1 + len(PART_MARK) :] == tag)
