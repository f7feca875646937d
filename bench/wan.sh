#!/usr/bin/env bash
# Bandwidth against message size on one long 1 Gbit/s rail (seed infiniband-wan, Fig. 5):
# RailMPI by default (RMPI_WAN_TUNE=1: the eager limit follows the measured round trip)
# next to RMPI_WAN_TUNE=0 (the fixed 64 KiB), at each one-way delay, on tools/netlab.
# Root only (namespaces). One JSON line per measurement, with "delay", "config" and "rep";
# configurations alternate within a repetition so that outside load hits both alike.
#   bench/wan.sh [--delays 0,100us,1ms,10ms] [--sizes 8192:1048576] [--reps N] [--iters N]
#                [--window N] [--build DIR] [--out FILE]
# Defaults are short (--iters 10 windows of 16 messages): on a shared 2-core machine the
# figures are noisy; compare ratios within one run, not across runs.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
delays=0,100us,1ms,10ms sizes=8192:1048576 reps=1 iters=10 window=16 build=$root/build out=
while [ $# -gt 0 ]; do
  case $1 in
    --delays) delays=$2; shift ;;
    --sizes) sizes=$2; shift ;;
    --reps) reps=$2; shift ;;
    --iters) iters=$2; shift ;;
    --window) window=$2; shift ;;
    --build) build=$2; shift ;;
    --out) out=$2; shift ;;
    *) echo "usage: $0 [--delays LIST] [--sizes MIN:MAX] [--reps N] [--iters N] [--window N] [--build DIR] [--out FILE]" >&2; exit 2 ;;
  esac
  shift
done
[ "$(id -u)" = 0 ] || { echo "bench/wan.sh: needs root (network namespaces)" >&2; exit 77; }
netlab=$root/tools/netlab
mpiexec=$build/bin/mpiexec pt2pt=$build/bench/pt2pt
[ -x "$pt2pt" ] || cmake --build "$build" --target bench_pt2pt >/dev/null || exit 1
export NETLAB_DELAYLINE=$build/bin/rmpi_delayline NETLAB_PREFIX=wanb$$-
[ -n "$out" ] || { mkdir -p "$build/bench/results"; out=$build/bench/results/wan-$(date +%Y%m%d-%H%M%S).jsonl; }
: >"$out"
trap '"$netlab" down >/dev/null 2>&1' EXIT
for d in ${delays//,/ }; do
  spec=1gbit; [ "$d" = 0 ] || spec=1gbit@$d
  "$netlab" up "$spec" >/dev/null || { echo "netlab up $spec failed" >&2; exit 1; }
  for rep in $(seq 1 "$reps"); do
    for tune in 1 0; do
      config=default; [ $tune = 0 ] && config=wan_tune_0
      "$netlab" exec nsA timeout 600 "$mpiexec" -n 2 --host nsA,nsB --agent "$netlab agent" --pmi-iface ctl \
        -genv RMPI_TCP_IFACES rail0 -genv RMPI_WAN_TUNE $tune \
        "$pt2pt" -t bw -m "$sizes" -i "$iters" -x 1 -w "$window" 2>>"$out.log" |
        grep '^{"test"' | sed "s/}\$/,\"delay\":\"$d\",\"config\":\"$config\",\"rep\":$rep}/" >>"$out"
    done
  done
  "$netlab" down >/dev/null
done
# Ratios default / RMPI_WAN_TUNE=0 per delay and size (medians over the repetitions).
python3 - "$out" <<'PY'
import json, sys, statistics
from collections import defaultdict
v = defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    v[(r["delay"], r["size"], r["config"])].append(r["mb_s"])
keys = sorted({(d, s) for d, s, _ in v}, key=lambda k: (k[0], k[1]))
print("| delay | size | default MB/s | RMPI_WAN_TUNE=0 MB/s | ratio |\n|---|---|---|---|---|")
for d, s in keys:
    a, b = v.get((d, s, "default")), v.get((d, s, "wan_tune_0"))
    if a and b:
        ma, mb = statistics.median(a), statistics.median(b)
        print(f"| {d} | {s} | {ma:.1f} | {mb:.1f} | {ma / mb:.2f} |")
PY
echo "results: $out"
