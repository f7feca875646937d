#!/usr/bin/env bash
# Congestion control per peer path (seed infiniband-wan; src/net/tcp/README.md): two
# namespaces joined by a far rail (rail0, 1gbit@DELAY) and a near one (rail1, no delay).
# A job over one rail at a time; RMPI_REPORT reads each connection's congestion control back
# from its socket (getsockopt TCP_CONGESTION) and says why. Checks, on both ranks:
# - RMPI_TCP_FAR_CONGESTION=reno: rail0 (round trip 2 x DELAY at connect) runs reno, rail1
#   RMPI_TCP_NEAR_CONGESTION's cubic (the namespace's default if the kernel has no cubic;
#   reno is built into every kernel, and is not the default here unless the kernel's is
#   reno, which the test then says and skips);
# - the defaults: both rails run cubic when the kernel has it;
# - RMPI_TCP_NEAR_CONGESTION=reno: the near rail runs reno; empty: the namespace's default;
# - RMPI_TCP_CONGESTION_CONTROL wins on both rails; RMPI_WAN_TUNE=0 leaves both on the
#   default; RMPI_TCP_FAR_RTT above the path's round trip makes rail0 near;
# - RMPI_TCP_FAR_CONGESTION naming no congestion control: the default, one warning per rank;
# - RMPI_REPORT=json: rank 0's connections list the far rail with reno, choice "far" and a
#   minimum round trip of at least 2 x DELAY less 5% (load only inflates it);
# - the far send buffer (RMPI_TCP_FAR_SNDBUF, off by default): with RMPI_TCP_FAR_SNDBUF=4m
#   the far rail's sockets get a fixed send buffer of twice 4 MiB (veth says 10 Gbit/s, so
#   2 x BDP is above the cap) when net.core.wmem_max grants 4 MiB, none when it does not;
#   the near rail none; the defaults and RMPI_WAN_TUNE=0 none; 1m asks for 1 MiB (the
#   kernel reports 2 MiB).
# Robust on a loaded machine: the far rail's round trip can only be inflated by load, and
# a near rail taken for far (a round trip inflated past RMPI_TCP_FAR_RTT) gets up to three
# runs, each printed.
# usage: congestion.sh MPIEXEC RING NETLAB DELAY
set -u
mpiexec=$1 ring=$2 netlab=$3 delay=${4:-5ms}
[ "$(id -u)" = 0 ] || { echo "skip: needs root for ip netns"; exit 77; }
command -v ip >/dev/null && ip netns list >/dev/null 2>&1 || { echo "skip: no ip netns"; exit 77; }
export NETLAB_PREFIX=cc$$-
"$netlab" up "1gbit@$delay" 1gbit >/dev/null || { echo "FAIL: netlab up"; exit 1; }
trap '"$netlab" down >/dev/null 2>&1' EXIT
fail() { echo "FAIL: $*"; exit 1; }
default=$("$netlab" exec nsA cat /proc/sys/net/ipv4/tcp_congestion_control)
avail=$("$netlab" exec nsA cat /proc/sys/net/ipv4/tcp_available_congestion_control)
echo "namespace default: $default; available: $avail"
[ "$default" != reno ] || { echo "skip: the kernel's default is reno, which the far choice cannot be told from"; exit 77; }
run() { # RAIL [ENV...]: rank 0 in nsA, rank 1 in nsB, over that rail
  local rail=$1; shift
  "$netlab" exec nsA timeout 150 "$mpiexec" -n 2 --host nsA,nsB --agent "$netlab agent" --pmi-iface ctl \
    -genv RMPI_TCP_IFACES "$rail" -genv RMPI_REPORT 1 "$@" "$ring" 2>&1
}
expect() { # LABEL RAIL NAME REASON: on both ranks; 1 when a check misses (why set)
  local r c
  for r in 0 1; do
    c=$(echo "$out" | sed -n "s/.*rank $r -> [0-9]*: connection tcp:$2: congestion control \([a-z0-9_]*\) .*/\1/p" | head -1)
    [ "$c" = "$3" ] || { why="$1: rank $r runs '$c' on $2, not $3"; return 1; }
    echo "$out" | grep -q "rank $r -> [0-9]*: connection tcp:$2: .*$4" || { why="$1: rank $r's reason on $2 is not '$4'"; return 1; }
  done
}
tries() { # LABEL RAIL NAME REASON [ENV...]: up to three runs of the job, each printed
  local i
  for i in 1 2 3; do
    out=$(run "$2" "${@:5}") || { echo "$out"; fail "$1: ring exited $?"; }
    echo "$out" | grep "connection tcp:"
    expect "$1" "$2" "$3" "$4" && { echo "ok: $1, $2"; return 0; }
    echo "attempt $i: $why"
  done
  fail "$why (three runs)"
}

