#!/bin/bash
# Several hosts under PMI-2 and PMIx: the lab's hosts nsA and nsB (tools/netlab) each run two
# ranks of one job.
#  - PMI-2: pmi2_server.py serves the ranks of nsA and, over the ctl link, those of nsB (their
#    PMI_FD is a TCP connection to it, as Slurm's step daemons on several nodes relay for
#    theirs); point-to-point and a collective program, tcp between the hosts.
#  - PMIx: Open MPI's mpirun starts the ring example through netlab's agent (when the PMIx
#    client is built and openmpi-bin installed).
# netns_pm.sh BUILD_DIR NETLAB HAVE_PMIX. Exit 77 (skip) without root or ip netns.
set -u
B=$1 NETLAB=$2 HAVE_PMIX=$3
HERE=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
command -v ip >/dev/null && ip netns list >/dev/null 2>&1 || { echo "SKIP: ip netns is unavailable"; exit 77; }
unset PMI_FD PMI_PORT PMI_ID PMI_RANK PMI_SIZE PMI_JOBID PMIX_NAMESPACE

T=$(mktemp -d "${TMPDIR:-/tmp}/rmpi-netns-pm.XXXXXX")
export NETLAB_PREFIX=t$$-
"$NETLAB" up >/dev/null || { "$NETLAB" down >/dev/null 2>&1; echo "FAIL: netlab up"; exit 1; }
trap '"$NETLAB" down; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; for f in "$T"/*.out; do [ -s "$f" ] && { echo "--- $f:"; head -30 "$f"; }; done; exit 1; }
S="python3 $HERE/pmi2_server.py"

for prog in pt2pt/sendrecv coll/allreduce; do
  rm -f "$T"/*.out
  timeout 60 "$NETLAB" nsA $S good 4 --listen 10.201.9.1:7450 0,1 env RMPI_REPORT=1 "$B/tests/mpi/$prog" \
      >"$T/a.out" 2>&1 &
  srv=$!
  for r in 2 3; do
    timeout 60 "$NETLAB" nsB $S connect 10.201.9.1:7450 $r 4 env RMPI_REPORT=1 "$B/tests/mpi/$prog" >"$T/b$r.out" 2>&1 &
  done
  wait $srv || fail "$prog: the PMI-2 server (ranks 0 and 1 in nsA) exited $?"
  wait
  grep -q "No Errors" "$T/a.out" || fail "$prog over PMI-2 on nsA+nsB: rank 0 did not report No Errors"
  # ranks of different hosts talk over the lab's tcp rails, those of one host over shm
  cat "$T"/*.out | grep -A1 -E "rank 2 -> 3: 1 subchannel" | grep -q "rail shm:" || fail "$prog: ranks 2 and 3 (nsB) not on shm"
  # ranks 0 and 1 share a.out, so the line after one's subchannel line may be the other's:
  # the connection line names its rank pair
  grep -q -E "rank 0 -> 2: connection tcp:" "$T/a.out" || fail "$prog: rank 0 -> 2 not over tcp"
done
echo "PMI-2 across nsA/nsB: ok"

mpirun=$(command -v mpirun.openmpi || true)
if [ "$HAVE_PMIX" != 1 ] || [ -z "$mpirun" ]; then
  echo "note: PMIx across hosts not tested (PMIx client built: $HAVE_PMIX, mpirun.openmpi: ${mpirun:-absent})"
else
  timeout 60 "$NETLAB" exec nsA "$mpirun" --allow-run-as-root --oversubscribe --mca plm_rsh_agent "$NETLAB agent" \
      --mca plm_rsh_no_tree_spawn 1 --mca oob_tcp_if_include ctl -H nsA:2,nsB:2 -n 4 \
      sh -c 'echo "host $(hostname) rank $OMPI_COMM_WORLD_RANK"; exec "$0"' "$B/examples/ring" >"$T/x.out" 2>&1 ||
    fail "mpirun (PMIx) across nsA/nsB exited $?"
  grep -q "over 4 ranks.*ok" "$T/x.out" || fail "ring under mpirun across nsA/nsB did not report ok"
  grep -q "host nsB rank [23]" "$T/x.out" || fail "no rank ran in nsB"
  echo "PMIx (Open MPI's mpirun) across nsA/nsB: ok"
fi
echo "PASS (netns_pm)"
