#!/usr/bin/env python3
"""Turn compare.sh results (JSON lines) into markdown tables.

Each line looks like {"mpi":"mpich","net":"shm","rep":1,"test":"latency","size":8,
"latency_us":0.41}. Repeated runs are reduced to their median, because a 2-core machine
shared with compilers gives occasional slow outliers that a mean would absorb.
"""
import json
import statistics
import sys
from collections import defaultdict

MPIS = ["mpich", "openmpi", "railmpi", "railmpi-before"]  # railmpi-before: compare.sh --before
REFS = ["mpich", "openmpi"]
NETS = ["shm", "tcp", "ofi-tcp", "ofi-shm"]  # in this order, those present


def load(path):
    samples = defaultdict(list)  # (mpi, net, test, size) -> values
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            value = r.get("latency_us", r.get("mb_s"))
            if value is None:
                continue
            samples[(r["mpi"], r["net"], r["test"], r["size"])].append(value)
    return samples


def fmt(v, digits):
    return "-" if v is None else f"{v:.{digits}f}"


def size_label(s):
    if s >= 1 << 20 and s % (1 << 20) == 0:
        return f"{s >> 20} MiB"
    if s >= 1 << 10 and s % (1 << 10) == 0:
        return f"{s >> 10} KiB"
    return f"{s} B"


def ratio(rail, others, lower_is_better):
    """RailMPI divided by the best reference: < 1 is better for latency, > 1 for bandwidth."""
    refs = [v for v in others if v is not None and v > 0]
    if rail is None or not refs:
        return "-"
    best = min(refs) if lower_is_better else max(refs)
    return f"{rail / best:.2f}"


def table(samples, net, mpis, bw_test):
    med = {k: statistics.median(v) for k, v in samples.items()}
    sizes = sorted({k[3] for k in samples if k[1] == net})
    if not sizes:
        return []
    refs = [m for m in mpis if m in REFS]
    rails = [m for m in ("railmpi", "railmpi-before") if m in mpis]
    short = {"railmpi": "rail", "railmpi-before": "before"}
    head = ["size"] + [f"{m} lat us" for m in mpis] + [f"{short[m]}/best lat" for m in rails]
    head += [f"{m} {bw_test} MB/s" for m in mpis] + [f"{short[m]}/best {bw_test}" for m in rails]
    out = [f"### {net}", "", "| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
    for s in sizes:
        lat = {m: med.get((m, net, "latency", s)) for m in mpis}
        bw = {m: med.get((m, net, bw_test, s)) for m in mpis}
        row = [size_label(s)]
        row += [fmt(lat[m], 2) for m in mpis]
        row += [ratio(lat.get(m), [lat[r] for r in refs], True) for m in rails]
        row += [fmt(bw[m], 1) for m in mpis]
        row += [ratio(bw.get(m), [bw[r] for r in refs], False) for m in rails]
        out.append("| " + " | ".join(row) + " |")
    out.append("")
    return out


def spread(samples, mpis, test, size, unit):
    d = 2 if test == "latency" else 1
    key = "latency" if test == "latency" else test
    out = [f"{key} at {size_label(size)} over repeated runs (min / median / max, {unit}):", ""]
    for net in NETS:
        for m in mpis:
            v = samples.get((m, net, test, size))
            if v:
                out.append(f"- {m} {net}: {min(v):.{d}f} / {statistics.median(v):.{d}f} / {max(v):.{d}f}"
                           f" ({len(v)} runs)")
    out.append("")
    return out


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print("usage: compare_table.py RESULTS.jsonl [bw|bibw]", file=sys.stderr)
        return 2
    samples = load(sys.argv[1])
    bw_test = sys.argv[2] if len(sys.argv) > 2 else "bw"
    mpis = [m for m in MPIS if any(k[0] == m for k in samples)]
    if not mpis:
        print("compare_table.py: no results in " + sys.argv[1], file=sys.stderr)
        return 1
    lines = []
    for net in NETS:
        if any(k[1] == net for k in samples):
            lines += table(samples, net, mpis, bw_test)
    lines += spread(samples, mpis, "latency", 8, "us")
    lines += spread(samples, mpis, bw_test, 1 << 20, "MB/s")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
