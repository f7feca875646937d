#!/usr/bin/env bash
# tools/netlab's own tests: the delay line gives the round trip it promises and one TCP
# stream gets what the link allows, min(RATE, WINDOW/RTT).
# usage: netlab.sh NETLAB CASE [ARGS]
#   rtt DELAY             up 1gbit@DELAY: the median ping RTT over rail0 is 2 x DELAY plus the
#                         base RTT (the median over the undelayed ctl link), within 5%
#   tcp SPEC [WINDOW]     up SPEC: one TCP stream nsA -> nsB over rail0 (3 s, the first 0.5 s
#                         not counted) gets min(RATE x 1448/1514, WINDOW x 8 / RTT) within 15%
#   sites                 up --sites 2x2 1gbit 100mbit@5ms: in-site RTT under 1 ms, cross-site
#                         RTT 10 ms + base within 5%, agent hostnames, a cross-site TCP stream
#                         gets the WAN rate
#   down                  up with two delayed rails, down: no namespace, no delay line left
# RATE x 1448/1514: tbf counts whole Ethernet frames (1514 bytes carry 1448 of payload with
# TCP timestamps). WINDOW: the receiver clamps its window (TCP_WINDOW_CLAMP); RTT is the
# measured idle ping RTT. 15% leaves room for a sender in python on 2 busy cores and for the
# tbf burst at the start; on an idle machine both regimes come within 1-2%.
# Each run uses its own namespace prefix (NETLAB_PREFIX=t<pid>-), so runs from other trees
# cannot collide with it. Exit 77 (skip) without root or without ip netns.
set -u
netlab=$1 case=$2
shift 2
[ "$(id -u)" = 0 ] || { echo "skip: needs root for ip netns"; exit 77; }
command -v ip >/dev/null && ip netns list >/dev/null 2>&1 || { echo "skip: no ip netns"; exit 77; }
export NETLAB_PREFIX=t$$-
trap '"$netlab" down >/dev/null 2>&1' EXIT
fail() { echo "FAIL: $*"; "$netlab" status; exit 1; }

# median RTT in ms from HOST to ADDR
rtt() { "$netlab" ping "$1" "$2" "${3:-20}" | tee /dev/stderr | sed -n 's/.*median=\([0-9.]*\).*/\1/p'; }
# ms of a delay such as 5ms, 250us
ms() { echo "$1" | awk '{ v = $1 + 0; if ($1 ~ /us$/) v /= 1000; else if ($1 ~ /[0-9]s$/) v *= 1000; print v }'; }
mbit() { # tc rate -> Mbit/s
  echo "$1" | awk '{ r = tolower($1); n = r + 0; sub(/^[0-9.]+/, "", r)
    print n * ((r == "gbit") ? 1000 : (r == "mbit") ? 1 : (r == "kbit") ? 0.001 : 0) }'
}
within() { # MEASURED EXPECTED PERCENT -> exit 0 when |m - e| <= p% of e
  awk -v m="$1" -v e="$2" -v p="$3" 'BEGIN { d = m - e; if (d < 0) d = -d; exit !(m != "" && d <= e * p / 100) }'
}

case $case in
rtt)
  d=$1
  "$netlab" up "1gbit@$d" >/dev/null || fail "netlab up 1gbit@$d"
  base=$(rtt nsA 10.201.9.2) got=$(rtt nsA 10.201.0.2 40)
  want=$(awk -v b="$base" -v d="$(ms "$d")" 'BEGIN { printf "%.3f", 2 * d + b }')
  echo "rail0 RTT $got ms; expected 2 x $d + base $base ms = $want ms (within 5%)"
  within "$got" "$want" 5 || fail "RTT $got ms is not within 5% of $want ms"
  echo "PASS: rtt $d" ;;
tcp)
  spec=$1 win=${2:-0}
  "$netlab" up "$spec" >/dev/null || fail "netlab up $spec"
  rate=${spec%%@*}
  [ "$win" = 0 ] && wl=autotuned || wl="$win bytes"
  # A python sender on CI's 2 loaded cores can lose a run to the scheduler: up to three runs,
  # each printed; a lab that shapes wrong misses all three.
  for try in 1 2 3; do
    r=$(rtt nsA 10.201.0.2 10)
    line=$("$netlab" tcpbw nsA nsB 10.201.0.2 3 "$win") || fail "tcpbw: $line"
    got=$(echo "$line" | sed -n 's/^tcp_mbit_s=\([0-9.]*\).*/\1/p')
    want=$(awk -v rate="$(mbit "$rate")" -v w="$win" -v r="$r" 'BEGIN {
      e = rate * 1448 / 1514; if (w > 0 && w * 8 / (r / 1000) / 1e6 < e) e = w * 8 / (r / 1000) / 1e6; printf "%.1f", e }')
    echo "one TCP stream over $spec (window $wl, RTT $r ms): $got Mbit/s; expected $want Mbit/s (within 15%)"
    within "$got" "$want" 15 && break
    [ "$try" = 3 ] && fail "$got Mbit/s is not within 15% of $want Mbit/s (three runs)"
  done
  echo "PASS: tcp $spec window $win" ;;
sites)
  "$netlab" up --sites 2x2 1gbit 100mbit@5ms >/dev/null || fail "netlab up --sites"
  local_rtt=$(rtt nsA1 10.202.0.12 10)
  awk -v r="$local_rtt" 'BEGIN { exit !(r != "" && r < 1) }' || fail "in-site RTT $local_rtt ms"
  base=$(rtt nsA1 10.202.9.21) got=$(rtt nsA1 10.202.0.21 20)
  want=$(awk -v b="$base" 'BEGIN { printf "%.3f", 10 + b }')
  echo "cross-site RTT $got ms; expected $want ms"
  within "$got" "$want" 5 || fail "cross-site RTT $got ms is not within 5% of $want ms"
  for h in nsA1 nsA2 nsB1 nsB2; do
    [ "$("$netlab" agent $h hostname)" = $h ] || fail "agent $h did not run with hostname $h"
  done
  line=$("$netlab" tcpbw nsA2 nsB1 10.202.0.21 3) || fail "tcpbw: $line"
  got=$(echo "$line" | sed -n 's/^tcp_mbit_s=\([0-9.]*\).*/\1/p')
  echo "cross-site TCP stream: $got Mbit/s; expected 95.6 Mbit/s (WAN 100mbit)"
  within "$got" 95.6 15 || fail "$got Mbit/s is not within 15% of 95.6"
  echo "PASS: sites" ;;
down)
  "$netlab" up 1gbit@1ms 250mbit@2ms >/dev/null || fail "netlab up"
  pids=$(cat /run/netlab/p-$NETLAB_PREFIX/*.pid)
  [ "$(echo $pids | wc -w)" = 2 ] || fail "expected two delay lines, found pids '$pids'"
  "$netlab" down || fail "netlab down"
  left=$(ip netns list | grep -c "^$NETLAB_PREFIX") 
  [ "$left" = 0 ] || fail "$left namespaces left after down"
  sleep 0.2
  for p in $pids; do
    [ "$(ps -o stat= -p "$p" 2>/dev/null | cut -c1)" = Z ] || ! kill -0 "$p" 2>/dev/null || fail "delay line $p still runs"
  done
  echo "PASS: down" ;;
*) echo "FAIL: unknown case $case"; exit 1 ;;
esac
