"""The raw check of a source with several MD5'd downloads is priced on its threads (issue 42, item 4): its
hashing takes the measured speed-up, its core-seconds are its threads times its wall. The figures are
preprocess/registry/stage_costs.yaml's, worked by hand below; no timing."""

from __future__ import annotations

import pytest

from preprocess.registry.config import settings_from_dict
from preprocess.sizing import stages

# stage_costs.yaml: MD5 from the disk, its speed-up on 2 threads (md5_parallel), a presence check per file;
# a stage job's start-up (verifyjobs.STARTUP_SECONDS)
RATE, SPEEDUP, PRESENCE, STARTUP = 649.7, 2.05, 3.59e-06, 0.5
# MedMNIST at 224 px (its default): the registry's counts of the nine archives, in images of 224 x 224 bytes,
# RGB ones thrice: (107,180 + 10,015 + 17,092) x 3 + 112,120 + 109,309 + 236,386 + 58,830 + 23,583 + 25,211
MEDMNIST_MB = 968_300 * 224 * 224 / 1e6  # 48,585.4 MB


def _medmnist_check(tmp_path, monkeypatch, **values):
    monkeypatch.delenv("MEDHEB_EXTRA_REGISTRY", raising=False)  # the shipped registry's MedMNIST
    for name in ("raw", "data"):
        (tmp_path / name).mkdir()
    settings = settings_from_dict(
        {"raw_root": str(tmp_path / "raw"), "data_basedir": str(tmp_path / "data"),
         "subsets": ["2D_Task/BloodMNIST"], **values}
    )  # fmt: skip
    (check,) = stages.check_estimates(settings, settings.registry())
    assert check.subset == "medmnist"
    return check


def test_the_check_of_a_multi_file_source_is_shorter_by_the_measured_speed_up(tmp_path, monkeypatch):
    check = _medmnist_check(tmp_path, monkeypatch)
    assert check.threads == 2  # nine archives to hash: the cap
    assert check.jobs == 1
    serial = MEDMNIST_MB / RATE  # 74.8 s one after another, as before
    (wall,) = check.job_seconds()
    assert wall == pytest.approx(STARTUP + 9 * PRESENCE + serial / SPEEDUP, rel=1e-6)  # 37.0 s
    assert wall == pytest.approx(36.98, abs=0.01)
    assert check.core_hours * 3600 == pytest.approx(2 * wall, rel=1e-6)  # both threads held the whole wall


def test_without_checksums_the_check_is_a_presence_check_on_one_thread(tmp_path, monkeypatch):
    check = _medmnist_check(tmp_path, monkeypatch, verify_checksums={"medmnist": False})
    assert check.threads == 1
    (wall,) = check.job_seconds()
    assert wall == pytest.approx(STARTUP + 9 * PRESENCE, rel=1e-6)
    assert check.core_hours * 3600 == pytest.approx(wall, rel=1e-6)


# MedMNIST's nine archives in bytes at each size (968,300 images of one channel's worth, as above): a second
# thread where they hold on average at least the 512 MB a file the speed-up was measured on (stage_costs.yaml)
@pytest.mark.parametrize(
    ("size", "threads"),
    [("28", 1), ("64", 1), ("128", 2), ("224", 2)],  # 84 MB, 441 MB, 1,763 MB and 5,398 MB a file
)
def test_a_second_hashing_thread_only_for_archives_as_large_as_those_measured(tmp_path, monkeypatch, size, threads):
    check = _medmnist_check(tmp_path, monkeypatch, source_variants={"medmnist": size})
    assert check.threads == threads
