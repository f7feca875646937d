#!/usr/bin/env bash
# One-sided programs of tests/mpi/rma between two namespaces over two shaped tcp rails
# (rail0 1 Gbit/s, rail1 250 Mbit/s): rank 0 in nsA, rank 1 in nsB, every get a read of the
# tcp provider (emulated RDMA) on one of the rails. Each program checks every byte it reads
# and writes ("No Errors"); the job must end 0 with neither rail failed, and the finalize
# report must show RDMA bytes on both rails for the programs that say so (rdma, its read
# storm). `rdma storm` sends runs of 24-48 small reads each ended by a larger one: the target
# answers the small ones whole among its acknowledgements and cuts the larger one into
# chunks, so answers to different reads reach the initiator out of request order, which a
# provider that matched answers by position took for a protocol error (rail failed, job
# aborted) in every run. Locally (one rail per peer, loopback) that never happened.
# usage: rma.sh MPIEXEC RMA_TEST_DIR NETLAB PROGRAM[:ARG,ARG...][+rails] ...
#   "+rails": the report must show RDMA bytes on rail0 and rail1.
set -u
mpiexec=$1 dir=$2 netlab=$3
shift 3
[ "$(id -u)" = 0 ] || { echo "skip: needs root for ip netns"; exit 77; }
command -v ip >/dev/null && ip netns list >/dev/null 2>&1 || { echo "skip: no ip netns"; exit 77; }

# This run's own namespaces (t<pid>-nsA...); the agent finds them through the variable.
export NETLAB_PREFIX=t$$-
"$netlab" up 1gbit 250mbit >/dev/null || { echo "FAIL: netlab up"; exit 1; }
trap '"$netlab" down >/dev/null 2>&1' EXIT

fail=0
for spec in "$@"; do
  want_rails=0
  case $spec in *+rails) want_rails=1 spec=${spec%+rails} ;; esac
  prog=${spec%%:*} args=()
  [ "$prog" != "$spec" ] && IFS=, read -r -a args <<<"${spec#*:}"
  out=$("$netlab" exec nsA timeout 120 "$mpiexec" -n 2 --host nsA,nsB --agent "$netlab agent" --pmi-iface ctl \
        -genv RMPI_TCP_IFACES rail0,rail1 -genv RMPI_REPORT 1 "$dir/$prog" "${args[@]}" 2>&1)
  rc=$?
  what="$prog${args[*]:+ ${args[*]}}"
  bad=
  [ $rc = 0 ] || bad="mpiexec exited $rc"
  [ -z "$bad" ] && ! echo "$out" | grep -q "No Errors" && bad="the program did not report No Errors"
  [ -z "$bad" ] && echo "$out" | grep -q "rail tcp:rail[01] to rank [01] failed" && bad="a rail failed"
  if [ -z "$bad" ] && [ $want_rails = 1 ]; then
    for i in rail0 rail1; do
      echo "$out" | grep -Eq "rail tcp:$i: up, .*rdma bytes [1-9]" || bad="no RDMA bytes on tcp:$i"
    done
  fi
  if [ -n "$bad" ]; then
    echo "$out"
    echo "FAIL: $what: $bad"
    fail=1
  else
    echo "ok: $what"
  fi
done
[ $fail = 0 ] || exit 1
echo "PASS: one-sided programs between two namespaces over tcp:rail0,rail1"
