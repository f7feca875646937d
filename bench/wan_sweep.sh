#!/usr/bin/env bash
# The whole of seed infiniband-wan's Figs. 5-7 on the lab in one command, with Open MPI and
# MPICH in the same run, and the plots drawn from it (docs/results/wan.md):
#   Fig. 5  bench/wan.sh --test bw and --test lat, 1 B..16 MiB, one-way delays 0, 100 us,
#           1 ms and 10 ms on one 1 Gbit/s rail;
#   Fig. 6  bench/wan.sh --test mr, 1..4 pairs across the link, 1 B..64 KiB, 1 and 10 ms;
#   Fig. 7  bench/wan_coll.sh --refs, Bcast and Allreduce, 1 B..4 MiB (every 4x, and 128 KiB) at
#           1 ms, 2 sites x 2 hosts
#           in three placements: 1 rank per host (block), 2 per host in block and in cyclic order.
#   bench/wan_sweep.sh [--out DIR] [--reps N] [--only bw,lat,mr,coll] [--lock FILE] [--build DIR]
# Each part writes its JSON lines to DIR (default build/bench/results/wan-sweep-DATE) as
# fig5-bw.jsonl, fig5-lat.jsonl, fig6-mr.jsonl and fig7-<placement>.jsonl, with each script's
# table in the matching .txt, then bench/plot_wan.py draws DIR/wan-{bw,lat,mr,coll}.png from
# every fig*.jsonl in DIR when matplotlib is there (so parts run at different times into one
# DIR are drawn together). --reps (default 3 for Fig. 5, 2 for Figs. 6 and 7): repetitions, the
# configurations alternating inside each. --lock FILE: each part runs under `flock FILE`, so
# that other timing runs on the machine can take turns between parts. About an hour on a
# 2-core machine. Root only.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
out= reps= only=bw,lat,mr,coll lock= build=$root/build
usage="usage: $0 [--out DIR] [--reps N] [--only bw,lat,mr,coll] [--lock FILE] [--build DIR]"
while [ $# -gt 0 ]; do
  case $1 in
    --out | --reps | --only | --lock | --build)
      [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
      printf -v "${1#--}" %s "$2"; shift 2 ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "bench/wan_sweep.sh: needs root (network namespaces)" >&2; exit 77; }
[[ -z $reps || $reps =~ ^[1-9][0-9]*$ ]] || { echo "$usage (--reps: a count)" >&2; exit 2; }
[[ $only =~ ^(bw|lat|mr|coll)(,(bw|lat|mr|coll))*$ ]] || { echo "$usage (--only: bw, lat, mr, coll)" >&2; exit 2; }
out=${out:-$build/bench/results/wan-sweep-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out" || exit 1
want() { [[ ,$only, == *,$1,* ]]; }
fail=0
run() { # name, then the command; its table to name.txt, a line of time and load to the log
  local name=$1 t0=$SECONDS
  shift
  echo "$(date -u +%H:%M:%S) $name: $* (load $(cut -d' ' -f1 /proc/loadavg))" | tee -a "$out/sweep.log"
  ${lock:+flock "$lock"} "$@" --build "$build" --out "$out/$name.jsonl" >"$out/$name.txt" 2>&1 || { echo "  $name failed, see $out/$name.txt" | tee -a "$out/sweep.log"; fail=1; }
  echo "  $name: $((SECONDS - t0)) s (load $(cut -d' ' -f1 /proc/loadavg))" | tee -a "$out/sweep.log"
}
for t in bw lat; do
  want $t && run fig5-$t "$here/wan.sh" --test $t --delays 0,100us,1ms,10ms --sizes 1:16777216 --iters 4 --window 8 \
    --reps "${reps:-3}" --job-timeout 90
done
want mr && run fig6-mr "$here/wan.sh" --test mr --delays 1ms,10ms --pairs 1,2,3,4 --sizes 1:65536 --iters 5 \
  --window 32 --reps "${reps:-2}" --job-timeout 60
if want coll; then
  for p in 1:block 2:block 2:cyclic; do
    run "fig7-ppn${p%:*}-${p#*:}" "$here/wan_coll.sh" --delay 1ms --colls bcast,allreduce \
      --sizes 1,4,16,64,256,1024,4096,16384,65536,131072,262144,1048576,4194304 \
      --ppn "${p%:*}" --map "${p#*:}" --refs --reps "${reps:-2}"
  done
fi
if python3 -c 'import matplotlib' 2>/dev/null; then
  python3 "$here/plot_wan.py" --png "$out" "$out"/fig*.jsonl || fail=1
else
  echo "bench/wan_sweep.sh: no matplotlib (Debian: python3-matplotlib); the tables are in $out/*.txt, no plots"
fi
echo "bench/wan_sweep.sh: results in $out"
exit $fail
