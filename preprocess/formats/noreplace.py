"""Rename without replacing: Linux's renameat2(RENAME_NOREPLACE), one system call that moves a finished
temporary file to its name, or fails when anything (a file, a link, a folder) already has that name.

The output writer uses it in the folders its job made (outputs.py): there a name is almost always free, and
this saves the look at the name that the plain rename needs first (about as costly as the rename itself, once
per output file; issue 50 brought MedMNIST's 28 px unpacking near the cost of creating its files). Python's
os module has no binding for it, hence ctypes. Where the C library lacks it (not glibc 2.28 or later, not
Linux) or the file system cannot honour the flag (EINVAL, ENOSYS or EOPNOTSUPP: NFS, some FUSE file systems),
`rename` answers None, from then on in this process, and the writer looks first as everywhere else.
"""

from __future__ import annotations

import ctypes
import errno
import os

_AT_FDCWD = -100  # paths relative to the working directory, as os.rename takes them
_RENAME_NOREPLACE = 1
_UNSUPPORTED = (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP)


def _bind():
    """The C library's renameat2, or None where there is none."""
    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return None
    function.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    function.restype = ctypes.c_int
    return function


_STATE = {"renameat2": _bind()}


def available() -> bool:
    """Can `rename` be tried (as far as this process knows)?"""
    return _STATE["renameat2"] is not None


def rename(source: str, target: str) -> bool | None:
    """Move `source` to `target` unless something is at `target`: True when moved, False when the name is taken
    (`source` stays where it is), None when this system cannot tell (nothing moved). Any other failure raises
    OSError naming both paths, as os.rename does."""
    function = _STATE["renameat2"]
    if function is None:
        return None
    if function(_AT_FDCWD, os.fsencode(source), _AT_FDCWD, os.fsencode(target), _RENAME_NOREPLACE) == 0:
        return True
    code = ctypes.get_errno()
    if code == errno.EEXIST:
        return False
    if code in _UNSUPPORTED:
        _STATE["renameat2"] = None
        return None
    raise OSError(code, os.strerror(code), source, None, target)
