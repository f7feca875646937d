#!/usr/bin/env bash
# Sites on the lab (tools/netlab up --sites 2x2, a long link of DELAY one way between two
# LANs; seed infiniband-wan 3.4): with RMPI_SITES unset the map is measured at MPI_Init and
# must come out as nsA1,nsA2 | nsB1,nsB2 (ranks 0-1:2-3, logged by rank 0 at RMPI_DEBUG=1);
# every type/op through Allreduce and Reduce across the sites equals the flat result
# (tests/mpi/datatype/ops), and Bcast, Allgather, Alltoall and Barrier check their data
# (tests/mpi/coll/*); a map given by host names is taken as written; a malformed one stops
# MPI_Init naming RMPI_SITES; RMPI_WAN_TUNE=0 measures nothing. With two ranks per host the
# split Bcast and Allreduce (coll/site.c) check their data too.
# With MODE choice: the algorithms the selection table picks on the same lab, read from
# RMPI_REPORT's "collective" lines of tests/mpi/coll/choice (two ranks per host): site-aware
# for every class that has it, except Allreduce from RMPI_COLL_SITE_RUNS_MIN (2m) while the
# sites are runs of nodes (block placement), which stays node-aware (two_level); with the
# sites interleaved (cyclic) Allreduce is site-aware at every size; RMPI_COLL_SITES=0 gives
# the one-site table.
# usage: sites.sh MPIEXEC TESTS NETLAB DELAY [choice]   (TESTS: build/tests/mpi)
set -u
mpiexec=$1 tests=$2 netlab=$3 delay=${4:-2ms} mode=${5:-data}
[ "$(id -u)" = 0 ] || { echo "skip: needs root for ip netns"; exit 77; }
command -v ip >/dev/null && ip netns list >/dev/null 2>&1 || { echo "skip: no ip netns"; exit 77; }
export NETLAB_PREFIX=t$$-
"$netlab" up --sites 2x2 1gbit "1gbit@$delay" >/dev/null || { echo "FAIL: netlab up --sites"; exit 1; }
trap '"$netlab" down >/dev/null 2>&1' EXIT
fail() { echo "FAIL: $*"; exit 1; }
run() { # PROGRAM [ENV...]: one rank per host (PPN=2: two; HOSTS=h:2,...: two, in that order), tcp over rail0
  local prog=$1 p=${PPN:-1} hosts=${HOSTS:-}; shift
  [ -n "$hosts" ] && p=2 || hosts=nsA1:$p,nsA2:$p,nsB1:$p,nsB2:$p
  "$netlab" exec nsA1 timeout 200 "$mpiexec" -n $((4 * p)) --host "$hosts" \
    --agent "$netlab agent" --pmi-iface ctl -genv RMPI_TCP_IFACES rail0 -genv RMPI_DEBUG 1 "$@" "$prog" 2>&1
}

