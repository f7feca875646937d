#!/usr/bin/env bash
# mpi4py's own test suite on RailMPI: installs mpi4py from PyPI into a fresh
# virtualenv with
#     MPICC=BUILD/bin/mpicc pip install --no-binary=mpi4py mpi4py==$MPI4PY_VERSION
# then runs the test/ directory of the same sdist with 1, 2 and 4 ranks under
# BUILD/bin/mpiexec, and compares the failures with known_failures.txt (harness.py).
#
# usage: run.sh BUILD_DIR [--update-known] [--ranks 1,2,4] [-- main.py options]
# env:   MPI4PY_VERSION (4.1.2; known_failures.txt is for this version), PYTHON (python3),
#        M4P_TEST_TIMEOUT (60 s per test before it counts as a hang).
#
# Everything lives in BUILD_DIR/mpi4py: the pip cache (sdist, build dependencies and the
# built wheel, under a key of mpi.h, mpicc, the Python and the version, so a rerun with
# the same header installs the cached wheel in seconds and a changed header rebuilds),
# the venv (new every run), the unpacked sdist and the results of the last run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR [--update-known] [--ranks LIST] [-- main.py options]"; exit 2; }
build=$(cd "$1" && pwd); shift
update=""
ranks=1,2,4
while [ $# -gt 0 ]; do
  case "$1" in
    --update-known) update=--update; shift ;;
    --ranks) ranks=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "run.sh: unknown option $1"; exit 2 ;;
  esac
done
version=${MPI4PY_VERSION:-4.1.2}
python=${PYTHON:-python3}
work=$build/mpi4py
mpicc=$build/bin/mpicc
mpiexec=$build/bin/mpiexec
for f in "$mpicc" "$mpiexec" "$build/include/mpi.h" "$build/lib/libmpi.so"; do
  [ -e "$f" ] || { echo "FAIL: $f missing: build RailMPI first"; exit 1; }
done
command -v "$python" >/dev/null || { echo "skip: $python not found"; exit 77; }
"$python" -c 'import venv, ensurepip' 2>/dev/null ||
  { echo "FAIL: $python lacks venv/ensurepip (Debian: apt-get install python3-venv python3-dev)"; exit 1; }

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
t_start=$(now)
mkdir -p "$work"
key=$( { cat "$build/include/mpi.h" "$mpicc"; "$python" -VV; echo "$version"; } | sha256sum | cut -c1-16)
cache=$work/pip-$key
# caches of other headers are dead weight
find "$work" -maxdepth 1 -name 'pip-*' ! -name "pip-$key" -exec rm -rf {} +

t=$(now)
rm -rf "$work/venv"
"$python" -m venv "$work/venv"
py=$work/venv/bin/python
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PIP_CACHE_DIR=$cache
echo "== venv: $("$py" -VV | head -1) in $(elapsed "$t") s"

# The issue's install command; with 2 cores shared, the compiler runs one at a time.
t=$(now)
if ! MPICC=$mpicc MAKEFLAGS=-j2 "$py" -m pip install --no-binary=mpi4py "mpi4py==$version" \
      >"$work/pip-install.log" 2>&1; then
  tail -40 "$work/pip-install.log"
  echo "FAIL: MPICC=$mpicc pip install --no-binary=mpi4py mpi4py==$version failed; log: $work/pip-install.log"
  exit 1
fi
how=built
grep -q "Using cached mpi4py-$version-.*\.whl\|Processing .*mpi4py-$version-.*\.whl" "$work/pip-install.log" && how="cached wheel"
echo "== pip install mpi4py==$version ($how) in $(elapsed "$t") s"
"$py" - <<'EOF'
from mpi4py import MPI
print("==", MPI.Get_library_version().strip(), "| MPI", MPI.Get_version(), "| mpi4py", __import__("mpi4py").__version__)
EOF

# The test suite comes from the same sdist (pip's cache has it: no second download).
t=$(now)
src=$work/mpi4py-$version
if [ ! -f "$src/test/main.py" ]; then
  rm -rf "$work/sdist" "$src"
  "$py" -m pip download --no-deps --no-binary=mpi4py -d "$work/sdist" \
    "mpi4py==$version" >"$work/pip-download.log" 2>&1 ||
    { tail -20 "$work/pip-download.log"; echo "FAIL: pip download mpi4py==$version"; exit 1; }
  tar -xzf "$work/sdist/mpi4py-$version.tar.gz" -C "$work"
fi
echo "== sdist test suite in $(elapsed "$t") s: $src/test"

t=$(now)
set +e
"$python" "$here/harness.py" --mpiexec "$mpiexec" --python "$py" --srcdir "$src" \
  --out "$work/results" --known "$here/known_failures.txt" --ranks "$ranks" \
  --test-timeout "${M4P_TEST_TIMEOUT:-60}" $update ${1+-- "$@"}
rc=$?
set -e
echo "== test runs in $(elapsed "$t") s; total $(elapsed "$t_start") s"
exit $rc
