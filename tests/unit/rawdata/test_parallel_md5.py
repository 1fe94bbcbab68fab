"""The raw check hashes a source's downloads across files on its threads (issue 42, item 4): the same results
and report on one thread or several, and a check job holds one thread a hashed file, up to what pays."""

from __future__ import annotations

import dataclasses
import json

from preprocess.formats.checksums import ChecksumCache
from preprocess.pipeline.workflow import check_threads
from preprocess.rawdata.rawcheck import check_source
from preprocess.registry.model import FileSpec
from preprocess.sizing import checkjobs

# RFC 1321's test suite: the MD5 of each message, as the RFC prints it
RFC1321 = {
    b"": "d41d8cd98f00b204e9800998ecf8427e",
    b"a": "0cc175b9c0f1b6a831c399e269772661",
    b"abc": "900150983cd24fb0d6963f7d28e17f72",
    b"message digest": "f96b697d7cb7938d525a2f31aaf161d0",
    b"abcdefghijklmnopqrstuvwxyz": "c3fcd3d76192e4007dfb496ca67e13b2",
}


def _source(settings, files):
    """The demo's PubMedQA source with `files` instead of its own (its folder: <raw_root>/PubMedQA)."""
    return dataclasses.replace(settings.registry().source("pubmedqa"), files=tuple(files))


def _spec(name: str, md5: str) -> FileSpec:
    return FileSpec(id=name.split(".")[0], paths=(name,), md5=md5)


def test_several_threads_give_the_one_threads_results_and_report(demo, settings):
    folder = demo / "raw" / "PubMedQA"
    for name, message in (("a.bin", b"a"), ("abc.bin", b"abc"), ("digest.bin", b"message digest")):
        (folder / name).write_bytes(message)
    (folder / "alphabet.bin").write_bytes(b"abc")  # not the bytes the registry lists for it
    specs = [
        _spec("a.bin", RFC1321[b"a"]),
        _spec("abc.bin", RFC1321[b"abc"]),
        _spec("alphabet.bin", RFC1321[b"abcdefghijklmnopqrstuvwxyz"]),
        _spec("empty.bin", RFC1321[b""]),  # never downloaded
        _spec("digest.bin", RFC1321[b"message digest"]),
    ]
    source = _source(settings, specs)
    one_cache, two_cache = ChecksumCache(None), ChecksumCache(None)
    one = check_source(source, settings.raw_root, one_cache, threads=1)
    two = check_source(source, settings.raw_root, two_cache, threads=2)
    assert [(f.id, f.status, f.md5_actual) for f in two.files] == [
        ("a", "ok", RFC1321[b"a"]),
        ("abc", "ok", RFC1321[b"abc"]),
        ("alphabet", "corrupt", RFC1321[b"abc"]),
        ("empty", "missing", None),
        ("digest", "ok", RFC1321[b"message digest"]),
    ]
    assert two.status == "corrupt"
    assert two.reasons == [
        f"checksum differs: alphabet.bin md5 {RFC1321[b'abc']}, expected {RFC1321[b'abcdefghijklmnopqrstuvwxyz']}",
        "missing: empty.bin",
    ]
    assert json.dumps(two.to_json()) == json.dumps(one.to_json())  # the report's bytes, in the same order
    assert two_cache.entries == one_cache.entries  # the four files read, each remembered once
    assert sorted(v[2] for v in two_cache.entries.values()) == sorted(
        RFC1321[m] for m in (b"a", b"abc", b"abc", b"message digest")
    )


def test_a_remembered_checksum_is_not_read_again_on_threads(demo, settings):
    folder = demo / "raw" / "PubMedQA"
    (folder / "a.bin").write_bytes(b"a")
    (folder / "abc.bin").write_bytes(b"abc")
    source = _source(settings, [_spec("a.bin", RFC1321[b"a"]), _spec("abc.bin", RFC1321[b"abc"])])
    cache = ChecksumCache(None)
    assert check_source(source, settings.raw_root, cache, threads=2).status == "present"
    assert cache.hits == 0
    (folder / "abc.bin").write_bytes(b"a")  # changed since: its size and time differ, so it is read again
    again = check_source(source, settings.raw_root, cache, threads=2)
    assert [f.status for f in again.files] == ["ok", "corrupt"]
    assert cache.hits == 1  # a.bin only


def test_a_check_job_of_small_or_unsized_files_holds_one_thread(settings):
    one = _source(settings, [_spec("a.bin", RFC1321[b"a"]), FileSpec(id="notes", paths=("notes.txt",))])
    several = _source(settings, [_spec(f"{n}.bin", RFC1321[b"a"]) for n in range(9)])  # MedMNIST's nine archives
    assert checkjobs.hashed_files(one, verify=True) == 1
    assert checkjobs.threads_for(one, verify=True) == 1  # one file to hash: one core
    # nine small files whose size the registry does not give: a second core would wait through the job's start
    assert checkjobs.threads_for(several, verify=True) == 1
    assert checkjobs.threads_for(several, verify=False) == 1  # nothing hashed
    globbed = _source(settings, [FileSpec(id=f"g{n}", glob=f"g{n}/*.png", md5=RFC1321[b"a"]) for n in range(3)])
    assert checkjobs.threads_for(globbed, verify=True) == 1  # a glob's matches are never hashed


def test_the_workflow_gives_each_source_its_own_thread_count(settings):
    registry = settings.registry()
    # the demo's registry lists MD5s for PubMedQA's two JSON files (of no size the registry gives: one core)
    # and APTOS's train.csv alone
    assert check_threads(settings, registry, "pubmedqa") == 1
    assert check_threads(settings, registry, "aptos2019") == 1
    assert check_threads(settings, registry, "kvasir_v2") == 1  # no MD5 at all
