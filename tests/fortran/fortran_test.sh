#!/bin/sh
# Builds the Fortran programs of tests/fortran with the build's mpifort (as a user would)
# and runs them on 1, 2 and 4 ranks. Registered only when the bindings were built.
# usage: fortran_test.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1 src=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$build/bin/mpifort" -Wall -o "$out/basics" "$src/tests/fortran/basics.f90"
"$build/bin/mpif77" -o "$out/fixed" "$src/tests/fortran/fixed.f"
for prog in basics fixed; do
  for n in 1 2 4; do
    got=$("$build/bin/mpiexec" -n $n "$out/$prog")
    [ "$got" = "fortran ok" ] || { echo "$prog on $n ranks: $got"; exit 1; }
  done
done
echo "Fortran programs (use mpi, include 'mpif.h') built with mpifort ran on 1, 2 and 4 ranks: ok"
