#!/bin/sh
# Builds tests/cxx/hello.cc with the build's mpicxx (as a user would) and runs it on
# 1, 2 and 4 ranks. Skips (77) only when no C++ compiler is installed.
# usage: cxx_test.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1 src=$2
command -v "${RMPI_CXX:-c++}" >/dev/null 2>&1 || { echo "no C++ compiler (c++): skipped"; exit 77; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$build/bin/mpicxx" -std=c++17 -Wall -Wextra -Werror -O1 -o "$out/hello" "$src/tests/cxx/hello.cc"
"$build/bin/mpic++" -std=c++11 -fsyntax-only "$src/tests/cxx/hello.cc"
for n in 1 2 4; do
  got=$("$build/bin/mpiexec" -n $n "$out/hello")
  [ "$got" = "cxx ok" ] || { echo "mpiexec -n $n: $got"; exit 1; }
done
echo "C++ program built with mpicxx ran on 1, 2 and 4 ranks: ok"
