"""The whole build's wall time as the workflow orders its jobs (issue 42, items 4-6), not its stages summed.
The workflow (workflow/rules/*.smk) runs:

1. the run's start, then every raw check (check_source), then the plan checkpoint, which reads every check
   report: a barrier;
2. per subset, once the plan is written: its conversions; then, side by side, its validation shards and their
   merge, its fingerprint shards and their merge, and its contact sheet. One subset's fingerprints run while
   another's conversions do;
3. at the end, one after another: the fingerprints' table, the validation summary, its gate and the
   evaluation configs.

Parts 1 and 3 are priced as budget.py prices a stage. Part 2 is scheduled as a graph: whenever cores are free,
the ready job with the longest chain of work still behind it starts (for jobs without successors, the longest
first, as schedule.wall_seconds). On SLURM each cluster job first waits allocation.SLURM_JOB_SECONDS, as
schedule.py has it: SLURM_QUEUE_SECONDS once it is ready, holding no core, then SLURM_HELD_SECONDS holding its
cores; the contact sheets are local rules (the Snakefile's `localrules`), run on the
host Snakemake runs on, with no wait and no core of the allocation; the short jobs of the grouped rules
(validate_subset, convert jobs under GROUP_BELOW_SECONDS: profiles/slurm) travel GROUP_JOBS to a group when
they become ready together, as a subset's short conversions do once the plan is written.

Part 2's lower bound is the larger of its work spread over the cores and its longest chain of single pieces:
a conversion's start-up and one item, a shard's walk and one path, a merge whole, each cluster job with its
wait."""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from preprocess.sizing import allocation

GROUPED = ("convert", "merge")  # the conversions' and the validation merges' short jobs (profiles/slurm)


@dataclass(frozen=True)
class Node:
    """One cluster job, or a SLURM group of short jobs, of part 2."""

    seconds: float  # its work on its threads, the waits left out
    queue: float  # once it is ready, before it may start, holding no core (SLURM's queue; 0 for a local rule)
    wait: float  # once started, before its work starts, holding its cores (its Snakemake's start on SLURM)
    threads: int  # cores of the allocation it holds (0: a local rule on SLURM)
    steps: tuple[str, ...]  # what it is part of (a group: each member's); later jobs wait for a whole step
    after: tuple[str, ...]  # the steps it waits for
    least: float  # its part of a chain in the lower bound: its waits, start-up and one item (a merge: whole)


def _waits_for(e) -> tuple[str, tuple[str, ...]]:
    """(the step of estimate `e`, the steps it waits for), as the workflow's rules chain a subset's jobs."""
    if e.stage == "convert":
        return f"convert {e.subset}", ()
    if e.stage == "contact":
        return f"contact {e.subset}", (f"convert {e.subset}",)
    if e.conversion == "merge":
        return f"{e.stage} {e.subset}", (f"{e.stage} shards {e.subset}",)
    return f"{e.stage} shards {e.subset}", (f"convert {e.subset}",)  # the validation and the fingerprints


def nodes(estimates: list, slurm: bool) -> list[Node]:
    """Part 2's jobs (conversions, validation, fingerprints, contact sheets) as nodes."""
    queue = allocation.SLURM_QUEUE_SECONDS if slurm else 0.0
    held = allocation.SLURM_HELD_SECONDS if slurm else allocation.LOCAL_JOB_SECONDS
    found, small = [], {}
    for e in estimates:
        step, after = _waits_for(e)
        local = slurm and e.stage == "contact"
        waits, threads = ((0.0, 0.0), 0) if local else ((queue, held), e.threads)
        one = max(e.job_seconds()) if e.conversion == "merge" else e.startup_seconds + e.item_seconds
        least = sum(waits) + one
        groups = slurm and not local and (e.stage == "convert" or (e.stage == "validate" and e.conversion == "merge"))
        for seconds in e.job_seconds():
            if groups and seconds < allocation.GROUP_BELOW_SECONDS:
                small.setdefault((e.stage, after), []).append(Node(seconds, *waits, threads, (step,), after, least))
            else:
                found.append(Node(seconds, *waits, threads, (step,), after, least))
    for jobs in small.values():  # a group lasts as long as its longest job and holds the sum of their threads
        jobs.sort(key=lambda n: -n.seconds)
        for i in range(0, len(jobs), allocation.GROUP_JOBS):
            batch = jobs[i : i + allocation.GROUP_JOBS]
            found.append(
                Node(
                    batch[0].seconds,
                    batch[0].queue,
                    batch[0].wait,
                    sum(n.threads for n in batch),
                    tuple(dict.fromkeys(s for n in batch for s in n.steps)),
                    tuple(dict.fromkeys(s for n in batch for s in n.after)),
                    max(n.least for n in batch),
                )
            )
    return found


