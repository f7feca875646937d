#!/usr/bin/env python3
"""PNG plots of bench/wan.sh and bench/wan_coll.sh results (docs/results/wan.md).

    plot_wan.py --png DIR RESULTS.jsonl [MORE.jsonl ...]

Reads the JSON lines both scripts write (any mix of files) and draws, from the median over
the repetitions of each cell, into DIR:
  wan-bw.png    bandwidth against message size, one panel per one-way delay (seed
                infiniband-wan Fig. 5), a line per configuration (wan.sh --test bw);
  wan-lat.png   the same for ping-pong latency (wan.sh --test lat);
  wan-mr.png    message rate against size, a line per number of pairs, a panel per delay
                and configuration (rows share their scale; Fig. 6; --test mr);
  wan-coll.png  collective latency against size, a panel per collective and placement
                (Fig. 7; wan_coll.sh), flat against site-aware and the references.
A figure whose lines are absent from the input is not drawn. Lines a job marked "hung" are
skipped. Without matplotlib it says so and exits 1 (the scripts' own tables need none).
MB = 10^6 bytes, as the scripts print.
"""
import statistics
import sys
from collections import defaultdict

import jsonl

NAMES = {"default": "RailMPI", "wan_tune_0": "RailMPI RMPI_WAN_TUNE=0", "site_aware": "RailMPI site-aware",
         "flat": "RailMPI flat", "openmpi": "Open MPI", "mpich": "MPICH"}
STYLE = {"default": "C0-o", "wan_tune_0": "C1--s", "openmpi": "C2-^", "mpich": "C3-v",
         "site_aware": "C0-o", "flat": "C1--s"}


def delay_s(d):
    """'0', '100us', '1ms', '10ms' -> seconds, for ordering panels."""
    for unit, f in (("us", 1e-6), ("ms", 1e-3), ("s", 1.0)):
        if d.endswith(unit):
            return float(d[: -len(unit)]) * f
    return float(d)


def load(paths):
    """cells[(figure, panel, config)][x] = [values over repetitions]"""
    cells = defaultdict(lambda: defaultdict(list))
    for path in paths:
        for r in jsonl.objects(path):
            if "hung" in r:
                continue
            if "coll" in r:
                panel = (r["coll"], r.get("map", "block"), r.get("ppn", 1), r.get("delay", "1ms"))
                cells[("coll", panel, r["config"])][r["size"]].append(r["lat_us"])
            elif r.get("test") == "bw":
                cells[("bw", r["delay"], r["config"])][r["size"]].append(r["mb_s"])
            elif r.get("test") in ("lat", "latency"):
                cells[("lat", r["delay"], r["config"])][r["size"]].append(r["latency_us"])
            elif r.get("test") == "mr":
                panel = (r["delay"], r["config"])
                cells[("mr", panel, r.get("pairs", 1))][r["size"]].append(r["msg_s"])
    return cells


def draw(cells, outdir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figs = {
        "bw": ("wan-bw.png", "message size (bytes)", "bandwidth (MB/s)", True, False),
        "lat": ("wan-lat.png", "message size (bytes)", "latency (us)", True, True),
        "mr": ("wan-mr.png", "message size (bytes)", "messages per second", True, False),
        "coll": ("wan-coll.png", "message size (bytes)", "latency (us)", True, True),
    }
    written = []
    for fig, (name, xlabel, ylabel, logx, logy) in figs.items():
        keys = [k for k in cells if k[0] == fig]
        if not keys:
            continue
        if fig in ("bw", "lat"):
            panels = sorted({k[1] for k in keys}, key=delay_s)
        elif fig == "mr":
            order = list(NAMES)
            panels = sorted({k[1] for k in keys},
                            key=lambda p: (delay_s(p[0]), order.index(p[1]) if p[1] in order else len(order), p[1]))
        else:
            panels = sorted({k[1] for k in keys}, key=lambda p: (p[0], p[1], p[2], delay_s(p[3])))
        n = len(panels)
        cols = min(n, 4)
        if fig == "mr":  # a row per delay, its configurations side by side on one scale
            cols = max(sum(1 for p in panels if p[0] == d) for d in {p[0] for p in panels})
            slots = {}
            for p in panels:
                slots[p] = (sorted({q[0] for q in panels}, key=delay_s).index(p[0]), sum(1 for q in slots if q[0] == p[0]))
            rows = 1 + max(r for r, _ in slots.values())
        else:
            rows = (n + cols - 1) // cols
            slots = {p: (i // cols, i % cols) for i, p in enumerate(panels)}
        f, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.4 * rows), squeeze=False,
                               sharey="row" if fig == "mr" else False)
        for panel in panels:
            ax = axes[slots[panel][0]][slots[panel][1]]
            if fig == "mr":
                lines = sorted(k for k in keys if k[1] == panel)
            else:
                lines = sorted((k for k in keys if k[1] == panel),
                               key=lambda k: list(NAMES).index(k[2]) if k[2] in NAMES else len(NAMES))
            for k in lines:
                xs = sorted(cells[k])
                ys = [statistics.median(cells[k][x]) for x in xs]
                if fig == "mr":
                    ax.plot(xs, ys, f"C{k[2] - 1}-o", label=f"{k[2]} pair{'s' if k[2] > 1 else ''}", markersize=4)
                else:
                    ax.plot(xs, ys, STYLE.get(k[2], "-x"), label=NAMES.get(k[2], "RailMPI " + k[2]), markersize=4)
            if logx:
                ax.set_xscale("log", base=2)
            if logy:
                ax.set_yscale("log")
            if fig in ("bw", "lat"):
                title = f"one-way delay {panel}"
            elif fig == "mr":
                title = f"{panel[0]}, {NAMES.get(panel[1], 'RailMPI ' + panel[1])}"
            else:
                title = f"{panel[0]}, {panel[1]}, {panel[2]} per host, {panel[3]}"
            ax.set_title(title, fontsize=9)
            ax.set_xlabel(xlabel, fontsize=8)
            ax.set_ylabel(ylabel, fontsize=8)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7)
        used = set(slots.values())
        for j in range(rows * cols):
            if (j // cols, j % cols) not in used:
                axes[j // cols][j % cols].axis("off")
        f.tight_layout()
        f.savefig(f"{outdir}/{name}", dpi=110)
        plt.close(f)
        written.append(name)
    return written


def main(argv):
    if len(argv) < 3 or argv[0] != "--png":
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    cells = load(argv[2:])
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("plot_wan.py: matplotlib is not installed (Debian: python3-matplotlib)", file=sys.stderr)
        return 1
    for name in draw(cells, argv[1]):
        print(f"{argv[1]}/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
