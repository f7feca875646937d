#!/usr/bin/env bash
# Bandwidth against message size on one long 1 Gbit/s rail (seed infiniband-wan, Fig. 5):
# RailMPI by default (RMPI_WAN_TUNE=1: the eager limit follows the measured round trip,
# spare TCP streams wake when the bandwidth-delay product needs them, small messages
# coalesce) next to RMPI_WAN_TUNE=0 (the fixed 64 KiB, one stream), and Open MPI (ob1 over
# btl tcp) and MPICH (ch4:ucx over UCX's tcp) on the same namespaces, at each one-way delay,
# on tools/netlab. Root only (namespaces). One JSON line per measurement, with "delay",
# "config" and "rep"; configurations alternate within a repetition so that outside load
# hits them alike.
#   bench/wan.sh [--delays 0,100us,1ms,10ms] [--sizes 8192:1048576] [--reps N] [--iters N]
#                [--window N] [--only railmpi,openmpi,mpich] [--test bw|lat|mr] [--pairs 1,2,3,4]
#                [--cc LIST] [--knob LIST] [--min-time SECONDS] [--job-timeout SECONDS] [--build DIR] [--out FILE]
# --test lat: ping-pong latency (half the round trip, us) instead of bandwidth (--iters
# ping-pongs per size; the table's ratios are then the other's time over RailMPI's, so above
# 1 is RailMPI faster, as for bandwidth).
# --test mr: the multi-pair message rate instead (seed infiniband-wan Fig. 6, bench/mpair.c):
# for each count P of --pairs, P ranks on nsA send to P ranks on nsB at once, all pairs
# across the one long rail; messages per second of all pairs together. Each size runs
# --min-time seconds at least (default 0.25; mpair -T: windows are added after the first
# --iters until then): 5 windows of 32 messages of 4 KiB were about 20 ms of link time,
# shorter than a time slice of a loaded 2-core machine, and such cells swung by 2x.
# Defaults are short (--iters 10 windows of 16 messages): on a shared 2-core machine the
# figures are noisy; compare ratios within one run, not across runs. The reference MPIs
# run when found (mpicc.openmpi/mpirun.openmpi, mpicc.mpich/mpiexec.mpich), unless --only
# leaves them out. --cc bbr,cubic adds RailMPI (default settings) with
# RMPI_TCP_CONGESTION_CONTROL set to each name, as configurations cc_<name>. --knob
# RMPI_X=V,RMPI_Y=W adds RailMPI (default settings) with each one variable set, as
# configurations knob_RMPI_X=V (e.g. the default next to a knob's earlier value).
# --job-timeout (default 120 s): each job's limit. A job that runs past it (MPICH's ranks
# have hung in multi-pair runs) is killed, and the run goes on: the job's line in the output
# says "hung" with the sizes it printed before, and the table marks the cells it left empty.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
delays=0,100us,1ms,10ms sizes=8192:1048576 reps=1 iters=10 window=16 build=$root/build out= only= test=bw pairs=1 cc= knob=
jt=120 min_time=0.25
while [ $# -gt 0 ]; do
  case $1 in
    --delays) delays=$2; shift ;;
    --sizes) sizes=$2; shift ;;
    --reps) reps=$2; shift ;;
    --iters) iters=$2; shift ;;
    --window) window=$2; shift ;;
    --build) build=$2; shift ;;
    --out) out=$2; shift ;;
    --only) only=$2; shift ;;
    --test) test=$2; shift ;;
    --pairs) pairs=$2; shift ;;
    --cc) cc=$2; shift ;;
    --knob) knob=$2; shift ;;
    --job-timeout) jt=$2; shift ;;
    --min-time) min_time=$2; shift ;;
    *) echo "usage: $0 [--delays LIST] [--sizes MIN:MAX] [--reps N] [--iters N] [--window N] [--only LIST] [--test bw|lat|mr] [--pairs LIST] [--cc LIST] [--knob LIST] [--min-time SECONDS] [--job-timeout SECONDS] [--build DIR] [--out FILE]" >&2; exit 2 ;;
  esac
  shift
