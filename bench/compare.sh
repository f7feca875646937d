#!/bin/bash
# Side-by-side point-to-point comparison of RailMPI, MPICH and Open MPI on this machine,
# over shared memory and over TCP on loopback, with the same benchmark source (pt2pt.c).
set -eu

usage() {
    cat <<'EOF'
usage: bench/compare.sh [--quick] [--only LIST] [--nets LIST] [--reps N] [--sizes MIN:MAX]
                        [--before LIBDIR] [--build DIR] [--out FILE]

Builds bench/pt2pt.c with mpicc.mpich and mpicc.openmpi into BUILD/bench/ref/, uses
BUILD/bench/pt2pt for RailMPI when BUILD/bin/mpicc exists, and runs 2 ranks of
latency, bw and bibw for each MPI over shm and over TCP on loopback.

  --quick       sizes 1 B .. 1 MiB and a single run of each (about a minute)
  --only LIST   comma-separated subset of mpich,openmpi,railmpi (default: all found)
  --nets LIST   comma-separated transports (default shm,tcp): shm, tcp (loopback), and over
                libfabric ofi-tcp (tcp;ofi_rxm) and ofi-shm (libfabric's shm): RailMPI with
                RMPI_NET=ofi next to Open MPI's mtl ofi; MPICH (UCX) has no libfabric path
  --reps N      runs per MPI and transport; tables show the median (default 3)
  --sizes MIN:MAX  message sizes (pt2pt -m; default 1:4194304, with --quick 1:1048576):
                split a sweep so that each timed run stays short
  --before DIR  also run RailMPI with the libmpi.so kept in DIR (a copy of an earlier
                build's lib/, e.g. cp -a build/lib /tmp/x-before): a column
                railmpi-before in the same rotation, so before and after alternate with
                the references
  --build DIR   RailMPI build tree (default: the repository's build/)
  --out FILE    JSON lines results (default BUILD/bench/results/compare-DATE.jsonl);
                the markdown tables go to the same name with .md, launcher output to .log

Extra launcher arguments: MPICH_ARGS, OMPI_ARGS, RMPI_ARGS (word-split).
EOF
}

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=$root/build
quick=0
only=""
nets=shm,tcp
reps=""
out=""
sizes=""
before=""

while [ $# -gt 0 ]; do
    case "$1" in
        --quick) quick=1 ;;
        --only) [ $# -ge 2 ] || { usage >&2; exit 2; }; only=$2; shift ;;
        --nets) [ $# -ge 2 ] || { usage >&2; exit 2; }; nets=$2; shift ;;
        --reps) [ $# -ge 2 ] || { usage >&2; exit 2; }; reps=$2; shift ;;
        --sizes) [ $# -ge 2 ] || { usage >&2; exit 2; }; sizes=$2; shift ;;
        --before) [ $# -ge 2 ] || { usage >&2; exit 2; }; before=$2; shift ;;
        --build) [ $# -ge 2 ] || { usage >&2; exit 2; }; build=$2; shift ;;
        --out) [ $# -ge 2 ] || { usage >&2; exit 2; }; out=$2; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "compare.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
    esac
    shift
done

case "${reps:-x}" in
    x) reps=$([ $quick = 1 ] && echo 1 || echo 3) ;;
    *[!0-9]*|0) echo "compare.sh: --reps needs a positive number" >&2; exit 2 ;;
esac
build=$(mkdir -p "$build" && cd "$build" && pwd)

# The large sizes dominate the run time; --quick stops at 1 MiB.
case "$sizes" in
    "") sizes=$([ $quick = 1 ] && echo 1:1048576 || echo 1:4194304) ;;
    *[!0-9:]*|:*|*:|*:*:*) echo "compare.sh: --sizes needs MIN:MAX" >&2; exit 2 ;;
    *:*) ;;
    *) echo "compare.sh: --sizes needs MIN:MAX" >&2; exit 2 ;;
esac

bench_name=compare.sh
# shellcheck source=bench/bench_lib.sh
. "$here/bench_lib.sh"
bench_setup compare


for m in ${only//,/ }; do
    case "$m" in mpich|openmpi|railmpi) ;; *) say "unknown MPI '$m' in --only"; exit 2 ;; esac
done

# Same flags as the RailMPI build (RelWithDebInfo) so compiler choices do not tilt the table.
build_ref() {
    local cc=$1 bin=$2
    "$cc" -std=c11 -O2 -g -Wall -Wextra -o "$bin" "$here/pt2pt.c"
}

mpis=()
versions=""
if wanted mpich; then
    if command -v mpicc.mpich >/dev/null && command -v mpiexec.mpich >/dev/null; then
        say "building pt2pt with mpicc.mpich"
        build_ref mpicc.mpich "$ref/pt2pt.mpich"
        mpis+=(mpich)
        versions+=",\"mpich\":\"$(mpichversion 2>/dev/null | awk '/^MPICH Version/{print $3}')\""
    else
        say "mpicc.mpich/mpiexec.mpich not found; skipping MPICH"
    fi
fi
if wanted openmpi; then
    if command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null; then
        say "building pt2pt with mpicc.openmpi"
        build_ref mpicc.openmpi "$ref/pt2pt.openmpi"
        mpis+=(openmpi)
        versions+=",\"openmpi\":\"$(ompi_info --version 2>/dev/null | awk '/Open MPI/{print $3; exit}')\""
    else
        say "mpicc.openmpi/mpirun.openmpi not found; skipping Open MPI"
    fi
