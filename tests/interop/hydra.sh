#!/usr/bin/env bash
# A RailMPI program launched by MPICH's mpiexec.hydra (PMI-1 over PMI_FD): 4 ranks, shm
# and tcp, the ring example checks its token on every lap.
# usage: hydra.sh PROGRAM
set -u
prog=$1
hydra=$(command -v mpiexec.hydra || true)
[ -n "$hydra" ] || { echo "skip: mpiexec.hydra (Debian package mpich) not installed"; exit 77; }
for net in auto tcp; do
  out=$(timeout 60 "$hydra" -n 4 -genv RMPI_NET $net "$prog" 2>&1); rc=$?
  echo "$out"
  [ $rc = 0 ] || { echo "FAIL: hydra run with RMPI_NET=$net exited $rc"; exit 1; }
  echo "$out" | grep -q "over 4 ranks.*ok" || { echo "FAIL: ring over 4 ranks did not report ok"; exit 1; }
done
echo PASS
