"""Rebuild the MedHEB-Bench image tree from raw upstream downloads."""

__version__ = "0.1.0"
