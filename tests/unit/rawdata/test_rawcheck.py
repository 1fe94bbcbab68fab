"""Raw checks: present, missing, incomplete (naming the file), corrupt (expected vs actual MD5)."""

from __future__ import annotations

import zipfile

from conftest import demo_config_file, demo_settings
from preprocess.cli import main
from preprocess.formats.checksums import ChecksumCache
from preprocess.formats.fsutil import file_digest
from preprocess.rawdata.rawcheck import check_source, fingerprint


def _check(settings, source_id, cache=None):
    registry = settings.registry()
    return check_source(registry.source(source_id), settings.raw_root, cache or ChecksumCache(None))


def test_demo_sources_are_present(settings):
    for source_id in (
        "aptos2019",
        "brain_tumor_mri",
        "kvasir_v2",
        "lc25000",
        "rfmid",
        "mimic_cxr_jpg",
        "medmcqa",
        "pubmedqa",
        "medical_qa_retrieval",
        "publichealthqa",
        "chexpert_plus",
    ):
        check = _check(settings, source_id)
        assert check.status == "present", (source_id, check.reasons)


def test_deleted_file_makes_the_source_incomplete_and_names_it(demo, settings):
    (demo / "raw" / "PubMedQA" / "test_ground_truth.json").unlink()
    check = _check(settings, "pubmedqa")
    assert check.status == "incomplete"
    assert check.reasons == ["missing: test_ground_truth.json"]


def test_too_few_files_is_incomplete(demo, settings):
    (demo / "raw" / "aptos2019-blindness-detection" / "train_images" / "6cd606dc52e9.png").unlink()
    check = _check(settings, "aptos2019")
    assert check.status == "incomplete"
    assert check.reasons == ["too few files: train_images/*.png matches 3, expected at least 4"]


def test_changed_bytes_are_corrupt_with_both_hashes(demo, settings):
    target = demo / "raw" / "aptos2019-blindness-detection" / "train.csv"
    expected = file_digest(target)
    target.write_text("id_code,diagnosis\n")
    check = _check(settings, "aptos2019")
    assert check.status == "corrupt"
    actual = file_digest(target)
    assert check.reasons == [f"checksum differs: train.csv md5 {actual}, expected {expected}"]


def test_checksum_verification_can_be_turned_off(demo):
    (demo / "raw" / "aptos2019-blindness-detection" / "train.csv").write_text("changed\n")
    settings = demo_settings(demo, verify_checksums={"aptos2019": False})
    registry = settings.registry()
    verify = settings.verifies_checksums("aptos2019")
    assert check_source(registry.source("aptos2019"), settings.raw_root, ChecksumCache(None), verify).status == (
        "present"
    )


def test_absent_folder_is_missing_with_instructions(settings):
    check = _check(settings, "mimic_cxr_reports")
    assert check.status == "missing"
    assert "https://physionet.org/content/mimic-cxr/2.1.0/" in check.instructions
    assert str(settings.raw_root / "mimic-cxr") in check.instructions  # <raw_root> filled in


def test_checksums_are_cached_by_size_and_mtime(demo, settings, tmp_path):
    cache_file = tmp_path / "cache.json"
    cache = ChecksumCache(cache_file)
    _check(settings, "pubmedqa", cache)
    cache.save()
    again = ChecksumCache(cache_file)
    assert _check(settings, "pubmedqa", again).status == "present"
    assert again.hits == 2  # both files of pubmedqa, none re-read
    (demo / "raw" / "PubMedQA" / "ori_pqal.json").write_text("{}")
    third = ChecksumCache(cache_file)
    assert _check(settings, "pubmedqa", third).status == "corrupt"


def test_fingerprint_changes_when_a_file_is_added_or_removed(demo, settings):
    source = settings.registry().source("aptos2019")
    before = fingerprint(source, settings.raw_root)
    assert fingerprint(source, settings.raw_root) == before
    (demo / "raw" / "aptos2019-blindness-detection" / "train_images" / "6cd606dc52e9.png").unlink()
    assert fingerprint(source, settings.raw_root) != before


def test_check_command_prints_table_and_instructions(demo, capsys, tmp_path):
    (demo / "raw" / "PubMedQA" / "ori_pqal.json").unlink()
    config = demo_config_file(demo, tmp_path / "config.yaml", subsets=["PubMedQA", "APTOS", "USData"])
    code = main(["check", "--config", str(config), "--results", str(tmp_path / "results"), "--strict"])
    out = capsys.readouterr().out
    assert code == 1
    lines = {line.split()[0]: line.split()[1] for line in out.splitlines()[2:5]}
    assert lines == {"aptos2019": "present", "pubmedqa": "incomplete", "usdata": "missing"}
    assert "missing: ori_pqal.json" in out
    assert "## usdata: missing" in out and "1. Download the authors' archive from the public Google Drive link" in out


def test_a_zip_bomb_is_named_by_the_check_before_any_conversion(demo, settings):
    """An images.zip whose member inflates 20 MB of zeros out of ~20 KB is not simply `present`: the check names
    the archive and the member the conversion will refuse (from the central directory: nothing inflated)."""
    archive = demo / "raw" / "PMC-VQA" / "images.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as bomb:
        bomb.writestr("figures/PMC8253873_Fig2_288.jpg", bytes(20 << 20))
    (reason,) = _check(settings, "pmc_vqa").reasons
    assert reason.startswith(
        "unusable: images.zip holds member figures/PMC8253873_Fig2_288.jpg that inflates 20,971,520 bytes out of "
    )
    assert "over the bound of 100x" in reason and "download it again" in reason
