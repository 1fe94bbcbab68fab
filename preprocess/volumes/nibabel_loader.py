"""nibabel, imported without pydicom.

nibabel's NIfTI module imports pydicom whenever it is installed (to expose DICOM header extensions as
datasets), and pydicom's pixel decoders make up most of nibabel's import time. Volume jobs never read header
extensions; without pydicom nibabel keeps them as raw bytes and reads voxels, affines and zooms the same. The
import is paid once per process, in every worker of a volume job, so it weighs on short jobs and on the
speed-up of several workers.
"""

from __future__ import annotations

import sys


def nibabel():
    """The nibabel package; pydicom is hidden from it only when this process has not imported pydicom."""
    if "nibabel" in sys.modules:
        return sys.modules["nibabel"]
    hide = "pydicom" not in sys.modules
    if hide:
        sys.modules["pydicom"] = None  # an import of pydicom raises ImportError while nibabel loads
    try:
        import nibabel as nib
    finally:
        if hide:
            del sys.modules["pydicom"]
    return nib
