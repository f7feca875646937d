#!/usr/bin/env python3
"""Markdown summary and PNG plots of bench/multirail.sh results.

    plot_multirail.py --summary RESULTS.jsonl        markdown tables on stdout (no matplotlib)
    plot_multirail.py --png DIR RESULTS.jsonl        multirail-bw.png, multirail-bibw.png,
                                                     multirail-timeline.png in DIR
    plot_multirail.py --rates RESULTS.jsonl          markdown of --part rates on stdout
    plot_multirail.py --rates-png DIR RESULTS.jsonl  multirail-rates.png in DIR

RESULTS.jsonl is what multirail.sh writes: one JSON object a line. pt2pt lines carry
"config" and "topo" (the tc rates of rail0/rail1) and nsA's rail byte counters; the
timeline has "bw_time" lines (t, mb_s), "load" (the competing flow's interval in the
same time base), "rail_rate" (nsA's per-rail transmit rate, MPI and iperf3 together) and
"iperf" (the competing flow's own rate). MB = 10^6 bytes throughout.
"""
import json
import statistics
import sys
from collections import defaultdict

LABELS = {
    "rmpi-rail0": "RailMPI rail0 only",
    "rmpi-even": "RailMPI even",
    "rmpi-weighted": "RailMPI weighted",
    "rmpi-adaptive": "RailMPI adaptive",
    "rmpi-ofi": "RailMPI over tcp;ofi_rxm",
    "ompi-rail0": "Open MPI rail0 only",
    "ompi-default": "Open MPI default",
    "ompi-weighted": "Open MPI hand-weighted",
}
ORDER = list(LABELS)
KEY_SIZE = 4 << 20


def load(path):
    meta, rows = {}, []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            if r.get("meta") == "multirail":
                meta = r
            else:
                rows.append(r)
    return meta, rows


def topos(meta, rows):
    """The unequal topology first, then the equal one (the order multirail.sh runs them)."""
    seen = []
    for r in rows:
        t = r.get("topo")
        if t and t not in seen:
            seen.append(t)
    return seen


def label(config, topo, main_topo):
    name = LABELS.get(config, config)
    if topo != main_topo:
        rails = topo.split("/")
        name += " (equal rails)" if len(set(rails)) == 1 else f" ({topo})"
    return name


def samples(rows, test):
    """(topo, config) -> {size: [mb_s of each run]}, failed runs left out."""
    out = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if r.get("test") == test and "size" in r and not r.get("failed"):
            out[(r["topo"], r["config"])][r["size"]].append(r["mb_s"])
    return out


def series(rows, test):
    """(topo, config) -> {size: median mb_s over the runs of that size}."""
    return {k: {size: statistics.median(v) for size, v in d.items()}
            for k, d in samples(rows, test).items()}


def with_spread(values):
    """'median (min..max)' when a point was run more than once."""
    if not values:
        return "-"
    m = statistics.median(values)
    if len(values) == 1:
        return f"{m:.1f}"
    return f"{m:.1f} ({min(values):.1f}..{max(values):.1f})"


def ordered_keys(keys, tlist):
    def rank(k):
        topo, config = k
        return (tlist.index(topo) if topo in tlist else 99,
                ORDER.index(config) if config in ORDER else 99, config)
    return sorted(keys, key=rank)


def size_label(s):
    if s >= 1 << 20 and s % (1 << 20) == 0:
        return f"{s >> 20} MiB"
    if s >= 1 << 10 and s % (1 << 10) == 0:
        return f"{s >> 10} KiB"
    return f"{s} B"


def rate_mb_s(rate):
    """tc rate (1gbit, 250mbit) -> MB/s of line rate."""
    r = rate.lower()
    for suffix, mult in (("gbit", 1e9), ("mbit", 1e6), ("kbit", 1e3), ("bit", 1.0)):
        if r.endswith(suffix):
            return float(r[: -len(suffix)]) * mult / 8e6
    return None


def rail_capacity(rows):
    """topo -> {rail: MB/s} as one TCP stream measured each rail alone."""
    cap = defaultdict(dict)
    for r in rows:
        if r.get("test") == "iperf_rail":
            cap[r["topo"]][r["rail"]] = r["mb_s"]
    return cap


def fmt(v, digits=1):
    return "-" if v is None else f"{v:.{digits}f}"