sndbuf() { # LABEL RAIL BYTES: both ranks' connection line on RAIL says send buffer BYTES (0: none)
  local r s
  for r in 0 1; do
    s=$(echo "$out" | sed -n "s/.*rank $r -> [0-9]*: connection tcp:$2: .*, send buffer \([0-9]*\) bytes (far).*/\1/p" | head -1)
    [ "${s:-0}" = "$3" ] || { echo "$out" | grep "connection tcp:"; fail "$1: rank $r's send buffer on $2 is '${s:-none}', not $3"; }
  done
  echo "ok: $1, $2 send buffer ${3/#0/autotuned}"
}
wmax=$("$netlab" exec nsA cat /proc/sys/net/core/wmem_max)
cap=$((4 << 20)) want=0
[ "$wmax" -ge $cap ] && want=$((2 * cap))
echo "net.core.wmem_max $wmax: the far send buffer expected ${want/#0/autotuned}"
far=(-genv RMPI_TCP_FAR_CONGESTION reno -genv RMPI_TCP_FAR_SNDBUF 4m)
tries "far reno" rail0 reno "far: round trip" "${far[@]}"
sndbuf "far reno" rail0 $want
near=$default near_why="near_refused\|refused RMPI_TCP_NEAR_CONGESTION"
case " $avail " in *" cubic "*) near=cubic near_why="near: round trip" ;; esac
tries "far reno" rail1 "$near" "$near_why" "${far[@]}"
sndbuf "far reno" rail1 0
if case " $avail " in *" cubic "*) true ;; *) false ;; esac; then
  tries "defaults" rail0 cubic "far: round trip"
  sndbuf "defaults" rail0 0
  tries "defaults" rail1 cubic "near: round trip"
else
  echo "no cubic in this kernel: the defaults' far and near choices are not checked"
fi
tries "near reno" rail1 reno "RMPI_TCP_NEAR_CONGESTION=reno" -genv RMPI_TCP_NEAR_CONGESTION reno
tries "near empty" rail1 "$default" "the kernel's default: round trip .* near" -genv RMPI_TCP_NEAR_CONGESTION ''
if [ "$wmax" -ge $((1 << 20)) ]; then
  tries "RMPI_TCP_FAR_SNDBUF=1m" rail0 reno "far: round trip" -genv RMPI_TCP_FAR_CONGESTION reno -genv RMPI_TCP_FAR_SNDBUF 1m
  sndbuf "RMPI_TCP_FAR_SNDBUF=1m" rail0 $((2 << 20))
fi
# RMPI_REPORT=json's connections: the same facts with the round trip as a number
case $delay in *ms) dus=$(awk -v d="${delay%ms}" 'BEGIN { print d * 1000 }') ;; *us) dus=${delay%us} ;; *) dus=0 ;; esac
out=$("$netlab" exec nsA timeout 150 "$mpiexec" -n 2 --host nsA,nsB --agent "$netlab agent" --pmi-iface ctl \
  -genv RMPI_TCP_IFACES rail0 -genv RMPI_REPORT json "${far[@]}" "$ring" 2>&1) || { echo "$out"; fail "json: ring exited $?"; }
conn=$(echo "$out" | grep -o '"rank": 0, .*' | grep -o '"connections": \[{"peer": 1, "rail": "tcp:rail0", "congestion": "reno", "choice": "far", "min_rtt_us": [0-9.]*')
[ -n "$conn" ] || { echo "$out"; fail "json: rank 0 lists no far reno connection on tcp:rail0"; }
echo "$conn"
awk -v r="${conn##* }" -v d="$dus" 'BEGIN { exit !(r >= 2 * d * 0.95) }' || fail "json: min_rtt_us ${conn##* } below 2 x $delay"
echo "ok: json connections (min_rtt_us ${conn##* }, 2 x $delay = $((2 * ${dus%.*})) us)"
tries "explicit knob" rail0 reno "RMPI_TCP_CONGESTION_CONTROL=reno" -genv RMPI_TCP_CONGESTION_CONTROL reno
tries "explicit knob" rail1 reno "RMPI_TCP_CONGESTION_CONTROL=reno" -genv RMPI_TCP_CONGESTION_CONTROL reno
tries "RMPI_WAN_TUNE=0" rail0 "$default" "RMPI_WAN_TUNE=0" -genv RMPI_WAN_TUNE 0 "${far[@]}"
sndbuf "RMPI_WAN_TUNE=0" rail0 0
tries "threshold above the path" rail0 "$near" "$near_why" -genv RMPI_TCP_FAR_RTT 1000000 "${far[@]}"
# A name the kernel does not know: the far rail keeps the default, RMPI_REPORT says why, and
# each rank warns once, naming the knob.
tries "unknown name" rail0 "$default" "the kernel refused RMPI_TCP_FAR_CONGESTION=nosuch_cc" \
  -genv RMPI_TCP_FAR_CONGESTION nosuch_cc
n=$(echo "$out" | grep -c "RMPI_TCP_FAR_CONGESTION=nosuch_cc: the kernel refused it")
[ "$n" = 2 ] || { echo "$out"; fail "unknown name: $n warnings, not one per rank"; }
echo "PASS: far rail on its own congestion control and send buffer, near rail on $near (kernel default $default), knobs win"
