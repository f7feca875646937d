#!/usr/bin/env bash
# Two "hosts" (network namespaces nsA and nsB joined by veth rails): mpiexec runs inside nsA
# and starts one rank per namespace through the netns agent; the ranks talk TCP over the
# interface RMPI_TCP_IFACES names. Checks data integrity (pingpong and the mtest programs
# verify every byte; "ok" or "No Errors") and
# that the traffic really used that interface (RMPI_REPORT names the rail).
# MODE tcp: RailMPI's tcp provider. ofi: RMPI_NET=ofi (tcp;ofi_rxm, the interface's domain).
# auto-ofi: RMPI_NET=auto with RMPI_OFI_AUTO=any, so the auto selection itself must pick
# libfabric between the two hosts over the tcp provider it also opens.
# usage: mpi_two_hosts.sh MPIEXEC PROGRAM NETLAB IFACE [MODE]
set -u
mpiexec=$1 prog=$2 netlab=$3 iface=$4 mode=${5:-tcp}
# IFACE may be a comma list (several rails: every one must carry data).
case $mode in
  tcp) env=(-genv RMPI_TCP_IFACES "$iface"); kind=tcp ;;
  ofi) env=(-genv RMPI_NET ofi -genv RMPI_OFI_DOMAINS "$iface"); kind=ofi ;;
  auto-ofi) env=(-genv RMPI_OFI_AUTO any -genv RMPI_OFI_DOMAINS "$iface" -genv RMPI_TCP_IFACES "$iface"); kind=ofi ;;
  *) echo "FAIL: unknown mode $mode"; exit 1 ;;
esac
[ "$(id -u)" = 0 ] || { echo "skip: needs root for ip netns"; exit 77; }
command -v ip >/dev/null && ip netns list >/dev/null 2>&1 || { echo "skip: no ip netns"; exit 77; }

# This run's own namespaces (t<pid>-nsA...); the agent finds them through the variable.
export NETLAB_PREFIX=t$$-
"$netlab" up 1gbit 250mbit >/dev/null || { echo "FAIL: netlab up"; exit 1; }
trap '"$netlab" down >/dev/null 2>&1' EXIT

out=$("$netlab" exec nsA timeout 120 "$mpiexec" -n 2 --host nsA,nsB --agent "$netlab agent" --pmi-iface ctl \
      "${env[@]}" -genv RMPI_REPORT 1 "$prog" 2>&1)
rc=$?
echo "$out"
[ $rc = 0 ] || { echo "FAIL: mpiexec exited $rc"; exit 1; }
echo "$out" | grep -Eq "ok|No Errors" || { echo "FAIL: the program did not report ok"; exit 1; }
for i in ${iface//,/ }; do
  echo "$out" | grep -Eq "rail $kind:$i: up, .*rdma bytes [1-9]" || { echo "FAIL: traffic did not use $kind:$i"; exit 1; }
done
echo "$out" | grep -q "rank 0 -> 1" || { echo "FAIL: no report of rank 0 talking to rank 1"; exit 1; }
echo "PASS: two namespaces over $kind:$iface ($mode)"
