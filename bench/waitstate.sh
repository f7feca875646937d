#!/bin/sh
# Run a command once the machine is in the given state (docs/results/coll.md, "two
# states"): polls `linert` (bench/linert.c; build/bench/linert or the one on PATH) every
# half second until its line round trip is at or above THRESHOLD ns (slow) or below it
# (fast), then runs CMD and prints linert again after it, so each figure has its state.
#
#   bench/waitstate.sh slow|fast [-t THRESHOLD_NS (150)] [-w MAX_WAIT_S (300)] -- CMD...
#
# Exit status: CMD's, or 3 when the state did not come within MAX_WAIT_S.
# Use it under rmpi-timed for timed runs: rmpi-timed bench/waitstate.sh slow -- CMD...
set -eu
want=${1:?usage: waitstate.sh slow|fast [-t NS] [-w S] -- CMD...}
shift
thr=150
maxw=300
while [ $# -gt 0 ]; do
    case $1 in
    -t) thr=$2; shift 2 ;;
    -w) maxw=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "waitstate.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
case $want in slow | fast) ;; *) echo "waitstate.sh: state slow or fast, not $want" >&2; exit 2 ;; esac
lr=$(dirname "$0")/../build/bench/linert
[ -x "$lr" ] || lr=linert
rt() { "$lr" -n 9000 | sed 's/.*"rt_ns":\([0-9.]*\).*/\1/'; }
start=$(date +%s)
while :; do
    v=$(rt)
    if awk -v v="$v" -v t="$thr" -v w="$want" 'BEGIN { exit !((w == "slow") == (v >= t)) }'; then
        break
    fi
    if [ $(($(date +%s) - start)) -ge "$maxw" ]; then
        echo "waitstate.sh: no $want state within ${maxw}s (last linert ${v} ns)" >&2
        exit 3
    fi
    sleep 0.5
done
echo "# waitstate: $want, linert ${v} ns at $(date +%T)"
rc=0
"$@" || rc=$?
echo "# waitstate: linert $(rt) ns after, $(date +%T)"
exit $rc
