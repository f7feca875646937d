#!/usr/bin/env bash
# Long-haul link (seed infiniband-wan): two namespaces joined by one 1 Gbit/s rail with a
# one-way delay. Checks that each rank's round-trip estimate of the rail (RMPI_REPORT's
# srtt) comes within 20% of the lab's (the median ping RTT over rail0, i.e. 2 x DELAY plus
# the base) under light traffic, and its smallest sample under a ping-pong's load, that the eager limit RMPI_WAN_TUNE chose is the one the round trip gives
# (above the fixed 64 KiB), that random-size traffic in both directions arrives intact
# (tests/mpi/multirail/bidir checks every byte), and that RMPI_WAN_TUNE=0 keeps 64 KiB.
# Case "two": two such rails; bidir over both, every byte checked; the VC's ACKs give round
# trips on rail0, and their smallest, like the kernel's (TCP_INFO), is within 20% of the
# lab's; the limit (rates of both rails in the crossover) is above 64 KiB, at most 1 MiB.
# usage: wan.sh MPIEXEC EXAMPLES BIDIR NETLAB DELAY [one|two]   (EXAMPLES: ring and pingpong's folder)
set -u
mpiexec=$1 ring=$2/ring pingpong=$2/pingpong bidir=$3 netlab=$4 delay=${5:-2ms} case=${6:-one}
[ "$(id -u)" = 0 ] || { echo "skip: needs root for ip netns"; exit 77; }
command -v ip >/dev/null && ip netns list >/dev/null 2>&1 || { echo "skip: no ip netns"; exit 77; }
export NETLAB_PREFIX=t$$-
rails=("1gbit@$delay"); ifaces=rail0
[ "$case" = two ] && rails+=("1gbit@$delay") && ifaces=rail0,rail1
"$netlab" up "${rails[@]}" >/dev/null || { echo "FAIL: netlab up"; exit 1; }
trap '"$netlab" down >/dev/null 2>&1' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# A round trip timed on this shared 2-core machine can be inflated by a busy scheduler (the
# delay line and both ranks compete with other tests): a measurement check gets up to three
# runs, each printed, and fails only if none comes within bounds. A wrong estimator misses
# all three.
tries() { # CHECK-FUNCTION: 0 when one of three runs passes
  local i
  for i in 1 2 3; do
    "$1" && return 0
    echo "attempt $i: $why"
  done
  fail "$why (three runs)"
}
within() { # MEASURED EXPECTED PERCENT
  awk -v m="$1" -v e="$2" -v p="$3" 'BEGIN { d = m - e; if (d < 0) d = -d; exit !(m != "" && d <= e * p / 100) }'
}
run() { # PROGRAM [ENV...]: rank 0 in nsA, rank 1 in nsB, over rail0
  local prog=$1; shift
  "$netlab" exec nsA timeout 150 "$mpiexec" -n 2 --host nsA,nsB --agent "$netlab agent" --pmi-iface ctl \
    -genv RMPI_TCP_IFACES $ifaces -genv RMPI_REPORT 1 "$@" "$prog" 2>&1
}

lab=$("$netlab" ping nsA 10.201.0.2 20 | sed -n 's/.*median=\([0-9.]*\).*/\1/p')
[ -n "$lab" ] || fail "no ping RTT over rail0"
lab_us=$(awk -v m="$lab" 'BEGIN { print m * 1000 }')
echo "lab round trip over rail0: $lab_us us"

if [ "$case" = two ]; then
  # The ping-pong's small messages leave the queues empty: there an ACK's round trip is the
  # path's. (Under bidir's bulk load the ACKs also wait behind megabytes of queued data.)
  two_acks() {
    out=$(run "$pingpong") || { echo "$out"; fail "pingpong exited $?"; }
    echo "$out" | grep "\[rmpi report\].*\(path\|eager limit\)"
    acks=0
    while read -r n amin kmin; do
      [ "$n" -gt 0 ] || continue
      acks=$((acks + n))
      within "$amin" "$lab_us" 20 || { why="smallest ACK round trip $amin us is not within 20% of the lab's $lab_us us"; return 1; }
      within "$kmin" "$lab_us" 20 || { why="smallest kernel round trip $kmin us is not within 20% of the lab's $lab_us us"; return 1; }
    done < <(echo "$out" | sed -n "s/.*path tcp:rail0: .* acks \([0-9]*\) kernel [0-9]*, last .* min handshake [0-9.]* us acks \([0-9.]*\) us kernel \([0-9.]*\) us.*/\1 \2 \3/p")
    [ "$acks" -gt 0 ] || fail "no round trip from the VC's ACKs on rail0"
  }
  tries two_acks
  out=$(run "$bidir") || { echo "$out"; fail "bidir exited $?"; }
  echo "$out" | grep -Eq "ok|No Errors" || { echo "$out"; fail "bidir did not report ok"; }
  echo "$out" | grep "\[rmpi report\].*\(path\|eager limit\)"
  for r in 0 1; do
    lim=$(echo "$out" | sed -n "s/.*rank $r -> $((1 - r)): eager limit \([0-9]*\) bytes (RMPI_WAN_TUNE.*/\1/p")
    [ -n "$lim" ] && [ "$lim" -gt 65536 ] && [ "$lim" -le 1048576 ] || fail "rank $r's eager limit '$lim' on two rails"
  done
  echo "PASS: two rails, $acks ACK round trips, smallest ACK and kernel samples within 20% of $lab_us us"
  exit 0
