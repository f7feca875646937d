#!/usr/bin/env python3
"""Socket states of a lab run over time (docs/results/wan.md, 2026-11-29 20:05: "Bcast 16 KiB ... where the time goes", "10 ms, 4 MiB: the spread settled").

  bench/ss_trace.py record OUT NS [NS...] [--interval S] [--seconds S]
      samples `ss -tinm state established` in each network namespace NS (full names, e.g.
      wcb123-nsA1) every S seconds (0.1) into OUT until killed (TERM/INT) or --seconds pass.
  bench/ss_trace.py show OUT [--match TEXT] [--min-bytes N]
      one line per sample and socket whose "local peer" text contains TEXT (all when
      omitted) and that sent at least N bytes (1e6): time since the first sample, the
      congestion control, bytes sent and the rate since the previous sample, cwnd, smoothed
      round trip, the kernel's unsent bytes (notsent) and send queue, the send buffer (tb),
      and the kernel's cumulative limits (rwnd_limited, sndbuf_limited), retransmissions.

Root only (ip netns exec). Sampling costs each namespace an ss process per interval, so on
a loaded machine keep the interval at 0.05 s or more and compare runs sampled alike.
"""
import re
import signal
import subprocess
import sys
import time


def record(out, names, interval, seconds):
    stop = [False]
    signal.signal(signal.SIGTERM, lambda *_: stop.__setitem__(0, True))
    end = time.time() + seconds if seconds > 0 else None
    with open(out, "w") as f:
        try:
            while not stop[0] and (end is None or time.time() < end):
                f.write(f"T {time.time():.6f}\n")
                for ns in names:
                    r = subprocess.run(["ip", "netns", "exec", ns, "ss", "-tinm", "state", "established"],
                                       capture_output=True, text=True)
                    f.write(f"NS {ns}\n{r.stdout}")
                f.flush()
                time.sleep(interval)
        except KeyboardInterrupt:
            pass


def field(detail, key):
    m = re.search(r"\b" + key + r":(\S+)", detail)
    return m.group(1) if m else "-"


def show(path, match, min_bytes):
    lines = open(path).read().split("\n")
    t0 = t = None
    ns = ""
    prev = {}
    for i, line in enumerate(lines):
        if line.startswith("T "):
            t = float(line[2:])
            t0 = t if t0 is None else t0
            continue
        if line.startswith("NS "):
            ns = line[3:]
            continue
        m = re.match(r"\s*(\d+)\s+(\d+)\s+(\S+)\s+(\S+)", line)
        if not m or i + 1 >= len(lines) or t is None or not lines[i + 1].startswith("\t"):
            continue
        key = f"{ns} {m.group(3)} {m.group(4)}"
        if match and match not in key:
            continue
        d = lines[i + 1]
        sent = int(field(d, "bytes_sent")) if field(d, "bytes_sent") != "-" else 0
        if sent < min_bytes:
            continue
        p = prev.get(key)
        rate = (sent - p[1]) / (t - p[0]) / 1e6 if p and t > p[0] else 0.0
        prev[key] = (t, sent)
        cc = next((c for c in ("cubic", "bbr", "reno") if f" {c} " in d), "?")
        tb = re.search(r"\btb(\d+)", d)
        print(f"{t - t0:7.3f} {key} {cc} sent {sent / 1e6:.1f} MB rate {rate:.1f} MB/s cwnd {field(d, 'cwnd')} "
              f"rtt {field(d, 'rtt')} notsent {field(d, 'notsent')} sendq {m.group(2)} tb {tb.group(1) if tb else '-'} "
              f"rwnd_limited {field(d, 'rwnd_limited')} sndbuf_limited {field(d, 'sndbuf_limited')} "
              f"retrans {field(d, 'retrans')}")


def main(argv):
    def opt(name, default):
        if name in argv:
            k = argv.index(name)
            v = argv[k + 1]
            del argv[k:k + 2]
            return v
        return default

    if len(argv) >= 3 and argv[0] == "record":
        interval, seconds = float(opt("--interval", "0.1")), float(opt("--seconds", "0"))
        record(argv[1], argv[2:], interval, seconds)
    elif len(argv) >= 2 and argv[0] == "show":
        match, min_bytes = opt("--match", ""), float(opt("--min-bytes", "1e6"))
        show(argv[1], match, min_bytes)
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
