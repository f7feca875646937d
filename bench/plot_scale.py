#!/usr/bin/env python3
"""Tables and plots of docs/results/scale.md from bench/scalesim's JSON lines.

    plot_scale.py --out DIR sweep16.jsonl [sweep8.jsonl sweep1.jsonl ...]

Reads every file given (result lines and "series" lines, any --cores), writes the PNGs to DIR
(matplotlib; without it only the tables) and prints the Markdown tables on stdout: memory per
process at the largest N for every design and pattern, the seeds' published points beside
the simulator's with the difference, and buffer efficiency per pattern.
"""
import argparse
import json
import os
import sys

DESIGNS = "rc-srq rc-msrq exrc sxrc rc-rdma-od dc-rdma-od aqps railmpi ofi-adaptive ofi-dedicated ofi-shared".split()
OFI = "ofi-adaptive ofi-dedicated ofi-shared".split()
PATTERNS = "onetoall alltoone repeat stencil2d stencil3d alltoall random trace".split()

# The seeds' published points: (seed, figure, design, procs, cores, key, bytes, what it counts)
SEED_POINTS = [
    ("xrc-scalable", "Fig. 4", "rc-srq", 32768, 16, "conn_bytes", 400e6, "fully connected, connection memory"),
    ("xrc-scalable", "Fig. 4", "exrc", 32768, 16, "conn_bytes", 400e6, "fully connected, connection memory"),
    ("xrc-scalable", "Fig. 4", "rc-msrq", 32768, 16, "conn_bytes", 2.6e9, "fully connected, connection memory"),
    ("xrc-scalable", "Fig. 4", "sxrc", 32768, 8, "conn_bytes", 54e6, "fully connected, best case"),
    ("xrc-scalable", "Fig. 4", "sxrc", 32768, 16, "conn_bytes", 26e6, "fully connected, best case"),
    ("adaptive-transport-selection", "Fig. 8", "rc-rdma-od", 65536, 1, "conn_bytes", 93e9, "QPs and table, no buffers"),
    ("adaptive-transport-selection", "Fig. 8", "aqps", 65536, 1, "bound_conn_bytes", 273e6,
     "QPs and table, no buffers; pool of 128 RC-QPs created"),
]


def load(paths):
    res, series = {}, []
    for p in paths:
        for line in open(p):
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            if "series" in r:
                series.append(r)
            else:
                res[r["design"], r["pattern"], r["procs"], r["cores"]] = r
    return res, series


def human(b):
    for unit, f in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if b >= f:
            return f"{b / f:.3g} {unit}"
    return f"{b:.0f} B"


