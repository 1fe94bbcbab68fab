"""A convert job's declared resources come from what its shard holds (preprocess/sizing/resources.py): they
grow with its items, never fall under the floor, follow the measured memory model and scale with a retry;
the whole build's wall time is a list schedule that falls as the cores grow. Figures by hand, from the
documented model: runtime = max(10, ceil((start-up + items x seconds / speedup) x 3 / 60)) minutes;
mem_mb = ceil(peak x threads x 1.5 + 500)."""

from __future__ import annotations

from preprocess.sizing import budget, resources
from preprocess.sizing.costs import Cost

FLAT = Cost(seconds=1.0, files=1, bytes=1, startup_seconds=2.0, peak_rss_mb={10: 100, 20: 104})
GROWING = Cost(seconds=1.0, files=1, bytes=1, startup_seconds=2.0, peak_rss_mb={10: 100, 20: 200})


def test_a_small_shard_gets_the_floor_and_a_large_one_its_work():
    assert resources.for_items(FLAT, 1) == resources.Resources(1, 656, 10)  # 104 x 1.5 + 500; 9 s x 3: floor
    # 10,002 s x 3 = 30,006 s = 500.1 min
    assert resources.for_items(FLAT, 10_000) == resources.Resources(1, 656, 501)
    runtimes = [resources.for_items(FLAT, n).runtime for n in (1, 100, 1_000, 10_000)]
    assert runtimes == sorted(runtimes) and runtimes[0] == 10 < runtimes[-1]


def test_threads_and_their_speedup():
    # two processes of 104 MB each; 10,002 s of work on 2 threads at 1.5x: (2 + 10,000 / 1.5) x 3 s = 333.4 min
    assert resources.for_items(FLAT, 10_000, threads=2, speedup=1.5) == resources.Resources(2, 812, 334)


def test_memory_that_grows_with_the_items_is_extrapolated():
    assert resources.peak_mb(FLAT, 100_000) == 104  # a 4 MB rise: noise
    # from 1x to 4x the items: a rise of up to 20% is flat (the larger item a job held), above it a line
    within = Cost(seconds=1.0, files=1, bytes=1, startup_seconds=2.0, peak_rss_mb={3: 280, 12: 328})
    assert resources.peak_mb(within, 3_000) == 328
    beyond = Cost(seconds=1.0, files=1, bytes=1, startup_seconds=2.0, peak_rss_mb={3: 200, 12: 250})
    assert resources.peak_mb(beyond, 21) == 300  # 50 MB per 9 items
    assert resources.peak_mb(GROWING, 40) == 400  # 10 MB per item beyond the measured 20
    assert resources.for_items(GROWING, 40).mem_mb == 1100
    # a conversion whose memory grows is cut until each job's declared memory fits MEM_TARGET_MB (16 GB):
    # 5,000 items take two jobs of under an hour, but 2,500 or 1,250 items need 38 or 19 GB; 625: 9.9 GB
    shards = resources.shards_for(5_000, GROWING)
    assert shards == 8
    assert resources.for_items(GROWING, 625).mem_mb <= 16_000 < resources.for_items(GROWING, 1_250).mem_mb


def test_a_retry_scales_memory_and_time():
    first = resources.for_items(FLAT, 10_000, threads=2)
    assert first.at(2) == resources.Resources(2, first.mem_mb * 2, first.runtime * 2)
    assert first.at(3).runtime == 3 * 501


def test_shards_keep_each_job_under_an_hour():
    assert resources.shards_for(3_000, FLAT) == 1  # 3,002 s
    assert resources.shards_for(3_599, FLAT) == 2  # 3,601 s
    assert resources.shards_for(10_000, FLAT, threads=2, speedup=2.0) == 2  # 5,002 s on two cores


def test_wall_time_is_a_longest_first_schedule():
    jobs = [(60.0, 1)] * 4 + [(100.0, 2)]
    assert budget.wall_seconds(jobs, 1) == 340  # one after another; a 2-thread job takes the one core
    assert budget.wall_seconds(jobs, 2) == 220  # the 100 s job on both cores, then two pairs of 60 s
    assert budget.wall_seconds(jobs, 4) == 120  # 100 s on two cores beside two 60 s, then two more 60 s
    assert budget.wall_seconds(jobs, 8) == 100
    assert budget.wall_seconds(jobs, 8, overhead=30) == 130
