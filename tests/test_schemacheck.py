"""A registry and a configuration that passed their schema checks are not checked again (the results folder
remembers them); any change to them is checked, and a bad one still fails with its message."""

from __future__ import annotations

import pytest

from preprocess import schemacheck
from preprocess.config import settings_from_dict
from preprocess.errors import ConfigError, RegistryError
from preprocess.registry import load_registry


@pytest.fixture
def results(tmp_path):
    schemacheck.remember_in(tmp_path / "results")
    yield tmp_path / "results"
    schemacheck.remember_in(None)


def _forbid_validation(monkeypatch):
    import jsonschema

    def refuse(*args, **kwargs):
        raise AssertionError("validated again")

    monkeypatch.setattr(jsonschema, "Draft202012Validator", refuse)


def test_a_second_process_skips_the_checks_that_passed(results, monkeypatch, tmp_path):
    load_registry()
    settings_from_dict({"raw_root": str(tmp_path), "data_basedir": str(tmp_path)})
    assert len((results / "cache" / "schema-checks").read_text().split()) == 3  # registry, params, config
    schemacheck.remember_in(results)  # a new process: it reads the file afresh
    _forbid_validation(monkeypatch)
    assert load_registry().subset("2D_Task/BloodMNIST").key == "2D_Task/BloodMNIST"
    settings_from_dict({"raw_root": str(tmp_path), "data_basedir": str(tmp_path)})


def test_a_changed_document_is_checked_and_a_bad_one_still_fails(results, tmp_path):
    settings_from_dict({"raw_root": str(tmp_path), "data_basedir": str(tmp_path)})
    with pytest.raises(ConfigError, match="on_bad_input"):
        settings_from_dict({"raw_root": str(tmp_path), "data_basedir": str(tmp_path), "on_bad_input": "ignore"})
    overrides = tmp_path / "overrides.yaml"
    overrides.write_text("sources:\n  medmnist:\n    files: {bloodmnist: {paths: 7}}\n")
    load_registry()
    with pytest.raises(RegistryError, match=r"does not match registry\.schema\.yaml"):
        load_registry(overrides)


def test_without_a_results_folder_every_check_runs(tmp_path, monkeypatch):
    schemacheck.remember_in(None)
    load_registry()
    _forbid_validation(monkeypatch)
    with pytest.raises(AssertionError, match="validated again"):
        load_registry()


def test_an_unwritable_cache_only_means_checking_again(results, monkeypatch):
    results.mkdir()
    (results / "cache").write_text("a file where the cache folder belongs")
    load_registry()
    load_registry()  # nothing noted, nothing raised
    assert (results / "cache").read_text() == "a file where the cache folder belongs"


def test_another_folder_on_the_command_line_is_not_a_new_check_but_another_value_is(results, monkeypatch, tmp_path):
    """data_basedir's schema asks only for text: any folder passes alike; on_bad_input's does not."""
    settings_from_dict({"raw_root": str(tmp_path), "data_basedir": str(tmp_path / "one")})
    schemacheck.remember_in(results)
    import jsonschema

    real = jsonschema.Draft202012Validator
    made = []
    monkeypatch.setattr(jsonschema, "Draft202012Validator", lambda schema: made.append(schema) or real(schema))
    settings_from_dict({"raw_root": str(tmp_path), "data_basedir": str(tmp_path / "two")})
    assert made == []
    settings_from_dict({"raw_root": str(tmp_path), "data_basedir": str(tmp_path), "on_bad_input": "skip"})
    assert len(made) == 1
