#!/usr/bin/env bash
# RailMPI programs launched by Open MPI's mpirun (PMIx; RailMPI's PMIx client, src/rt/pmix.c):
# the ring example, point-to-point and a collective at 4 ranks, a dead PMIx server, and a
# failing rank's exit status reaching mpirun.
# usage: openmpi.sh BUILD_DIR
set -u
b=$1
mpirun=$(command -v mpirun.openmpi || command -v prterun || true)
[ -n "$mpirun" ] || { echo "skip: neither mpirun.openmpi nor prterun (Debian package openmpi-bin) is installed"; exit 77; }
opts="--oversubscribe"
[ "$(id -u)" = 0 ] && opts="$opts --allow-run-as-root"
fail() { echo "FAIL: $*"; exit 1; }

out=$(timeout 60 "$mpirun" $opts -n 4 "$b/examples/ring" 2>&1); rc=$?
echo "$out"
[ $rc = 0 ] || fail "ring under $mpirun exited $rc"
echo "$out" | grep -q "over 4 ranks.*ok" || fail "ring over 4 ranks did not report ok (singletons?)"
for p in pt2pt/sendrecv coll/allreduce; do
  out=$(timeout 60 "$mpirun" $opts -n 4 "$b/tests/mpi/$p" 2>&1); rc=$?
  echo "$out"
  [ $rc = 0 ] || fail "$p under $mpirun exited $rc"
  echo "$out" | grep -q "No Errors" || fail "$p did not report No Errors"
done
# rank 1 fails with 3 while the others run MPI: mpirun must report 3 and end the others
out=$(timeout 60 "$mpirun" $opts -n 3 sh -c '[ "$OMPI_COMM_WORLD_RANK" = 1 ] && exit 3; exec "$0" wait' \
      "$b/tests/launcher/spin" 2>&1); rc=$?
[ $rc = 3 ] || { echo "$out"; fail "a rank's exit 3 gave mpirun status $rc"; }
# PMIx variables that point at no server: MPI_Init fails at once, naming the PMIx server
t0=$(date +%s)
out=$(PMIX_NAMESPACE=gone.0 PMIX_RANK=0 PMIX_SERVER_URI4='gone.0;tcp4://127.0.0.1:9' \
      PMIX_SERVER_URI41='gone.0;tcp4://127.0.0.1:9' timeout 30 "$b/examples/ring" 2>&1); rc=$?
echo "$out"
[ $rc != 0 ] && [ $rc != 124 ] || fail "a dead PMIx server: exit status $rc"
echo "$out" | grep -q "PMIx.*PMIX_NAMESPACE=gone.0" || fail "no message naming the PMIx server"
[ $(( $(date +%s) - t0 )) -lt 15 ] || fail "a dead PMIx server took more than 15 s to notice"
# a PMIx server that accepts the connection and never answers: RMPI_PMI_TIMEOUT ends it
python3 -c 'import socket, sys, time
s = socket.create_server(("127.0.0.1", 0))
print(s.getsockname()[1], flush=True)
conns = []
s.settimeout(30)
try:
    while True:
        conns.append(s.accept()[0])
except OSError:
    pass' >"${TMPDIR:-/tmp}/rmpi-silent-pmix.$$" &
silent=$!
trap 'kill $silent 2>/dev/null; rm -f "${TMPDIR:-/tmp}/rmpi-silent-pmix.$$"' EXIT
for _ in $(seq 50); do port=$(cat "${TMPDIR:-/tmp}/rmpi-silent-pmix.$$"); [ -n "$port" ] && break; sleep 0.1; done
t0=$(date +%s)
out=$(RMPI_PMI_TIMEOUT=2 PMIX_NAMESPACE=silent.0 PMIX_RANK=0 PMIX_SERVER_URI4="silent.0;tcp4://127.0.0.1:$port" \
      PMIX_SERVER_URI41="silent.0;tcp4://127.0.0.1:$port" timeout 30 "$b/examples/ring" 2>&1); rc=$?
echo "$out"
[ $rc != 0 ] && [ $rc != 124 ] || fail "a silent PMIx server: exit status $rc"
echo "$out" | grep -q "no answer from the PMIx server (PMIX_NAMESPACE=silent.0) within 2 s" || fail "silent PMIx server: no message"
[ $(( $(date +%s) - t0 )) -lt 15 ] || fail "a silent PMIx server took more than 15 s to notice"
echo PASS