def split_share(rows, topo, config, test, size):
    """rail0's share of the bytes nsA sent during that run, from the interface counters."""
    for r in rows:
        if (r.get("topo"), r.get("config"), r.get("test"), r.get("size")) == (topo, config, test, size):
            a, b = r.get("rail0_tx_mb"), r.get("rail1_tx_mb")
            if a is not None and b is not None and a + b > 0:
                return 100.0 * a / (a + b)
    return None


def timeline(rows):
    """config -> dict(bw=[(t, mb_s)], load=(start, end), rails=[...], iperf=[...])."""
    tl = defaultdict(lambda: {"bw": [], "load": None, "rails": [], "iperf": [], "total": None})
    for r in rows:
        c = r.get("config")
        t = r.get("test")
        if t == "bw_time" and not r.get("failed") and not r.get("partial"):
            tl[c]["bw"].append((r["t"], r["mb_s"]))
        elif t == "bw_time_total":
            tl[c]["total"] = r["mb_s"]
        elif t == "load":
            tl[c]["load"] = (r["start"], r["end"])
        elif t == "rail_rate":
            tl[c]["rails"].append((r["t"], r["rail0_mb_s"], r["rail1_mb_s"]))
        elif t == "iperf":
            tl[c]["iperf"].append((r["t"], r["mb_s"]))
    return tl


def phases(points, load, end):
    """Median rate before, during (second half) and after (second half) the load, and the
    seconds it took to settle after the load started and to get back after it ended."""
    if not points or load is None:
        return None
    l0, l1 = load

    def med(a, b):
        v = [m for t, m in points if a < t <= b]
        return statistics.median(v) if v else None

    before = med(1.0, l0)
    during = med(l0 + (l1 - l0) / 2, l1)
    after = med(l1 + (end - l1) / 2, end)
    settle = back = None
    # Only a level that moved by more than 10% has a time to settle or to come back.
    moved = before is not None and during is not None and abs(during - before) > 0.1 * before
    if moved:
        for t, m in points:
            if t > l0 + 0.5 and abs(m - during) <= 0.1 * during:
                settle = t - l0
                break
    if moved:
        for t, m in points:
            if t > l1 + 0.5 and m >= 0.9 * before:
                back = t - l1
                break
    return before, during, after, settle, back