done
[[ $jt =~ ^[1-9][0-9]*$ ]] || { echo "bench/wan.sh: --job-timeout: whole seconds" >&2; exit 2; }
[[ $min_time =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "bench/wan.sh: --min-time: seconds, e.g. 0.25" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "bench/wan.sh: needs root (network namespaces)" >&2; exit 77; }
case $test in bw | lat) prog=pt2pt pairs=1 ;; mr) prog=mpair ;; *) echo "bench/wan.sh: --test bw, lat or mr" >&2; exit 2 ;; esac
[[ $pairs =~ ^[1-9](,[1-9])*$ ]] || { echo "bench/wan.sh: --pairs: counts 1..9, comma-separated" >&2; exit 2; }
netlab=$root/tools/netlab
mpiexec=$build/bin/mpiexec bench=$build/bench/$prog
[ -x "$bench" ] || cmake --build "$build" --target "bench_$prog" >/dev/null || exit 1
export NETLAB_DELAYLINE=$build/bin/rmpi_delayline NETLAB_PREFIX=wanb$$-
[ -n "$out" ] || { mkdir -p "$build/bench/results"; out=$build/bench/results/wan-$(date +%Y%m%d-%H%M%S).jsonl; }
: >"$out"
wanted() { [ -z "$only" ] || case ",$only," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
# Open MPI refuses to start as root unless told both of these.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ref=$build/bench/ref configs=()
mkdir -p "$ref"
wanted railmpi && configs+=(default wan_tune_0)
[[ -z $cc || $cc =~ ^[a-z0-9_]+(,[a-z0-9_]+)*$ ]] || { echo "bench/wan.sh: --cc: congestion control names, comma-separated" >&2; exit 2; }
for c in ${cc//,/ }; do configs+=("cc_$c"); done
[[ -z $knob || $knob =~ ^RMPI_[A-Z0-9_]+=[A-Za-z0-9._]+(,RMPI_[A-Z0-9_]+=[A-Za-z0-9._]+)*$ ]] ||
  { echo "bench/wan.sh: --knob: RMPI_NAME=VALUE, comma-separated" >&2; exit 2; }
for k in ${knob//,/ }; do configs+=("knob_$k"); done
if wanted openmpi && command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null; then
  mpicc.openmpi -std=c11 -O2 -o "$ref/$prog.openmpi" "$here/$prog.c" && configs+=(openmpi)
fi
if wanted mpich && command -v mpicc.mpich >/dev/null && command -v mpiexec.mpich >/dev/null; then
  mpicc.mpich -std=c11 -O2 -o "$ref/$prog.mpich" "$here/$prog.c" && configs+=(mpich)
fi
[ ${#configs[@]} -gt 0 ] || { echo "bench/wan.sh: nothing to run" >&2; exit 1; }
# One command per configuration: data over rail0 only, the launchers' own traffic over ctl.
# Open MPI: ob1 over btl tcp on rail0. MPICH (Debian's is ch4:ucx): UCX's tcp on rail0, and on
# lo between ranks of one host (without it UCX finds no path between them and the job stops).
run_config() { # CONFIG PAIRS: P ranks per host, ranks 0..P-1 on nsA
  local args=(-m "$sizes" -i "$iters" -w "$window") p=$2
  case $test in bw) args+=(-t bw -x 1) ;; lat) args+=(-t latency -x 1) ;; mr) args+=(-T "$min_time") ;; esac
  case $1 in
    default | wan_tune_0 | cc_* | knob_*)
      local env=(-genv RMPI_WAN_TUNE "$([ "$1" = wan_tune_0 ] && echo 0 || echo 1)")
      case $1 in
        cc_*) env+=(-genv RMPI_TCP_CONGESTION_CONTROL "${1#cc_}") ;;
        knob_*) local kv=${1#knob_} && env+=(-genv "${kv%%=*}" "${kv#*=}") ;;
      esac
      "$netlab" exec nsA timeout -k 5 "$jt" "$mpiexec" -n $((2 * p)) --host "nsA:$p,nsB:$p" --agent "$netlab agent" \
        --pmi-iface ctl -genv RMPI_TCP_IFACES rail0 "${env[@]}" "$bench" "${args[@]}" ;;
    openmpi)
      "$netlab" exec nsA timeout -k 5 "$jt" mpirun.openmpi -np $((2 * p)) --host "nsA:$p,nsB:$p" --bind-to none \
        --mca plm_rsh_agent "$netlab agent" --mca plm_rsh_no_tree_spawn 1 --mca oob_tcp_if_include ctl \
        --mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include rail0 "$ref/$prog.openmpi" "${args[@]}" ;;
    mpich)
      "$netlab" exec nsA timeout -k 5 "$jt" mpiexec.mpich -n $((2 * p)) -hosts "nsA:$p,nsB:$p" -launcher rsh \
        -launcher-exec "$netlab" -iface ctl -genv UCX_TLS tcp,self -genv UCX_NET_DEVICES "rail0$([ "$p" = 1 ] || echo ,lo)" \
        "$ref/$prog.mpich" "${args[@]}" ;;
  esac
}
trap '"$netlab" down >/dev/null 2>&1' EXIT
trap 'exit 143' TERM INT # so that a timeout's or flock's TERM still takes the lab down
for d in ${delays//,/ }; do
  spec=1gbit; [ "$d" = 0 ] || spec=1gbit@$d
  "$netlab" up "$spec" >/dev/null || { echo "netlab up $spec failed" >&2; exit 1; }
  for rep in $(seq 1 "$reps"); do
    for p in ${pairs//,/ }; do
      for config in "${configs[@]}"; do
        run_config "$config" "$p" 2>>"$out.log" |
          grep '^{"test"' | sed "s/}\$/,\"delay\":\"$d\",\"config\":\"$config\",\"rep\":$rep}/" >>"$out"
        # timeout's 124 (TERM) or 137 (KILL): the job hung; say so and go on (netlab down
        # at the delay's end ends what the killed launcher left in the namespaces)
        case ${PIPESTATUS[0]} in 124 | 137)
          echo "{\"test\":\"$test\",\"pairs\":$p,\"hung\":$jt,\"delay\":\"$d\",\"config\":\"$config\",\"rep\":$rep}" >>"$out"
          echo "bench/wan.sh: $config, $d, $p pairs, repetition $rep: hung, killed after $jt s" >&2 ;;
        esac
      done
    done
  done
  "$netlab" down >/dev/null
done
# Ratios default / RMPI_WAN_TUNE=0 per delay (pairs) and size (medians over the repetitions).
python3 - "$out" <<'PY'
import json, sys, statistics
from collections import defaultdict
v = defaultdict(list)
mr = lat = False
hung = defaultdict(int)  # (delay, pairs, config): jobs that hung
for line in open(sys.argv[1]):
    r = json.loads(line)
    mr, lat = r["test"] == "mr", r["test"] in ("latency", "lat")
    if "hung" in r:
        hung[(r["delay"], r.get("pairs", 1), r["config"])] += 1
        continue
    v[(r["delay"], r.get("pairs", 1), r["size"], r["config"])].append(
        r["msg_s"] if mr else r["latency_us"] if lat else r["mb_s"])
def secs(d):  # "0", "100us", "1ms", "10ms" -> seconds, for the table's order
    for unit, f in (("us", 1e-6), ("ms", 1e-3), ("s", 1.0)):
        if d.endswith(unit):
            return float(d[: -len(unit)]) * f
    return float(d)
keys = sorted({k[:3] for k in v}, key=lambda k: (secs(k[0]), k[1], k[2]))
extra = sorted({k[3] for k in v if k[3].startswith(("cc_", "knob_"))})
cols = [c for c in ["default", "wan_tune_0"] + extra + ["openmpi", "mpich"]
        if any(k[3] == c for k in v) or any(k[2] == c for k in hung)]
names = {"default": "RailMPI", "wan_tune_0": "RMPI_WAN_TUNE=0", "openmpi": "Open MPI", "mpich": "MPICH"}
names.update({c: "RailMPI " + c.split("_", 1)[1] for c in extra})
unit, fmt = ("msg/s", "%.0f") if mr else ("us", "%.1f") if lat else ("MB/s", "%.1f")
# ratios: above 1 is RailMPI faster (for latency the other's time over RailMPI's)
speed = (lambda a, b: b / a) if lat else (lambda a, b: a / b)
med = lambda k, c: statistics.median(v[k + (c,)]) if v.get(k + (c,)) else None
print("| delay | " + ("pairs | " if mr else "") + "size | " + " | ".join(f"{names[c]} {unit}" for c in cols)
      + (" | WAN_TUNE=0 / RailMPI | best other / RailMPI |" if lat else " | RailMPI / WAN_TUNE=0 | RailMPI / best other |"))
print("|---" * (len(cols) + 4 + mr) + "|")
for k in keys:
    m = {c: med(k, c) for c in cols}
    # a cell without a figure whose configuration hung there says so; "(hung N)" after a
    # median: N of its jobs hung, the median is of what the others printed
    cells = [(fmt % m[c] if m[c] is not None else "hung" if hung[(k[0], k[1], c)] else "-")
             + (" (hung %d)" % hung[(k[0], k[1], c)] if m[c] is not None and hung[(k[0], k[1], c)] else "")
             for c in cols]
    r0 = "%.2f" % speed(m["default"], m["wan_tune_0"]) if m.get("default") and m.get("wan_tune_0") else "-"
    others = [m[c] for c in ("openmpi", "mpich") if m.get(c)]
    best = (min if lat else max)(others) if others else None
    r1 = "%.2f" % speed(m["default"], best) if m.get("default") and others else "-"
    print(f"| {k[0]} | " + (f"{k[1]} | " if mr else "") + f"{k[2]} | " + " | ".join(cells) + f" | {r0} | {r1} |")
PY
echo "results: $out"
