"""The whole build's wall time as the workflow orders its jobs (preprocess/sizing/buildwall.py): a subset's
validation and fingerprints start once its own conversions end (workflow/rules/validate.smk, attest.smk: both
take the subset's conversion manifests), beside other subsets' conversions. The expected walls are worked out
by hand below."""

from __future__ import annotations

import pytest

from preprocess.sizing import allocation, buildwall
from preprocess.sizing.estimate import Estimate


def job(subset, stage, seconds, conversion="", jobs=1, threads=1):
    """An estimate of `jobs` jobs of `seconds` each (one item each, no start-up)."""
    return Estimate(subset, conversion, "test", jobs, jobs, 0, 0.0, jobs, threads=threads, item_seconds=seconds,
                    stage=stage)  # fmt: skip


def two_subsets():
    found = []
    for subset, convert in (("A", 100.0), ("B", 50.0)):
        found += [
            job(subset, "convert", convert),
            job(subset, "validate", 10.0, "shards"),
            job(subset, "validate", 5.0, "merge"),
            job(subset, "attest", 20.0, "shards"),
            job(subset, "attest", 5.0, "merge"),
        ]
    return found


def test_one_core_runs_everything_in_turn():
    # 100 + 10 + 5 + 20 + 5 for A, 50 + 10 + 5 + 20 + 5 for B
    assert buildwall.wall_seconds(buildwall.nodes(two_subsets(), slurm=False), 1) == pytest.approx(230.0)


def test_a_subset_is_verified_while_another_converts():
    # Two cores. A converts on one [0, 100], B on the other [0, 50]. B's fingerprint shard (20 s, then a 5 s
    # merge behind it) goes first [50, 70], its validation shard [70, 80], its two merges [80, 85] and [85, 90],
    # all while A converts. A's shards then run side by side: attest [100, 120], validate [100, 110], whose
    # merge follows [110, 115]; A's fingerprint merge [120, 125]. The stages in turn would take 100 + 10 + 5
    # + 20 + 5 = 140 at best.
    assert buildwall.wall_seconds(buildwall.nodes(two_subsets(), slurm=False), 2) == pytest.approx(125.0)


def test_the_bound_is_the_work_or_the_longest_chain():
    graph = buildwall.nodes(two_subsets(), slurm=False)
    assert buildwall.lower_bound(graph, 1) == pytest.approx(230.0)  # the work on one core
    # A's chain: its conversion's one item, then its fingerprint shard's item and the merge whole
    assert buildwall.lower_bound(graph, 100) == pytest.approx(100.0 + 20.0 + 5.0)


def test_on_slurm_each_job_waits_and_short_conversions_travel_in_groups():
    wait = allocation.SLURM_JOB_SECONDS
    # nine 5 s conversions of one subset, ready together once the plan is written: a group of eight (8 cores,
    # as long as one of them) and one alone
    graph = buildwall.nodes([job("A", "convert", 5.0, jobs=9)], slurm=True)
    assert sorted((n.threads, n.queue + n.wait + n.seconds) for n in graph) == [(1, wait + 5.0), (8, wait + 5.0)]
    assert all(n.queue == allocation.SLURM_QUEUE_SECONDS and n.wait == allocation.SLURM_HELD_SECONDS for n in graph)
    # the contact sheet is a local rule: no wait, no core of the allocation
    sheet = buildwall.nodes([job("A", "contact", 2.0)], slurm=True)
    assert [(n.threads, n.wait, n.seconds) for n in sheet] == [(0, 0.0, 2.0)]


def test_on_slurm_every_job_of_a_chain_waits_in_turn():
    queue, held = allocation.SLURM_QUEUE_SECONDS, allocation.SLURM_HELD_SECONDS
    graph = buildwall.nodes(two_subsets()[:5], slurm=True)  # subset A alone, on cores to spare
    # its conversion: queued, started, worked (100 s); then its fingerprint shard likewise (20 s) and its merge
    # (5 s); its validation (10 s, 5 s) ends sooner beside them
    converted = queue + held + 100.0
    assert buildwall.wall_seconds(graph, 10) == pytest.approx(converted + 2 * (queue + held) + 20.0 + 5.0)