def summary(path):
    meta, rows = load(path)
    tlist = topos(meta, rows)
    main = tlist[0] if tlist else ""
    cap = rail_capacity(rows)
    out = ["# Multirail benchmark", ""]
    if meta:
        out.append(f"Run {meta.get('date')} on {meta.get('host')} ({meta.get('cores')} cores, "
                   f"{meta.get('busy_pct')}% busy before), commit {meta.get('commit')}"
                   f"{' + ' + str(meta.get('dirty_files')) + ' modified files' if meta.get('dirty_files') else ''}, "
                   f"Open MPI {meta.get('openmpi') or '-'}; rails {meta.get('rate0')} and {meta.get('rate1')}"
                   f"{', quick' if meta.get('quick') else ''}. MB/s = 10^6 bytes/s.")
        out.append("")
    if cap:
        out += ["TCP on each rail alone (one stream, tools/netlab bw; MB/s):", "",
                "| topology | rail0 | rail1 | sum |", "|---|---:|---:|---:|"]
        for t in tlist:
            if t in cap:
                c = cap[t]
                s = sum(c.values()) if len(c) == 2 else None
                out.append(f"| {t} | {fmt(c.get('rail0'))} | {fmt(c.get('rail1'))} | {fmt(s)} |")
        out.append("")

    for test, title in (("bw", "Bandwidth"), ("bibw", "Bidirectional bandwidth")):
        ser = series(rows, test)
        if not ser:
            continue
        keys = ordered_keys(ser, tlist)
        sizes = sorted({s for k in keys for s in ser[k]})
        out += [f"## {title} (MB/s)", ""]
        out.append("| size | " + " | ".join(label(c, t, main) for t, c in keys) + " |")
        out.append("|---:|" + "---:|" * len(keys))
        for s in sizes:
            out.append(f"| {size_label(s)} | " + " | ".join(fmt(ser[k].get(s)) for k in keys) + " |")
        out.append("")

    bw, bibw = series(rows, "bw"), series(rows, "bibw")
    bw_runs, bibw_runs = samples(rows, "bw"), samples(rows, "bibw")
    keys = ordered_keys(set(bw) | set(bibw), tlist)
    if keys:
        reps = max((len(v.get(KEY_SIZE, [])) for v in bw_runs.values()), default=1)
        out += [f"## At {size_label(KEY_SIZE)}", ""]
        if reps > 1:
            out += [f"Median of {reps} runs (min..max).", ""]
        out += ["| configuration | rails | bw MB/s | bibw MB/s | bw / TCP sum of its rails | rail0 share of bytes (bw) |",
                "|---|---|---:|---:|---:|---:|"]
        for t, c in keys:
            v = bw.get((t, c), {}).get(KEY_SIZE)
            ifaces = ["rail0"] if c.endswith("rail0") else ["rail0", "rail1"]
            capsum = sum(cap.get(t, {}).get(i, 0.0) for i in ifaces) or None
            share = split_share(rows, t, c, "bw", KEY_SIZE)
            out.append(f"| {label(c, t, main)} | {t if len(ifaces) == 2 else t.split('/')[0] + ' (rail0)'} | "
                       f"{with_spread(bw_runs.get((t, c), {}).get(KEY_SIZE))} | "
                       f"{with_spread(bibw_runs.get((t, c), {}).get(KEY_SIZE))} | "
                       f"{fmt(v / capsum if v and capsum else None, 2)} | {fmt(share, 0)}{'%' if share is not None else ''} |")
        out.append("")
        out += targets(meta, bw, cap, main, tlist)

    tl = timeline(rows)
    if tl:
        end = float(meta.get("timeline_s", 30)) if meta else 30.0
        out += ["## Bandwidth over time with a competing flow", "",
                f"iperf3 TCP flow on {meta.get('load_rail', '?')} from about {meta.get('load_from', '?')} s "
                f"for {meta.get('load_secs', '?')} s; medians of 0.5 s intervals (during/after: second half "
                "of the phase); settle: first interval within 10% of the loaded level; back: first interval "
                "at >= 90% of the level before the load (both left out when the load moved the level by "
                "less than 10%).", "",
                "| configuration | before | during | after | whole run | settle s | back s |",
                "|---|---:|---:|---:|---:|---:|---:|"]
        for c in ORDER + sorted(set(tl) - set(ORDER)):
            if c not in tl:
                continue
            p = phases(tl[c]["bw"], tl[c]["load"], end)
            if p is None:
                out.append(f"| {LABELS.get(c, c)} | - | - | - | {fmt(tl[c]['total'])} | - | - |")
                continue
            before, during, after, settle, back = p
            out.append(f"| {LABELS.get(c, c)} | {fmt(before)} | {fmt(during)} | {fmt(after)} | "
                       f"{fmt(tl[c]['total'])} | {fmt(settle)} | {fmt(back)} |")
        out.append("")
    return "\n".join(out)


def targets(meta, bw, cap, main, tlist):
    """The issue's three ratios, from this one run."""
    out = []
    k = KEY_SIZE
    ada = bw.get((main, "rmpi-adaptive"), {}).get(k)
    ompi = bw.get((main, "ompi-default"), {}).get(k)
    lines = []
    if ada:
        line_rate = None
        if meta and rate_mb_s(meta.get("rate0", "")) and rate_mb_s(meta.get("rate1", "")):
            line_rate = rate_mb_s(meta["rate0"]) + rate_mb_s(meta["rate1"])
        tcp = sum(cap.get(main, {}).values()) if len(cap.get(main, {})) == 2 else None
        lines.append(f"- RailMPI adaptive at 4 MiB on {main}: {ada:.1f} MB/s = "
                     f"{fmt(100 * ada / line_rate if line_rate else None, 0)}% of the shaped line rates "
                     f"({fmt(line_rate)} MB/s), {fmt(100 * ada / tcp if tcp else None, 0)}% of TCP's "
                     f"per-rail sum ({fmt(tcp)} MB/s); target >= 95%.")
        if ompi:
            lines.append(f"- RailMPI adaptive / Open MPI default at 4 MiB: {ada / ompi:.2f}x; target >= 2x.")
    equal = [t for t in tlist if len(set(t.split("/"))) == 1]
    one = bw.get((main, "rmpi-rail0"), {}).get(k)
    if equal and one:
        two = bw.get((equal[0], "rmpi-adaptive"), {}).get(k)
        if two:
            lines.append(f"- RailMPI equal rails / one rail at 4 MiB: {two / one:.2f}x; target >= 1.9x.")
    ompi_one = bw.get((main, "ompi-rail0"), {}).get(k)
    ompi_w = bw.get((main, "ompi-weighted"), {}).get(k)
    if ompi and ompi_one:
        lines.append(f"- Open MPI at 4 MiB: default {ompi:.1f}, hand-weighted {fmt(ompi_w)}, "
                     f"rail0 alone {ompi_one:.1f} MB/s.")
    if lines:
        out += ["Targets of the multirail design (ratios within this run):", ""] + lines + [""]
    return out