def tables(res):
    out = []
    cores = sorted({k[3] for k in res})
    for c in cores:
        ns = sorted({k[2] for k in res if k[3] == c})
        if not ns:
            continue
        n = ns[-1]
        pats = [p for p in PATTERNS if any((d, p, n, c) in res for d in DESIGNS)]
        out.append(f"\nMemory per process (connections and buffers, the busiest simulated process) at "
                   f"N = {n}, {c} cores per node:\n")
        out.append("| design | " + " | ".join(pats) + " |")
        out.append("|---|" + "---:|" * len(pats))
        for d in DESIGNS:
            cells = [human(res[d, p, n, c]["mem_per_proc_bytes"]) if (d, p, n, c) in res else "" for p in pats]
            out.append(f"| {d} | " + " | ".join(cells) + " |")
    out.append(ofi_table(res))
    out.append("\nThe seeds' published points and the simulator's (alltoall: every process talks to every other):\n")
    out.append("| seed | figure | design | N | cores | published | simulated | difference | counts |")
    out.append("|---|---|---|---:|---:|---:|---:|---:|---|")
    for seed, fig, d, n, c, key, want, what in SEED_POINTS:
        r = res.get((d, "alltoall", n, c))
        if r is None:
            out.append(f"| {seed} | {fig} | {d} | {n} | {c} | {human(want)} | not run | | {what} |")
            continue
        got = r[key]
        out.append(f"| {seed} | {fig} | {d} | {n} | {c} | {human(want)} | {human(got)} | "
                   f"{100 * (got / want - 1):+.1f}% | {what} |")
    c = 16 if any(k[3] == 16 for k in res) else cores[0]
    n = 1024 if any(k[2] == 1024 and k[3] == c for k in res) else max(k[2] for k in res if k[3] == c)
    pats = [p for p in PATTERNS if any((d, p, n, c) in res for d in DESIGNS)]
    out.append(f"\nBuffer efficiency (received bytes / receive-buffer bytes they took) at N = {n}, {c} cores:\n")
    out.append("| design | " + " | ".join(pats) + " |")
    out.append("|---|" + "---:|" * len(pats))
    for d in DESIGNS:
        cells = [f"{res[d, p, n, c]['buffer_efficiency']:.2f}" if (d, p, n, c) in res else "" for p in pats]
        out.append(f"| {d} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def ofi_table(res):
    """RailMPI with libfabric between nodes at the largest N of 16 cores: each policy's parts."""
    c = 16 if any(k[3] == 16 for k in res) else min(k[3] for k in res)
    ns = sorted({k[2] for k in res if k[3] == c and k[0] in OFI})
    if not ns:
        return ""
    n = ns[-1]
    out = [f"\nRailMPI over libfabric between nodes at N = {n}, {c} cores per node, the busiest simulated "
           "process: memory with per-node (XRC) connections, with an RC connection per peer, and its parts:\n",
           "| pattern | policy | memory (xrc) | memory (rc) | per-rank state | statistics | shared buffers (shm queue + ofi) "
           "| rings (shm + ofi) | connections xrc / rc | nodes |",
           "|---|---|---:|---:|---:|---:|---:|---|---:|---:|"]
    for p in PATTERNS:
        for d in OFI:
            r = res.get((d, p, n, c))
            if r is None:
                continue
            out.append(f"| {p} | {d[4:]} | {human(r['mem_per_proc_bytes'])} | {human(r['mem_rc_bytes'])} | "
                       f"{human(r['per_rank_bytes'])} | {human(r['table_bytes'])} | "
                       f"{human(r['shm_queue_bytes'] + r['rx_bytes'])} | {human(r['rings_bytes'])} "
                       f"({r['rings_shm']} + {r['rings_ofi']}) | {human(r['conn_xrc_bytes'])} / "
                       f"{human(r['conn_rc_bytes'])} | {r['xrc_nodes']} |")
    return "\n".join(out)


def plots(res, series, outdir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: tables only", file=sys.stderr)
        return
    os.makedirs(outdir, exist_ok=True)
    marks = dict(zip(DESIGNS, "os^vD<>*PXh"))

    def loglog(ax, ylabel, xlabel="processes"):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)

    def curve(ax, d, p, c, key, **kw):
        pts = sorted((k[2], r[key]) for k, r in res.items() if k[0] == d and k[1] == p and k[3] == c)
        if pts:
            ax.plot([x for x, _ in pts], [y for _, y in pts], marker=marks[d], **kw)

    # memory per process vs N, every design, alltoall and stencil3d at 16 cores
    fig, axes = plt.subplots(1, 2, figsize=(12, 5), sharey=True)
    for ax, p in zip(axes, ("alltoall", "stencil3d")):
        for i, d in enumerate(DESIGNS):
            curve(ax, d, p, 16, "mem_per_proc_bytes", label=d, color=plt.cm.tab20(i / 20 * 2 % 1 + (i >= 10) / 20))
        ax.set_title(f"{p}, 16 cores per node")
        loglog(ax, "memory per process (bytes, connections + buffers)")
    fig.tight_layout()
    fig.savefig(f"{outdir}/scale_mem_vs_n.png", dpi=110)

    # RailMPI over libfabric: the three policies vs N, xrc (solid) and rc (dashed) connections
    pats = [p for p in ("alltoall", "random", "stencil3d", "trace") if any(k[0] in OFI and k[1] == p for k in res)]
    if pats:
        fig, axes = plt.subplots(1, len(pats), figsize=(5 * len(pats), 5), sharey=True)
        colors = dict(zip(OFI, ("C0", "C3", "C2")))
        for ax, p in zip(axes if len(pats) > 1 else [axes], pats):
            for d in OFI:
                curve(ax, d, p, 16, "mem_per_proc_bytes", label=f"{d[4:]} (per-node xrc)", color=colors[d])
                curve(ax, d, p, 16, "mem_rc_bytes", label=f"{d[4:]} (rc per peer)", color=colors[d],
                      linestyle="--", alpha=0.6)
            ax.axhline(273e6, color="k", linestyle=":", label="AQPS at 2^16 (273 MB)")
            ax.set_title(f"{p}: shm + libfabric, 16 cores per node")
            loglog(ax, "memory per process (bytes)")
        fig.tight_layout()
        fig.savefig(f"{outdir}/scale_ofi_mem_vs_n.png", dpi=110)

    # the seeds' figures: Fig. 4 (connection memory, fully connected) and Fig. 8 (no buffers)
    fig, axes = plt.subplots(1, 2, figsize=(12, 5))
    ax = axes[0]
    for d, c in (("rc-srq", 16), ("rc-msrq", 16), ("sxrc", 8), ("sxrc", 16)):
        curve(ax, d, "alltoall", c, "conn_bytes", label=f"{d} ({c} cores)")
    for seed, fig_, d, n, c, key, want, what in SEED_POINTS:
        if fig_ == "Fig. 4":
            ax.plot([n], [want], "k*", markersize=12)
    ax.set_title("xrc-scalable Fig. 4: connection memory, fully connected (stars: published)")
    ax2 = axes[1]
    for d in ("rc-rdma-od", "dc-rdma-od"):
        curve(ax2, d, "alltoall", 1, "conn_bytes", label=d)
    curve(ax2, "aqps", "alltoall", 1, "bound_conn_bytes", label="aqps (pool of 128 created)")
    curve(ax2, "aqps", "alltoall", 1, "conn_bytes", label="aqps (simulated alltoall)", linestyle="--")
    for seed, fig_, d, n, c, key, want, what in SEED_POINTS:
        if fig_ == "Fig. 8":
            ax2.plot([n], [want], "k*", markersize=12)
    ax2.set_title("adaptive-transport-selection Fig. 8: no buffers, 1 process per node")
    for a in axes:
        loglog(a, "bytes per process")
    fig.tight_layout()
    fig.savefig(f"{outdir}/scale_seed_figures.png", dpi=110)

    # RailMPI per pattern
    fig, ax = plt.subplots(figsize=(7, 5))
    for p in PATTERNS:
        pts = sorted((k[2], r["mem_per_proc_bytes"]) for k, r in res.items()
                     if k[0] == "railmpi" and k[1] == p and k[3] == 16)
        if pts:
            ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", label=p)
    ax.axhline(273e6, color="k", linestyle=":", label="AQPS at 2^16 (273 MB)")
    ax.axhline(26e6, color="grey", linestyle=":", label="SXRC at 32K, 16 cores (26 MB)")
    ax.set_title("railmpi: shm channels + tcp per peer + statistics")
    loglog(ax, "memory per process (bytes)", "processes (16 per node)")
    fig.tight_layout()
    fig.savefig(f"{outdir}/scale_railmpi_patterns.png", dpi=110)

    # buffer efficiency per pattern
    n = 1024
    fig, ax = plt.subplots(figsize=(11, 4.5))
    pats = [p for p in PATTERNS if any((d, p, n, 16) in res for d in DESIGNS)]
    w = 0.8 / len(DESIGNS)
    for i, d in enumerate(DESIGNS):
        ys = [res[d, p, n, 16]["buffer_efficiency"] if (d, p, n, 16) in res else 0 for p in pats]
        ax.bar([j + i * w for j in range(len(pats))], ys, w, label=d)
    ax.set_xticks([j + 0.4 - w / 2 for j in range(len(pats))])
    ax.set_xticklabels(pats)
    ax.set_ylabel("received bytes / buffer bytes")
    ax.set_title(f"buffer efficiency per pattern, N = {n}, 16 cores per node")
    ax.legend(fontsize=7, ncol=4)
    fig.tight_layout()
    fig.savefig(f"{outdir}/scale_buffer_efficiency.png", dpi=110)

    # dedicated channels over time, repeat
    rep = [s for s in series if s["pattern"] == "repeat" and s["procs"] in (64, 1024, 8192)]
    if rep:
        fig, ax = plt.subplots(figsize=(8, 4.5))
        for s in rep:
            pts = s["points"] + [[4.0, s["points"][-1][1]]] if s["points"] else []
            if pts:
                ax.step([t for t, _ in pts], [k for _, k in pts], where="post",
                        label=f"N={s['procs']} rank {s['rank']}")
        for i in range(10):
            ax.axvspan(0.4 * i, 0.4 * (i + 1), color="grey" if i % 2 else "white", alpha=0.15)
        ax.set_xlabel("simulated seconds (white: onetoall, grey: alltoone)")
        ax.set_ylabel("dedicated channels (railmpi)")
        ax.set_title("repeat: dedicated shm channels over time (railmpi, 16 cores per node)")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(f"{outdir}/scale_repeat_dedicated.png", dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="docs/results")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    res, series = load(a.files)
    if not res:
        sys.exit("plot_scale.py: no result lines in " + " ".join(a.files))
    print(tables(res))
    plots(res, series, a.out)


if __name__ == "__main__":
    main()
