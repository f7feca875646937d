#!/bin/bash
# Wall time of a whole job that does nothing but MPI_Init, a printf and MPI_Finalize
# (examples/hello.c), launched by each MPI's own mpiexec: RailMPI, RailMPI with libfabric
# loaded into every rank at start (LD_PRELOAD: how libmpi.so started before libfabric was
# loaded on first use, src/net/ofi/ofi_dl.c), MPICH and Open MPI, rounds alternated.
# Usage: bench/startup.sh [--build DIR] [--np N] [--rounds R]
set -euo pipefail
build=build np=2 rounds=10
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --np) np=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--np N] [--rounds R]" >&2; exit 2 ;;
  esac
done
build=$(cd "$build" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)/examples/hello.c
ref=$build/bench/ref
mkdir -p "$ref"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpis="rmpi rmpi+libfabric"
if command -v mpicc.mpich >/dev/null; then mpicc.mpich -O2 "$src" -o "$ref/hello_mpich" && mpis="$mpis mpich"; fi
if command -v mpicc.openmpi >/dev/null; then mpicc.openmpi -O2 "$src" -o "$ref/hello_openmpi" && mpis="$mpis openmpi"; fi
run() {
  case $1 in
    rmpi) "$build/bin/mpiexec" -n "$np" "$build/examples/hello" ;;
    rmpi+libfabric) "$build/bin/mpiexec" -n "$np" env LD_PRELOAD=libfabric.so.1 "$build/examples/hello" ;;
    mpich) mpiexec.mpich -n "$np" "$ref/hello_mpich" ;;
    openmpi) mpiexec.openmpi --oversubscribe -n "$np" "$ref/hello_openmpi" ;;
  esac
}
for r in $(seq 1 "$rounds"); do
  for m in $mpis; do
    s=$(date +%s%N)
    run "$m" >/dev/null 2>&1 || echo "startup.sh: $m failed" >&2
    e=$(date +%s%N)
    echo "$m $(((e - s) / 1000))"
  done
done | python3 -c '
import statistics, sys
t = {}
for line in sys.stdin:
    m, us = line.split()
    t.setdefault(m, []).append(int(us) / 1e6)
print("| MPI | np | median s | min | max |")
print("|---|---:|---:|---:|---:|")
for m, v in t.items():
    print("| %s | %s | %.3f | %.3f | %.3f |" % (m, sys.argv[1], statistics.median(v), min(v), max(v)))
' "$np"
