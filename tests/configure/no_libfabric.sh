#!/bin/sh
# A fresh machine without libfabric-dev: configure and build in a scratch directory with
# libfabric hidden from pkg-config (PKG_CONFIG_LIBDIR: a copy of every other .pc file).
# The library, rmpi_info and a few tests must build, and ctest must list no ofi test.
# hwloc is hidden too: process binding then reads the topology from sysfs.
# Then, if this machine has libfabric, its .pc file "gets installed" into that directory:
# the next build must re-run configure by itself and register the ofi tests; and removed
# again, drop them.
# usage: no_libfabric.sh SOURCE_DIR SCRATCH_DIR [C_COMPILER]
set -eu
src=$1 out=$2 cc=${3:-cc}
rm -rf "$out"
mkdir -p "$out/pc"

search=${PKG_CONFIG_LIBDIR-$(pkg-config --variable pc_path pkg-config)}
search=${PKG_CONFIG_PATH:+$PKG_CONFIG_PATH:}$search
fabric_pc=$(pkg-config --path libfabric 2>/dev/null || true)
IFS=:
for d in $search; do
  for f in "$d"/*.pc; do
    # the first of a name wins, as in pkg-config's own search
    [ -f "$f" ] && [ "${f##*/}" != libfabric.pc ] && [ "${f##*/}" != hwloc.pc ] && [ ! -e "$out/pc/${f##*/}" ] && cp "$f" "$out/pc/"
  done
done
unset IFS
export PKG_CONFIG_LIBDIR="$out/pc"
unset PKG_CONFIG_PATH
if pkg-config --exists libfabric; then
  echo "FAIL: libfabric still visible to pkg-config" >&2
  exit 1
fi

ofi_tests() { ctest --test-dir "$out/b" -N | grep -E 'Test +#[0-9]+: .*[/=_-]ofi' || true; }

# no build type: no optimisation, the quickest compile; warnings stay errors
cmake -S "$src" -B "$out/b" -G Ninja -DCMAKE_C_COMPILER="$cc" -DRMPI_WERROR=ON > "$out/configure.log" 2>&1 ||
  { cat "$out/configure.log"; echo "FAIL: configure without libfabric" >&2; exit 1; }
grep "libfabric" "$out/configure.log"
grep -q "no ofi provider" "$out/configure.log" || { echo "FAIL: configure did not report the missing libfabric" >&2; exit 1; }
grep -q "process binding reads the topology from sysfs" "$out/configure.log" ||
  { echo "FAIL: configure did not report the missing hwloc" >&2; exit 1; }
cmake --build "$out/b" --target mpi rmpi_info mpiexec unit_net_tcp_loop mpi_pt2pt_sizes unit_util_cpubind ||
  { echo "FAIL: build without libfabric and hwloc" >&2; exit 1; }
"$out/b/tests/unit/unit_util_cpubind" || { echo "FAIL: the binding unit test without hwloc" >&2; exit 1; }
"$out/b/bin/mpiexec" -n 2 --report-bindings true 2>"$out/bindings.txt" &&
  [ "$(grep -c '^report-bindings: rank [01] on ' "$out/bindings.txt")" = 2 ] ||
  { cat "$out/bindings.txt"; echo "FAIL: mpiexec --report-bindings without hwloc" >&2; exit 1; }
"$out/b/bin/rmpi_info" > "$out/rmpi_info.txt"
grep "libfabric: not built in" "$out/rmpi_info.txt" && ! grep "provider ofi" "$out/rmpi_info.txt" ||
  { echo "FAIL: rmpi_info of a build without libfabric" >&2; exit 1; }
grep -q "read from sysfs (hwloc not built in" "$out/rmpi_info.txt" ||
  { echo "FAIL: rmpi_info of a build without hwloc does not say so" >&2; exit 1; }
"$out/b/bin/mpiexec" -n 2 "$out/b/tests/mpi/pt2pt/sizes" || { echo "FAIL: sizes over the default providers" >&2; exit 1; }
found=$(ofi_tests)
if [ -n "$found" ]; then
  printf '%s\n' "$found"
  echo "FAIL: ofi tests registered in a build without libfabric" >&2
  exit 1
fi
echo "without libfabric: built, $(ctest --test-dir "$out/b" -N | grep -c 'Test *#') tests registered, none over ofi"

if [ -z "$fabric_pc" ]; then
  echo "libfabric not installed here: its appearance not tested"
  exit 0
fi
cp "$fabric_pc" "$out/pc/"
ninja -C "$out/b" build.ninja > "$out/redetect.log" 2>&1 || { cat "$out/redetect.log"; exit 1; }
grep -q "building the ofi provider" "$out/redetect.log" ||
  { cat "$out/redetect.log"; echo "FAIL: libfabric.pc appeared, configure did not re-run and find it" >&2; exit 1; }
n=$(ofi_tests | wc -l)
[ "$n" -gt 0 ] || { echo "FAIL: libfabric found, but no ofi test registered" >&2; exit 1; }
echo "libfabric.pc added: configure re-ran by itself, $n ofi tests registered"
rm "$out/pc/libfabric.pc"
ninja -C "$out/b" build.ninja > "$out/redetect.log" 2>&1 || { cat "$out/redetect.log"; exit 1; }
[ -z "$(ofi_tests)" ] || { echo "FAIL: libfabric.pc removed, ofi tests still registered" >&2; exit 1; }
echo "libfabric.pc removed: configure re-ran by itself, no ofi test registered"