def plot(outdir, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    meta, rows = load(path)
    tlist = topos(meta, rows)
    main = tlist[0] if tlist else ""
    cap = rail_capacity(rows)
    styles = {"rmpi": "-", "ompi": "--"}
    # One colour per way of splitting, shared by both MPIs (Open MPI's default splits evenly).
    colours = {"rail0": "tab:blue", "even": "tab:orange", "default": "tab:orange",
               "weighted": "tab:green", "adaptive": "tab:red"}
    written = []
    for test, title in (("bw", "Bandwidth, rank 0 -> rank 1"), ("bibw", "Bidirectional bandwidth")):
        ser = series(rows, test)
        if not ser:
            continue
        fig, ax = plt.subplots(figsize=(10.5, 5))
        for t, c in ordered_keys(ser, tlist):
            pts = sorted(ser[(t, c)].items())
            other = t != main
            ax.plot([p[0] for p in pts], [p[1] for p in pts], styles.get(c[:4], "-"),
                    marker="s" if other else "o", markersize=3,
                    color="tab:purple" if other else colours.get(c.split("-", 1)[-1]),
                    label=label(c, t, main))
        mult = 2 if test == "bibw" else 1
        refs = []
        for t in tlist:
            c = cap.get(t, {})
            if len(c) == 2:
                name = "equal rails" if len(set(t.split("/"))) == 1 else t
                refs.append((sum(c.values()), f"TCP sum of rails, {name}"))
        if main in cap and "rail0" in cap[main]:
            refs.append((cap[main]["rail0"], "TCP on rail0 alone"))
        for v, text in refs:
            ax.axhline(mult * v, color="grey", linestyle=":", linewidth=1)
            ax.annotate(text + (" (x2)" if mult == 2 else ""), (0.01, mult * v),
                        xycoords=("axes fraction", "data"), fontsize=7, color="grey", va="bottom")
        ax.set_xscale("log", base=2)
        ticks = sorted({sz for k in ser for sz in ser[k]})
        ax.set_xticks(ticks)
        ax.set_xticklabels([size_label(sz).replace(" ", "") for sz in ticks], fontsize=8)
        ax.minorticks_off()
        ax.set_xlabel("message size")
        ax.set_ylabel("MB/s")
        ax.set_ylim(bottom=0)
        ax.set_title(f"{title}: shaped namespace rails ({meta.get('rate0')} + {meta.get('rate1')})")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        name = f"{outdir}/multirail-{test}.png"
        fig.tight_layout()
        fig.savefig(name, dpi=110)
        plt.close(fig)
        written.append(name)

    tl = timeline(rows)
    configs = [c for c in ORDER + sorted(set(tl) - set(ORDER)) if c in tl and tl[c]["bw"]]
    if configs:
        fig, axes = plt.subplots(len(configs), 1, figsize=(8, 2.6 * len(configs)), sharex=True, squeeze=False)
        ymax = max(m for c in configs for _, m in tl[c]["bw"]) * 1.15
        for ax, c in zip(axes[:, 0], configs):
            d = tl[c]
            if d["load"]:
                ax.axvspan(*d["load"], color="orange", alpha=0.15,
                           label=f"iperf3 flow on {meta.get('load_rail', '?')}")
            ax.plot([p[0] for p in d["bw"]], [p[1] for p in d["bw"]], "-", color="black", linewidth=1.6,
                    label="MPI bandwidth")
            if d["rails"]:
                ax.plot([p[0] for p in d["rails"]], [p[1] for p in d["rails"]], "-", linewidth=0.8,
                        color="tab:blue", label="rail0 tx (all traffic)")
                ax.plot([p[0] for p in d["rails"]], [p[2] for p in d["rails"]], "-", linewidth=0.8,
                        color="tab:green", label="rail1 tx (all traffic)")
            if d["iperf"]:
                ax.plot([p[0] for p in d["iperf"]], [p[1] for p in d["iperf"]], ":", color="tab:red",
                        linewidth=1, label="iperf3 flow")
            ax.set_ylim(0, ymax)
            ax.set_ylabel("MB/s")
            ax.set_title(LABELS.get(c, c), fontsize=9)
            ax.grid(True, alpha=0.3)
        handles, names = axes[0, 0].get_legend_handles_labels()
        fig.legend(handles, names, fontsize=7, loc="lower center", ncol=5, frameon=False)
        axes[-1, 0].set_xlabel("time since start (s)")
        fig.tight_layout(rect=(0, 0.04, 1, 1))
        name = f"{outdir}/multirail-timeline.png"
        fig.savefig(name, dpi=110)
        plt.close(fig)
        written.append(name)
    for n in written:
        print(f"plot_multirail.py: wrote {n}", file=sys.stderr)



# --- rates changing under a stream (multirail.sh --part rates) ---------------------------
RATE_PHASES = ["start", "rail1 100mbit", "rail0 500mbit", "both back", "rail1 cut", "rail1 restore"]


def rates_data(rows):
    """Per config: bins [(t_end, mb_s)], events {what: t}; and the optimum per rates."""
    opt = {r["rates"]: r for r in rows if r.get("test") == "rates_opt"}
    data = defaultdict(lambda: {"bins": [], "events": {}, "interval": 0.05})
    for r in rows:
        if r.get("part") == "rates" and r.get("test") == "bw_time" and not r.get("partial"):
            data[r["config"]]["bins"].append((r["t"], r["mb_s"]))
        elif r.get("part") == "rates" and r.get("test") == "bw_time_start":
            data[r["config"]]["interval"] = r["interval"]
            data[r["config"]]["size"] = r.get("size", 0)
        elif r.get("test") == "rate_event":
            data[r["config"]]["events"][r["what"]] = r["t"]
    return opt, data


def phase_optimum(opt, meta, what):
    """What TCP carries on the rails alone in the phase an event starts (MB/s)."""
    r0, r1 = meta.get("rate0", "1gbit"), meta.get("rate1", "250mbit")
    key = {"start": f"{r0}/{r1}", "rail1 100mbit": f"{r0}/100mbit", "rail0 500mbit": "500mbit/100mbit",
           "both back": f"{r0}/{r1}", "rail1 restore": f"{r0}/{r1}"}.get(what)
    if what == "rail1 cut":
        base = opt.get(f"{r0}/{r1}")
        return float(base["rails_mb_s"].split()[0]) if base else None
    return opt[key]["mb_s"] if key in opt else None


def reach_time(bins, start, end, target, iv, tol=0.05, span=4):
    """Seconds from start to the end of the first bin whose 200 ms (span bins) mean is within
    tol of target, or None."""
    inside = [(t, v) for t, v in bins if t - iv >= start - 1e-9 and t <= end + 1e-9]
    for i in range(len(inside) - span + 1):
        m = statistics.mean(v for _, v in inside[i:i + span])
        if abs(m / target - 1) <= tol:
            return inside[i][0] - start
    return None


def rates_summary(path):
    meta, rows = load(path)
    opt, data = rates_data(rows)
    out = ["## Rates changing under a stream (bw_time, 256 KiB messages, 50 ms bins, every byte checked)", ""]
    out.append("Optimum of a phase: the sum of what TCP (iperf3 through netlab bw) carries on each live rail"
               " alone at its rates. Steady: bins from 1 s after the event to the next one. Reached: from"
               " the event to the end of the first bin whose 200 ms mean is within 5% of the optimum.")
    out.append("")
    out.append("One message: the share of a steady bin's mean that one message is (bw_time counts a message"
               " whole in the bin its send completes in, so a bin's count moves by whole messages); 200 ms:"
               " sd/mean of the means of 4 bins in a row, where that step is a quarter as large.")
    out.append("")
    out.append("No event (noise floor): the same reach time measured from the middle of the phase, where"
               " nothing changed: what the host's noise alone makes of the 5% test.")
    out.append("")
    out.append("| MPI | phase (event at t) | optimum | steady mean | of optimum | variation (sd/mean) | one message | 200 ms | reached within 5% after | no event (noise floor) |")
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    for config, d in data.items():
        bins, ev, iv = sorted(d["bins"]), d["events"], d["interval"]
        if not bins:
            continue
        times = [("start", 0.0)] + sorted(((w, t) for w, t in ev.items()), key=lambda x: x[1])
        end_all = bins[-1][0]
        for k, (what, t) in enumerate(times):
            end = times[k + 1][1] if k + 1 < len(times) else end_all
            target = phase_optimum(opt, meta, what)
            steady = [v for tt, v in bins if tt - iv >= t + 1.0 and tt <= end]
            mean = statistics.mean(steady) if steady else 0.0
            cv = statistics.pstdev(steady) / mean if len(steady) > 1 and mean else 0.0
            quads = [statistics.mean(steady[i:i + 4]) for i in range(0, len(steady) - 3, 4)]
            cv4 = statistics.pstdev(quads) / mean if len(quads) > 1 and mean else 0.0
            one = d["size"] / 1e6 / iv / mean if mean and d.get("size") else 0.0
            reach = reach_time(bins, t, end, target, iv) if target and what != "start" else None
            mid = t + (end - t) / 2
            floor = reach_time(bins, mid, end, target, iv) if target else None
            out.append(f"| {LABELS.get(config, config)} | {what} ({t:.2f} s) | {fmt(target)} | {mean:.1f} | "
                       f"{(100 * mean / target if target else 0):.1f}% | {100 * cv:.1f}% | {100 * one:.1f}% | "
                       f"{100 * cv4:.1f}% | "
                       f"{'-' if what == 'start' else ('%.0f ms' % (1000 * reach) if reach is not None else 'never')} | "
                       f"{'%.0f ms' % (1000 * floor) if floor is not None else 'never'} |")
        if "rail1 cut" in ev and "rail1 restore" in ev:
            cut, back = ev["rail1 cut"], ev["rail1 restore"]
            alone = phase_optimum(opt, meta, "rail1 cut")
            # the stall: the longest run of bins below half of what rail0 alone carries
            run = best = 0.0
            for tt, v in bins:
                if tt - iv >= cut - 1e-9 and tt <= back + 2.0:
                    run = run + iv if v < alone / 2 else 0.0
                    best = max(best, run)
            full = phase_optimum(opt, meta, "rail1 restore")
            r = reach_time(bins, back, end_all, full, iv)
            out.append("")
            out.append(f"{LABELS.get(config, config)}: cut at {cut:.2f} s: stall (longest run of 50 ms bins below half of"
                       f" rail0 alone, {alone:.1f} MB/s) {1000 * best:.0f} ms; restored at {back:.2f} s: back within 5% of"
                       f" the full sum ({fmt(full)} MB/s) after {'%.2f s' % r if r is not None else 'never'}.")
            out.append("")
    return "\n".join(out)


def rates_plot(outdir, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    meta, rows = load(path)
    opt, data = rates_data(rows)
    fig, ax = plt.subplots(figsize=(11, 4.5))
    for config, d in data.items():
        bins = sorted(d["bins"])
        ax.plot([t for t, _ in bins], [v for _, v in bins], lw=0.8, label=LABELS.get(config, config))
    d0 = next(iter(data.values()), None)
    if d0:
        times = [("start", 0.0)] + sorted(d0["events"].items(), key=lambda x: x[1])
        end_all = max(t for t, _ in d0["bins"]) if d0["bins"] else 0
        for k, (what, t) in enumerate(times):
            end = times[k + 1][1] if k + 1 < len(times) else end_all
            target = phase_optimum(opt, meta, what)
            if target:
                ax.hlines(target, t, end, colors="k", linestyles="dotted", lw=1)
            if what != "start":
                ax.axvline(t, color="grey", lw=0.5)
                ax.text(t, ax.get_ylim()[1] if k else 0, what, rotation=90, va="top", fontsize=7)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("MB/s (50 ms bins)")
    ax.set_title("Rates changing under a stream; dotted: optimum (TCP alone per rail, summed)")
    ax.legend(loc="lower left", fontsize=8)
    fig.tight_layout()
    fig.savefig(f"{outdir}/multirail-rates.png", dpi=110)

def main(argv):
    if len(argv) == 3 and argv[1] == "--summary":
        print(summary(argv[2]))
        return 0
    if len(argv) == 3 and argv[1] == "--rates":
        print(rates_summary(argv[2]))
        return 0
    if len(argv) == 4 and argv[1] == "--rates-png":
        rates_plot(argv[2], argv[3])
        return 0
    if len(argv) == 4 and argv[1] == "--png":
        plot(argv[2], argv[3])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