fi
if wanted railmpi; then
    if [ -x "$build/bin/mpicc" ] && [ -x "$build/bin/mpiexec" ]; then
        # Rebuilding through CMake keeps build/bench/pt2pt in step with pt2pt.c and the library.
        if [ -f "$build/CMakeCache.txt" ]; then
            say "building RailMPI's pt2pt (cmake target bench)"
            cmake --build "$build" --target bench >>"$log" 2>&1 ||
                { say "building the bench target failed (see $log)"; exit 1; }
        elif [ ! -x "$build/bench/pt2pt" ]; then
            say "building RailMPI's pt2pt with $build/bin/mpicc"
            mkdir -p "$build/bench"
            "$build/bin/mpicc" -std=c11 -O2 -g -Wall -Wextra -o "$build/bench/pt2pt" "$here/pt2pt.c"
        fi
        mpis+=(railmpi)
        if [ -n "$before" ]; then
            [ -f "$before/libmpi.so" ] || { say "--before: no libmpi.so in $before"; exit 2; }
            before=$(cd "$before" && pwd)
            mpis+=(railmpi-before)
        fi
    elif [ -n "$only" ]; then
        say "RailMPI is not built in $build (no bin/mpicc or bin/mpiexec); run 'make' first"
        exit 1
    else
        say "RailMPI not built in $build; comparing the reference MPIs only"
    fi
fi
[ ${#mpis[@]} -gt 0 ] || { say "no MPI to run"; exit 1; }

# One command line per MPI and transport. Each forces its transport explicitly and was
# checked by watching the lo byte counters (see bench/README.md).
launch() {
    local mpi=$1 net=$2
    case "$mpi/$net" in
        mpich/shm)
            echo "mpiexec.mpich -n 2 ${MPICH_ARGS:-} $ref/pt2pt.mpich" ;;
        mpich/tcp)
            # Debian's MPICH is ch4:ucx: UCX picks the transport, NOLOCAL keeps any ch4 shm out.
            echo "mpiexec.mpich -n 2 -genv MPIR_CVAR_NOLOCAL 1 -genv UCX_TLS tcp,self" \
                 "-genv UCX_NET_DEVICES lo ${MPICH_ARGS:-} $ref/pt2pt.mpich" ;;
        openmpi/shm)
            echo "mpirun.openmpi -n 2 --mca pml ob1 --mca btl self,vader ${OMPI_ARGS:-}" \
                 "$ref/pt2pt.openmpi" ;;
        openmpi/tcp)
            echo "mpirun.openmpi -n 2 --mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include lo" \
                 "${OMPI_ARGS:-} $ref/pt2pt.openmpi" ;;
        railmpi/shm)
            echo "$build/bin/mpiexec -n 2 ${RMPI_ARGS:-} $build/bench/pt2pt" ;;
        railmpi/tcp)
            echo "$build/bin/mpiexec -n 2 -genv RMPI_NET tcp ${RMPI_ARGS:-} $build/bench/pt2pt" ;;
        openmpi/ofi-tcp)
            echo "mpirun.openmpi -n 2 --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include tcp;ofi_rxm" \
                 "${OMPI_ARGS:-} $ref/pt2pt.openmpi" ;;
        openmpi/ofi-shm)
            echo "mpirun.openmpi -n 2 --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include shm" \
                 "${OMPI_ARGS:-} $ref/pt2pt.openmpi" ;;
        railmpi/ofi-tcp)
            echo "$build/bin/mpiexec -n 2 -genv RMPI_NET ofi -genv RMPI_OFI_PROVIDER tcp;ofi_rxm" \
                 "${RMPI_ARGS:-} $build/bench/pt2pt" ;;
        railmpi/ofi-shm)
            echo "$build/bin/mpiexec -n 2 -genv RMPI_NET ofi -genv RMPI_OFI_PROVIDER shm ${RMPI_ARGS:-}" \
                 "$build/bench/pt2pt" ;;
        railmpi-before/*)
            # the same program and launcher, loading the earlier libmpi.so
            launch railmpi "$net" | sed "s|/bin/mpiexec -n 2 |&-genv LD_LIBRARY_PATH $before |" ;;
    esac
}

busy=$(cpu_busy)
echo "{\"meta\":\"compare\",\"date\":\"$stamp\",\"host\":\"$(hostname)\",\"cores\":$(nproc),\"busy_pct\":$busy,\"quick\":$quick,\"reps\":$reps,\"sizes\":\"$sizes\",\"before\":\"$before\"$versions}" >>"$out"
if [ "$busy" -ge 20 ]; then
    say "warning: the CPUs are $busy% busy with other work; numbers will be noisy"
fi

# Repetitions go round all MPIs in turn, so a burst of outside load hits them alike.
failed=0
start=$SECONDS
for rep in $(seq 1 "$reps"); do
    for mpi in "${mpis[@]}"; do
        for net in ${nets//,/ }; do
            cmd=$(launch "$mpi" "$net")
            [ -n "$cmd" ] || continue  # no such path for this MPI (MPICH over libfabric)
            say "run $rep/$reps: $mpi $net"
            echo "### $mpi $net rep $rep: $cmd -m $sizes" >>"$log"
            # shellcheck disable=SC2086  # the command line is meant to be word-split
            if lines=$(timeout 300 $cmd -m "$sizes" 2>>"$log"); then
                printf '%s\n' "$lines" | grep '^{' |
                    sed "s/^{/{\"mpi\":\"$mpi\",\"net\":\"$net\",\"rep\":$rep,/" >>"$out"
            else
                say "FAILED: $mpi $net (see $log)"
                printf '%s\n' "$lines" >>"$log"
                failed=1
            fi
        done
    done
done
say "runs took $((SECONDS - start)) s; results in $out"

python3 "$here/compare_table.py" "$out" | tee "$md"
exit $failed
