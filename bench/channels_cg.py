#!/usr/bin/env python3
"""Rank 0's callgrind counts for bench/channels.sh --callgrind.

  channels_cg.py N PATTERN POLICY ITER SETTLE OUT ERR RESULTS CALLGRIND_FILE   one JSON line
  channels_cg.py --table RESULTS                                       markdown table

Per pattern job: Ir of run() (the warm-up and timed loops, without MPI_Init/Finalize) per
ping-pong ("raw": it includes the empty polls while rank 0 waits for a peer the scheduler
has not run yet, which vary from job to job on an oversubscribed machine), and the same with
those polls taken off ("path"): each progress pass beyond one per ping-pong is counted as
empty at the cost of one empty progress pass measured in the idle job of the same policy
and rank count (for adaptive, plus one ring's poll per ring rank 0 had at the end), and
sched_yield's own instructions are taken off too. With SETTLE > 0 (microseconds) rank 0
slept before each receive (bench/channels.c settle()), so the answer was there at its first
pass and few waiting polls are left to estimate; settle()'s instructions are taken off. Per idle job: Ir per empty MPI_Iprobe
and per empty progress pass (rmpi_core_progress).
"""
import json
import re
import sys


def calls(path, want):
    """{fn: [calls, inclusive Ir]} over every call site of fn, from a callgrind file."""
    names, res, cur, pending = {}, {w: [0, 0] for w in want}, None, None
    for line in open(path):
        if pending is not None:
            parts = line.split()
            if len(parts) >= 2:
                res[pending][1] += int(parts[1])
            pending = None
            continue
        m = re.match(r'c?fn=\((\d+)\)(?: (.*))?', line)
        if m:
            if m.group(2):
                names[m.group(1)] = m.group(2).strip()
            if line.startswith('cfn='):
                cur = names.get(m.group(1))
            continue
        if line.startswith('calls=') and cur in res:
            res[cur][0] += int(line.split('=')[1].split()[0])
            pending = cur
    return res


def one(argv):
    n, pat, pol, it, settle, outf, errf, results, cgf = argv
    n, it, settle = int(n), int(it), int(settle)
    ranks = [json.loads(line) for line in open(errf) if line.startswith('{"rank"')]
    r0 = [r for r in ranks if r["rank"] == 0][0]
    c = calls(cgf, {"run", "MPI_Iprobe", "rmpi_core_progress", "rmpi_core_wait_step", "sched_yield", "MPI_Send", "settle"})
    row = dict(ranks=n, pattern=pat, policy=pol, settle_us=settle, switches_rank0=r0["switches"],
               dedicated_peers_rank0=r0["dedicated_peers"],
               mem_rank0=r0["channel_bytes"]["dedicated"] + r0["channel_bytes"]["shared"],
               selection_rank0=r0.get("selection"))
    if pat == "idle":
        row.update(probes=it, ir_per_op=c["MPI_Iprobe"][1] / max(c["MPI_Iprobe"][0], 1),
                   ir_per_progress=c["rmpi_core_progress"][1] / max(c["rmpi_core_progress"][0], 1))
        return row
    pp = json.loads(open(outf).read().strip().splitlines()[-1])["pingpongs"]
    idle, ded = {}, {}
    for line in open(results):
        r = json.loads(line)
        if r["pattern"] == "idle" and r["ranks"] == n:
            idle[r["policy"]] = r["ir_per_progress"]
        if r["pattern"] == "idle" and r["policy"] == "dedicated":
            ded[r["ranks"]] = r["ir_per_progress"]
    empty_cost = idle.get(pol, 0)
    started_ded = any(x.get("start") == "dedicated" for x in r0.get("rails", []))
    if pol.startswith("adaptive") and "shared" in idle and not started_ded:
        # one ring's empty poll: the slope of the dedicated idle cost over the rank counts
        # measured (the shared queue is not polled there), else ded - shared over n - 1
        lo, hi = min(ded, default=0), max(ded, default=0)
        per_ring = (ded[hi] - ded[lo]) / (hi - lo) if hi > lo else \
            (idle.get("dedicated", idle["shared"]) - idle["shared"]) / max(n - 1, 1)
        empty_cost = idle["shared"] + max(per_ring, 0) * r0["dedicated_peers"]
    waits = c["rmpi_core_wait_step"][0]
    empties = max(waits - pp, 0)
    raw = c["run"][1] - c["settle"][1]
    row.update(pingpongs=pp, ir_per_op_raw=raw / pp, waits_per_op=waits / pp,
               ir_send=c["MPI_Send"][1] / max(c["MPI_Send"][0], 1),
               ir_per_op=(raw - empties * empty_cost - c["sched_yield"][1]) / pp)
    return row


def table(results):
    rows = [json.loads(line) for line in open(results)]
    cell = {(r["ranks"], r["pattern"], r["policy"]): r for r in rows}
    pats = [p for p in ["idle", "onetoall", "alltoone", "repeat", "random"] if any(k[1] == p for k in cell)]
    print("Rank 0's instructions (callgrind) per ping-pong with the waiting polls taken off (random: per")
    print("exchange; idle: per empty MPI_Iprobe); in brackets the raw count with them, and progress passes per op")
    print()
    extra = [x for x in ("adaptive-queue", "adaptive-rings") if any(k[2] == x for k in cell)]
    print("| ranks | pattern | dedicated | shared | adaptive | adaptive / better | adaptive / worse | adaptive rank 0: switches, rings at end |"
          + "".join(" %s | adaptive / %s |" % (x, x) for x in extra))
    print("|---:|---|---:|---:|---:|---:|---:|---|" + "---:|---:|" * len(extra))
    for n in sorted({k[0] for k in cell}):
        for p in pats:
            got = [cell.get((n, p, x)) for x in ("dedicated", "shared", "adaptive")]
            if not all(got):
                continue
            d, s, a = got
            fmt = (lambda r: "%.0f" % r["ir_per_op"]) if p == "idle" else \
                (lambda r: "%.0f (%.0f, %.1f)" % (r["ir_per_op"], r["ir_per_op_raw"], r["waits_per_op"]))
            best, worst = min(d["ir_per_op"], s["ir_per_op"]), max(d["ir_per_op"], s["ir_per_op"])
            more = [cell.get((n, p, x)) for x in extra]
            print("| %d | %s | %s | %s | %s | %.3f | %.3f | %d, %d |" % (n, p, fmt(d), fmt(s), fmt(a), a["ir_per_op"] / best,
                  a["ir_per_op"] / worst, a["switches_rank0"], a["dedicated_peers_rank0"])
                  + "".join(" %s | %.3f |" % (fmt(q), a["ir_per_op"] / q["ir_per_op"]) if q else " | |" for q in more))


if __name__ == "__main__":
    if sys.argv[1] == "--table":
        table(sys.argv[2])
    else:
        print(json.dumps(one(sys.argv[1:])))
