#!/usr/bin/env bash
# Two "hosts" (network namespaces nsA and nsB joined by veth rails): mpiexec runs inside nsA
# and starts one rank per namespace through the netns agent; the ranks talk TCP over the
# interface RMPI_TCP_IFACES names. Checks data integrity (pingpong verifies every byte) and
# that the traffic really used that interface (RMPI_REPORT names the rail).
# usage: mpi_two_hosts.sh MPIEXEC PROGRAM NETNS_RAILS_SH IFACE
set -u
mpiexec=$1 prog=$2 rails=$3 iface=$4
[ "$(id -u)" = 0 ] || { echo "skip: needs root for ip netns"; exit 77; }
command -v ip >/dev/null && ip netns list >/dev/null 2>&1 || { echo "skip: no ip netns"; exit 77; }
[ -x "$rails" ] || { echo "skip: $rails not found"; exit 77; }

created=0
if ! ip netns list | grep -qw nsA; then
  "$rails" up >/dev/null || { echo "FAIL: netns-rails.sh up"; exit 1; }
  created=1
fi
cleanup() { [ $created = 1 ] && "$rails" down >/dev/null 2>&1; }
trap cleanup EXIT

out=$(ip netns exec nsA timeout 120 "$mpiexec" -n 2 --host nsA,nsB --agent "$rails agent" --pmi-iface ctl \
      -genv RMPI_TCP_IFACES "$iface" -genv RMPI_REPORT 1 "$prog" 2>&1)
rc=$?
echo "$out"
[ $rc = 0 ] || { echo "FAIL: mpiexec exited $rc"; exit 1; }
echo "$out" | grep -q "ok" || { echo "FAIL: the program did not report ok"; exit 1; }
echo "$out" | grep -q "rail tcp:$iface" || { echo "FAIL: traffic did not use tcp:$iface"; exit 1; }
echo "$out" | grep -q "rank 0 -> 1" || { echo "FAIL: no report of rank 0 talking to rank 1"; exit 1; }
echo "PASS: two namespaces over tcp:$iface"
