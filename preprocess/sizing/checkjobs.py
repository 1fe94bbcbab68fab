"""How many threads a source's raw check (the check_source rule, `medheb check`) hashes its downloads on, and
how much faster they make it (issue 42, item 4).

A check reads the MD5 of every named download that lists one (preprocess/rawdata/rawcheck.py: MedMNIST's npz
archives, one per flag), one file a thread at a time (ChecksumCache.md5_all). So a source with one such file
keeps one core, and one with several holds up to the thread count benchmarks/stage_costs.py measured hashing as
many files side by side (stage_costs.yaml `md5_parallel`: its speed-up from the disk, as the MD5 rate is), only
where that speed-up pays for the cores (resources.PAYS), as a conversion's threads do, and only where the files
are on average as large as those it was measured on: a few megabytes hash in milliseconds, and a second core
would be held through the job's start for nothing (MedMNIST at 28 and 64 px keeps one core, at 128 and 224 px
two; a download whose size the registry does not give, one). The benchmark ran on
a 2-core machine, where 2 threads is the most that can be measured: the cap is 2 until a larger machine
measures more (benchmarks/stage_costs.py --md5-threads N --md5-parallel-only)."""

from __future__ import annotations

from preprocess.registry import splits
from preprocess.sizing.resources import PAYS
from preprocess.sizing.verifyjobs import STAGE_COSTS, load


def _figure() -> dict:
    return load(STAGE_COSTS).get("md5_parallel") or {}


def _measured() -> tuple[int, float]:
    """(threads, speed-up from the disk) of stage_costs.yaml's `md5_parallel`; (1, 1.0) when not measured."""
    figure = _figure()
    return int(figure.get("threads", 1)), float(figure.get("speedup", 1.0))


def md5_bytes(source) -> int:
    """Bytes of the downloads of `source` that list an MD5, where the registry gives their size (npz archives:
    their pixels at the chosen variant, an image size: MedMNIST's 28-224, MedSegBench's 128-512); 0 else."""
    side = int(source.variant) if (source.variant or "").isdigit() else 0
    total = 0
    for spec in source.files:
        if spec.md5 and spec.npz is not None and side:
            pixels = side ** spec.npz.get("dims", 2) * spec.npz.get("channels", 1)
            total += sum(spec.npz["counts"].values()) * pixels
    return total


def cap() -> int:
    """The most threads a check job hashes on: the measured count where its speed-up pays, else one."""
    threads, speedup = _measured()
    return threads if threads > 1 and speedup / threads >= PAYS else 1


def hashed_files(source, verify: bool) -> int:
    """How many of `source`'s downloads its check hashes when they are there: the named files (not globs) that
    list an MD5, none when its checksums are not verified."""
    return sum(1 for spec in source.files if spec.md5 and not spec.glob) if verify else 0


def threads_for(source, verify: bool) -> int:
    """A check job's threads: one a hashed file, up to the cap, where its files are on average at least the
    size the speed-up was measured at; one when it hashes at most one file or smaller ones."""
    files = hashed_files(source, verify)
    if files <= 1 or md5_bytes(source) / files < float(_figure().get("file_mb", 0)) * 1e6:
        return 1
    return min(files, cap())


def source_threads(settings, registry, source_id: str) -> int:
    """The threads of `source_id`'s check in this build: the files its splits ask for (splits.checked_source,
    as the check itself looks for them) and the config's verify_checksums."""
    source = splits.checked_source(registry, settings, registry.source(source_id))
    return threads_for(source, settings.verifies_checksums(source_id))


def speedup(threads: int) -> float:
    """How much faster a check hashes its files on `threads` than one after another: 1 on one thread, the
    measured figure at the measured count (the cap: no job holds more)."""
    measured, figure = _measured()
    if threads <= 1 or measured <= 1:
        return 1.0
    if threads >= measured:
        return figure
    return 1.0 + (figure - 1.0) * (threads - 1) / (measured - 1)  # between two measured points: the line
