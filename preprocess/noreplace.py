"""Rename without replacing: Linux renameat2(RENAME_NOREPLACE), one system call that moves a finished
temporary file to its name and fails if that name is taken, atomically.

The output writer would otherwise look first (a stat of the name, then the rename): that look costs about as
much as the rename itself, once per output file of a build. File systems without the flag (NFS, older
kernels, other systems) answer EINVAL, ENOSYS or EOPNOTSUPP; then `rename` returns None, and keeps doing so
in this process, and the caller looks first and renames as before.
"""

from __future__ import annotations

import ctypes
import errno
import os

_AT_FDCWD = -100
_RENAME_NOREPLACE = 1
_UNSUPPORTED = (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP)


def _bind():
    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):  # not glibc >= 2.28, or not Linux
        return None
    function.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    function.restype = ctypes.c_int
    return function


_STATE = {"renameat2": _bind()}


def available() -> bool:
    """Can `rename` tell (as far as this process knows)?"""
    return _STATE["renameat2"] is not None


def rename(source: str, target: str) -> bool | None:
    """Move source to target unless target exists: True when moved, False when target exists (source stays),
    None when this system cannot tell (nothing happened). Other failures raise OSError, as os.rename does."""
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