if [ "$mode" = choice ]; then
  # expect HOSTS MAP ENV... -- REPORT_LINE...: tests/mpi/coll/choice with two ranks per host
  # (so that node-aware means two_level), its results checked, the map measured, and each
  # line (a regex, "[(]" for a parenthesis) in rank 0's report
  expect() {
    local hosts=$1 map=$2 out line env=(); shift 2
    while [ $# -gt 0 ] && [ "$1" != -- ]; do env+=(-genv "$1" "$2"); shift 2; done
    shift
    out=$("$netlab" exec nsA1 timeout 200 "$mpiexec" -n 8 --host "$hosts" --agent "$netlab agent" --pmi-iface ctl \
      -genv RMPI_TCP_IFACES rail0 -genv RMPI_DEBUG 1 -genv RMPI_REPORT 1 "${env[@]}" "$tests/coll/choice" 2>&1) ||
      { echo "$out" | tail -20; fail "choice ${env[*]} on $hosts exited $?"; }
    echo "$out" | grep -q "No Errors" || { echo "$out" | tail -20; fail "choice on $hosts did not report No Errors"; }
    echo "$out" | grep -q "2 sites (measured round trips): $map\$" || { echo "$out" | grep sites; fail "the map on $hosts is not $map"; }
    for line in "$@"; do
      echo "$out" | grep -q "rank 0: collective $line\$" ||
        { echo "$out" | grep "rank 0: collective"; fail "${env[*]} on $hosts: no report line 'collective $line'"; }
    done
    echo "$hosts ${env[*]}: as expected:"
    echo "$out" | grep "rank 0: collective"
  }
  block=nsA1:2,nsA2:2,nsB1:2,nsB2:2 cyclic=nsA1:2,nsB1:2,nsA2:2,nsB2:2
  expect $block 0-3:4-7 -- "barrier: site x1 [(]0 B[)]" "bcast: site x2 [(]8-131072 B[)]" "reduce: site x2 [(]4-8 B[)]" \
    "allreduce: site x2 [(]8-1048576 B[)], two_level x1 [(]4194304 B[)]" "allgather: site x1 [(]64 B[)]" \
    "alltoall: site x1 [(]8 B[)]" "scan: recursive_doubling x1 [(]8 B[)]"
  expect $block 0-3:4-7 RMPI_COLL_SITE_RUNS_MIN 64k -- \
    "allreduce: site x1 [(]8 B[)], two_level x2 [(]1048576-4194304 B[)]" "bcast: site x2 [(]8-131072 B[)]"
  expect $cyclic 0-1,4-5:2-3,6-7 -- "allreduce: site x3 [(]8-4194304 B[)]" "bcast: site x2 [(]8-131072 B[)]" \
    "barrier: site x1 [(]0 B[)]" "reduce: site x2 [(]4-8 B[)]" "allgather: site x1 [(]64 B[)]" "alltoall: site x1 [(]8 B[)]"
  expect $cyclic 0-1,4-5:2-3,6-7 RMPI_COLL_SITES 0 -- "barrier: two_level x1 [(]0 B[)]" \
    "bcast: two_level x2 [(]8-131072 B[)]" "reduce: two_level x2 [(]4-8 B[)]" "allreduce: two_level x3 [(]8-4194304 B[)]" \
    "allgather: recursive_doubling x1 [(]64 B[)]" "alltoall: bruck x1 [(]8 B[)]"
  echo "PASS: the table's choices on 2x2 sites (block, cyclic, RMPI_COLL_SITE_RUNS_MIN, RMPI_COLL_SITES=0)"
  exit 0
fi

# The sites here are in runs of nodes (block placement), where auto keeps Allreduce
# node-aware (coll/select.c): the site algorithm is forced so that it is what is checked.
out=$(run "$tests/datatype/ops" -genv RMPI_COLL_ALLREDUCE site) || { echo "$out"; fail "ops exited $?"; }
echo "$out" | grep "sites"
echo "$out" | grep -q "2 sites (measured round trips): 0-1:2-3$" || { echo "$out" | tail; fail "the measured map is not 0-1:2-3"; }
echo "$out" | grep -q "No Errors" || fail "ops did not report No Errors"
for t in bcast allgather alltoall ibarrier; do
  out=$(run "$tests/coll/$t" -genv GTEST_SIZES small) || { echo "$out"; fail "$t exited $?"; }
  echo "$out" | grep -q "No Errors" || { echo "$out" | tail; fail "$t did not report No Errors"; }
  echo "$t: No Errors"
done

# two ranks per host (all three tiers), Bcast and Allreduce split across the long link at
# every size (pieces per rank pair, rings inside the sites)
for t in bcast allreduce; do
  out=$(PPN=2 run "$tests/coll/$t" -genv RMPI_COLL_SITE_SPLIT 1 -genv RMPI_COLL_SITE_SPLIT_BCAST 1 \
    -genv RMPI_COLL_ALLREDUCE site) || { echo "$out"; fail "2 per host: $t exited $?"; }
  echo "$out" | grep -q "2 sites (measured round trips): 0-3:4-7$" || { echo "$out" | tail; fail "2 per host: the map is not 0-3:4-7"; }
  echo "$out" | grep -q "No Errors" || { echo "$out" | tail; fail "2 per host: $t did not report No Errors"; }
  echo "$t, 2 per host, split: No Errors"
done

# two ranks per host, the table's own choices, block and cyclic placement: Bcast at every
# size, and streams of back-to-back Bcasts (every call's data checked) in which the far site
# leader forwards inside its site while behind, so its frames to near peers leave in
# bundles (core coalescing), plus a forwarding chain of mixed sizes through all ranks
for hosts in nsA1:2,nsA2:2,nsB1:2,nsB2:2 nsA1:2,nsB1:2,nsA2:2,nsB2:2; do
  for t in bcast bcast_stream; do
    out=$(HOSTS=$hosts run "$tests/coll/$t") || { echo "$out"; fail "$hosts: $t exited $?"; }
    echo "$out" | grep -q "No Errors" || { echo "$out" | tail; fail "$hosts: $t did not report No Errors"; }
    echo "$t on $hosts: No Errors"
  done
done

out=$(run "$tests/coll/bcast" -genv GTEST_SIZES small -genv RMPI_SITES "nsA1,nsB1:nsA2,nsB2") || { echo "$out"; fail "given map: bcast exited $?"; }
echo "$out" | grep -q "2 sites (RMPI_SITES): 0,2:1,3$" || { echo "$out" | tail; fail "the given map is not 0,2:1,3"; }
echo "$out" | grep -q "No Errors" || fail "given map: bcast did not report No Errors"

out=$(run "$tests/coll/bcast" -genv RMPI_SITES "nsA*:nsC*")
[ $? != 0 ] || fail "a malformed RMPI_SITES did not stop the job"
echo "$out" | grep -q "RMPI_SITES=nsA\*:nsC\*: host 'nsC\*' runs no rank of the job" || { echo "$out" | tail; fail "no message naming RMPI_SITES"; }

out=$(run "$tests/coll/ibarrier" -genv RMPI_WAN_TUNE 0) || { echo "$out"; fail "RMPI_WAN_TUNE=0: ibarrier exited $?"; }
echo "$out" | grep -q "sites (measured" && fail "RMPI_WAN_TUNE=0 still measured sites"
echo "PASS: sites found (0-1:2-3), given by host names, malformed refused; results equal the flat ones"