fi

# 1. Light traffic (a token around the ring): the estimate is the path's round trip.
ring_rtt() {
  out=$(run "$ring") || { echo "$out"; fail "ring exited $?"; }
  echo "$out" | grep "\[rmpi report\].*\(path\|eager limit\)"
  local r p srtt lim sr
  for r in 0 1; do
    p=$((1 - r))
    srtt=$(echo "$out" | sed -n "s/.*rank $r -> $p: eager limit .*path round trip \([0-9.]*\) us.*/\1/p")
    within "$srtt" "$lab_us" 20 || { why="rank $r's round trip $srtt us is not within 20% of the lab's $lab_us us"; return 1; }
    lim=$(echo "$out" | sed -n "s/.*rank $r -> $p: eager limit \([0-9]*\) bytes (RMPI_WAN_TUNE.*/\1/p")
    # 2 B/ns copy x RTT is megabytes at this delay: the cap (1 MiB, RMPI_UNEXP_MAX/256) applies.
    [ "$lim" = 1048576 ] || fail "rank $r's eager limit is '$lim', not the 1 MiB cap a $srtt us round trip gives"
  done
  for sr in $(echo "$out" | sed -n "s/.*path tcp:rail0: srtt \([0-9.]*\) us.*/\1/p"); do
    within "$sr" "$lab_us" 20 || { why="smoothed round trip $sr us is not within 20% of the lab's $lab_us us"; return 1; }
  done
}
tries ring_rtt

# 2. Ping-pong 8 B .. 4 MiB, every byte checked: under load the smoothed round trip also
# holds the shaper's queue, so only the smallest sample must match the lab's.
pingpong_min() {
  out=$(run "$pingpong") || { echo "$out"; fail "pingpong exited $?"; }
  echo "$out" | grep "\[rmpi report\].*\(path\|eager limit\)"
  echo "$out" | grep -q "ok" || fail "pingpong did not report ok"
  local m
  for m in $(echo "$out" | sed -n "s/.*path tcp:rail0: .* min \([0-9.]*\) us.*/\1/p"); do
    within "$m" "$lab_us" 20 || { why="smallest round trip $m us is not within 20% of the lab's $lab_us us"; return 1; }
  done
}
tries pingpong_min

# 2. Random sizes both ways, every byte checked, around and past the tuned limit.
out=$(run "$bidir") || { echo "$out"; fail "bidir exited $?"; }
echo "$out" | grep -Eq "ok|No Errors" || { echo "$out"; fail "bidir did not report ok"; }
echo "$out" | grep "\[rmpi report\].*\(path\|eager limit\|rendezvous\)"
echo "$out" | grep -q "rank 0 -> 1: eager limit 1048576 bytes (RMPI_WAN_TUNE" || fail "bidir: no tuned limit"

# 3. RMPI_WAN_TUNE=0: the fixed limit, whatever the round trip.
out=$(run "$pingpong" -genv RMPI_WAN_TUNE 0) || { echo "$out"; fail "pingpong (RMPI_WAN_TUNE=0) exited $?"; }
echo "$out" | grep "eager limit"
for r in 0 1; do
  echo "$out" | grep -q "rank $r -> $((1 - r)): eager limit 65536 bytes (fixed" || fail "RMPI_WAN_TUNE=0: rank $r's limit is not the fixed 64 KiB"
done
# and a user's RMPI_EAGER_LIMIT wins over the tuning
out=$(run "$pingpong" -genv RMPI_EAGER_LIMIT 32k) || { echo "$out"; fail "pingpong (RMPI_EAGER_LIMIT=32k) exited $?"; }
echo "$out" | grep -q "rank 0 -> 1: eager limit 32768 bytes (fixed" || fail "RMPI_EAGER_LIMIT=32k did not win"
echo "PASS: round trip within 20% of $lab_us us, eager limit 1 MiB tuned, 64 KiB with RMPI_WAN_TUNE=0"
