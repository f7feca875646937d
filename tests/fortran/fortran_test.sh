#!/bin/sh
# Builds the Fortran programs of tests/fortran with the build's mpifort (as a user would)
# and runs them on 1, 2 and 4 ranks: basics (use mpi), fixed (mpif.h, fixed form), f08
# (use mpi_f08), extras (MPI_Sizeof, MPI_F_sync_reg, status conversions) through use mpi and
# mpi_f08, rma_errors, callbacks, alltoallw and spawn through use mpi, mpif.h and mpi_f08 each
# (binding.inc).
# Then checks that the explicit interfaces of use mpi and mpi_f08 turn wrong argument lists
# into compile errors (bad_args.F90). Without the bindings it skips (exit 77) and says why.
# usage: fortran_test.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1 src=$2
if [ ! -x "$build/bin/mpifort" ] || [ ! -f "$build/include/mpi_f08.mod" ]; then
  echo "skipped: this build has no Fortran bindings: no gfortran (9 or later) was found when it was"
  echo "configured (apt-get install gfortran: the next make configures again and builds them)"
  exit 77
fi
t=$src/tests/fortran
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$build/bin/mpifort" -Wall -o "$out/basics" "$t/basics.f90"
"$build/bin/mpif77" -o "$out/fixed" "$t/fixed.f"
"$build/bin/mpifort" -Wall -o "$out/f08" "$t/f08.f90"
progs="basics fixed f08"
# MPI_Sizeof is in use mpi and mpi_f08 only (mpif.h need not have it)
"$build/bin/mpif90" -Wall -o "$out/extras_mpi" "$t/extras.F90"
"$build/bin/mpifort" -Wall -DRMPI_F08 -o "$out/extras_f08" "$t/extras.F90"
progs="$progs extras_mpi extras_f08"
for name in rma_errors callbacks alltoallw spawn; do
  "$build/bin/mpif90" -Wall -o "$out/${name}_mpi" "$t/$name.F90"
  "$build/bin/mpif90" -Wall -DRMPI_MPIF_H -o "$out/${name}_mpif" "$t/$name.F90"
  "$build/bin/mpifort" -Wall -DRMPI_F08 -o "$out/${name}_f08" "$t/$name.F90"
  progs="$progs ${name}_mpi ${name}_mpif ${name}_f08"
done
for prog in $progs; do
  for n in 1 2 4; do
    got=$("$build/bin/mpiexec" -n $n "$out/$prog" 2>"$out/err") || true
    [ "$got" = "fortran ok" ] || { echo "$prog on $n ranks: $got"; cat "$out/err"; exit 1; }
  done
done
for c in 0 5; do
  "$build/bin/mpifort" -DCASE=$c -c -o "$out/good$c.o" "$t/bad_args.F90" ||
    { echo "bad_args.F90 case $c is right and must compile"; exit 1; }
done
for c in 1 2 3 4; do
  if "$build/bin/mpifort" -DCASE=$c -c -o "$out/bad$c.o" "$t/bad_args.F90" >"$out/log" 2>&1; then
    echo "bad_args.F90 case $c compiled: the explicit interfaces did not check the call"; exit 1
  fi
  grep -q "Error:" "$out/log" || { cat "$out/log"; exit 1; }
done
echo "Fortran programs (use mpi, use mpi_f08, include 'mpif.h') built with mpifort ran on 1, 2 and 4 ranks,"
echo "and wrong argument lists are compile errors through use mpi and mpi_f08: ok"
