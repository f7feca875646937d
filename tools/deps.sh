#!/bin/sh
# The Debian packages RailMPI needs, listed once (the Makefile and .ci/run call this).
# usage: tools/deps.sh build|check|bench
#   build: what `make` and `make demo` need; check: that plus what the tests need;
#   bench: that plus the reference MPIs' compilers and headers the bench/*compare* scripts
#   build the same benchmark source with (Debian's MPICH and Open MPI).
# As root, apt-get installs whatever is missing, optional packages too. Otherwise a missing
# required package stops here with the one `sudo apt-get install` line to run, and a
# missing optional one costs a line. With nothing missing: one dpkg-query, no network.
set -eu

build_pkgs="cmake ninja-build gcc make python3 pkg-config libsodium-dev"
# python3-venv, python3-dev: the mpi4py test (a venv, mpi4py built from source);
# iproute2: the netns tests; mpich: its mpiexec.hydra runs our ranks (interop test);
# g++: the C++ test (tests/cxx, built with mpicxx); slurmctld slurmd slurm-client munge: the
# private single-node Slurm of tests/interop/slurm.sh (srun --mpi=pmi2/pmix); openmpi-bin: its
# mpirun runs our ranks over PMIx (tests/interop/openmpi.sh)
check_pkgs="python3-venv python3-dev iproute2 valgrind mpich g++ slurmctld slurmd slurm-client munge openmpi-bin"
bench_pkgs="mpich libmpich-dev openmpi-bin libopenmpi-dev"
# Found at configure time (CMakeLists.txt); without one, its part is not built or tested.
optional_pkgs="libfabric-dev libibverbs-dev libpmix-dev libhwloc-dev gfortran clang libclang-rt-14-dev clang-format"
what() {
  case $1 in
    libfabric-dev) echo "the ofi provider, RMPI_NET=ofi" ;;
    libibverbs-dev) echo "the XRC device query of the ofi provider (RMPI_REPORT's xrc: line)" ;;
    libpmix-dev) echo "the PMIx client: Open MPI's mpirun, prterun, srun --mpi=pmix" ;;
    libhwloc-dev) echo "hwloc topology for process binding (sysfs is read instead)" ;;
    gfortran) echo "the Fortran bindings: mpif.h, use mpi, mpifort" ;;
    clang|libclang-rt-14-dev) echo "the fuzz harnesses (libFuzzer) and their sanitized build" ;;
    clang-format) echo "the format check (tools/format.sh --check, ctest label format)" ;;
  esac
}

case "${1:-}" in
  build) required=$build_pkgs ;;
  check) required="$build_pkgs $check_pkgs" ;;
  bench) required="$build_pkgs $check_pkgs $bench_pkgs" ;;
  *) echo "usage: $0 build|check|bench" >&2; exit 2 ;;
esac

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "deps.sh: not a Debian system, packages not checked; needed: $required (optional: $optional_pkgs)" >&2
  exit 0
fi

# dpkg-query exits 1 when a package is unknown to dpkg; that one is simply missing
installed=" $(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' $required $optional_pkgs 2>/dev/null |
              awk '$2 == "ii" { printf "%s ", $1 }') "
need="" want="" why=""
for p in $required; do
  case $installed in *" $p "*) ;; *) need="$need $p" ;; esac
done
for p in $optional_pkgs; do
  case $installed in *" $p "*) ;; *) want="$want $p" why="$why, $p ($(what "$p"))" ;; esac
done
[ -z "$need$want" ] && exit 0

if [ "$(id -u)" = 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  echo "deps.sh: apt-get install$need$want"
  apt-get update -qq
  [ -z "$need" ] || apt-get install -y -qq --no-install-recommends $need >/dev/null
  # an optional package that cannot be installed leaves its part out, nothing more
  if [ -n "$want" ] && ! apt-get install -y -qq --no-install-recommends $want >/dev/null; then
    echo "deps.sh: could not install the optional$want; building without" >&2
  fi
  exit 0
fi

if [ -n "$need" ]; then
  echo "deps.sh: required packages are missing; run this, then the same make command again:" >&2
  echo "  sudo apt-get install$need$want" >&2
  exit 1
fi
echo "deps.sh: optional, not installed, so not built: ${why#, }; to add: sudo apt-get install$want" >&2