def _successors(found: list[Node]) -> list[list[int]]:
    waiting: dict[str, list[int]] = {}
    for i, node in enumerate(found):
        for step in node.after:
            waiting.setdefault(step, []).append(i)
    return [sorted({j for step in node.steps for j in waiting.get(step, [])}) for node in found]


def _chains(found: list[Node], length) -> list[float]:
    """Per node, the longest chain of `length(node)` from it to the end, itself included."""
    successors = _successors(found)
    tails: dict[int, float] = {}
    for i in _reverse_order(found, successors):
        tails[i] = length(found[i]) + max((tails[j] for j in successors[i]), default=0.0)
    return [tails[i] for i in range(len(found))]


def _reverse_order(found: list[Node], successors: list[list[int]]) -> list[int]:
    """The nodes, each after all its successors (the chains are short: convert, validate, attest)."""
    order, seen = [], set()

    def visit(i: int) -> None:
        if i in seen:
            return
        seen.add(i)
        for j in successors[i]:
            visit(j)
        order.append(i)

    for i in range(len(found)):
        visit(i)
    return order


def wall_seconds(found: list[Node], cores: int) -> float:
    """Seconds until the last node ends on `cores`: a node may start `queue` seconds after every step it waits
    for is done, once its threads (at most `cores`) are free, the one with the longest chain behind it first."""
    priority = _chains(found, lambda n: n.queue + n.wait + n.seconds)
    successors = _successors(found)
    parts: dict[str, int] = {}
    for node in found:
        for step in node.steps:
            parts[step] = parts.get(step, 0) + 1
    blocked = [{s for s in node.after if s in parts} for node in found]  # a step no job has is done
    held = [min(node.threads, cores) for node in found]
    events: list[tuple[float, int, int]] = []  # (time, 0 a node ends or 1 it leaves the queue, node)
    ready: list[int] = []
    for i, steps in enumerate(blocked):
        if not steps:
            heapq.heappush(events, (found[i].queue, 1, i))
    now, free = 0.0, cores
    while events:
        now, kind, i = heapq.heappop(events)
        if kind == 1:
            ready.append(i)
        else:
            free += held[i]
            for step in found[i].steps:
                parts[step] -= 1
                if parts[step]:
                    continue
                for j in successors[i]:
                    if step in blocked[j]:
                        blocked[j].discard(step)
                        if not blocked[j]:
                            heapq.heappush(events, (now + found[j].queue, 1, j))
        if events and events[0][0] == now:
            continue  # everything that happens now first, then the cores are handed out
        ready.sort(key=lambda j: -priority[j])
        left = []
        for j in ready:
            if held[j] <= free:
                free -= held[j]
                heapq.heappush(events, (now + found[j].wait + found[j].seconds, 0, j))
            else:
                left.append(j)
        ready = left
    return now


def lower_bound(found: list[Node], cores: int) -> float:
    """No schedule of `found` on `cores` ends sooner: its work spread evenly, or its longest chain of single
    pieces."""
    if not found:
        return 0.0
    spread = sum(n.seconds * n.threads for n in found) / cores + min(n.queue + n.wait for n in found)
    return max(spread, max(_chains(found, lambda n: n.least)))


def walls(estimates: list, cores: int) -> dict:
    """Part 2's local and SLURM wall hours next to their lower bounds."""
    found = {}
    for where, slurm in (("local", False), ("slurm", True)):
        graph = nodes(estimates, slurm)
        found[where] = wall_seconds(graph, cores) / 3600
        found[f"{where}_bound"] = lower_bound(graph, cores) / 3600
    return found
