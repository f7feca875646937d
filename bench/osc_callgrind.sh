#!/bin/bash
# Instructions per one-sided call on rank 0 (the origin), counted by callgrind: bench/osc.c
# runs with a fixed number of operations (-n) and rank 0 under valgrind with
# --toggle-collect on the call, so only what runs inside it (inclusive) is counted; the
# total over the calls made (20 warm-up + N, bandwidth tests 64 per window) is the cost of
# one call. A second run counts MPI_Win_flush the same way. Load-independent.
# --target counts rank 1 (the target) instead: the instructions inside each function of
# --target-fns per operation of the test (what the target does to receive, apply and
# answer it), one run per function.
set -eu

usage() {
    cat <<'EOF'
usage: bench/osc_callgrind.sh [options] [MPICC MPIEXEC [MPIEXEC_ARGS...]]

Builds bench/osc.c with MPICC and prints rank 0's instructions (Ir, every thread, inside
the call only) per call of the operation of each test and per MPI_Win_flush after it.
Default MPI: the repository's build/bin/mpicc and build/bin/mpiexec.

  --tests LIST  comma list of put_lat,get_lat,put_bw,get_bw,acc_lat,fop_lat,cas_lat
                (default all of them), or put_lock (its columns: per Win_lock and
                per Win_unlock instead of per operation and per flush), or put_fence
                (per Put and per Win_fence; rank 0's count, both ranks fence)
  --size BYTES  bytes per operation of the sized tests (default 8)
  --flavor F    window flavor: allocate (default), create, dynamic
  --iters N     operations (latency tests) or windows of 64 (bandwidth) (default 2000)
  --keep DIR    keep the build, callgrind.out files and logs in DIR
  --target      count rank 1, the target, inside each of --target-fns, per operation
  --target-fns LIST  comma list of functions (callgrind --toggle-collect patterns) for
                --target (default RailMPI's: rmpi_vc_on_frame, the delivery of a frame,
                where requests are served now, and rma_progress, the one-sided progress
                hook, with its idle polls between operations; Open MPI ob1/vader:
                mca_btl_vader_poll_handle_frag)

Examples:
  bench/osc_callgrind.sh
  bench/osc_callgrind.sh mpicc.openmpi mpirun.openmpi --mca pml ob1 --mca btl self,vader \
      --mca btl_vader_single_copy_mechanism none
  bench/osc_callgrind.sh --flavor create --target --tests fop_lat,cas_lat,acc_lat
EOF
}

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
tests=put_lat,get_lat,put_bw,get_bw,acc_lat,fop_lat,cas_lat
size=8
flavor=allocate
iters=2000
keep=""
target=0
target_fns=rmpi_vc_on_frame,rma_progress

while [ $# -gt 0 ]; do
    case "$1" in
        --tests) [ $# -ge 2 ] || { usage >&2; exit 2; }; tests=$2; shift ;;
        --size) [ $# -ge 2 ] || { usage >&2; exit 2; }; size=$2; shift ;;
        --flavor) [ $# -ge 2 ] || { usage >&2; exit 2; }; flavor=$2; shift ;;
        --iters) [ $# -ge 2 ] || { usage >&2; exit 2; }; iters=$2; shift ;;
        --keep) [ $# -ge 2 ] || { usage >&2; exit 2; }; keep=$2; shift ;;
        --target) target=1 ;;
        --target-fns) [ $# -ge 2 ] || { usage >&2; exit 2; }; target_fns=$2; shift ;;
        -h|--help) usage; exit 0 ;;
        --) shift; break ;;
        -*) echo "osc_callgrind.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
        *) break ;;
    esac
    shift
done
for v in "$iters" "$size"; do
    case "$v" in ''|*[!0-9]*|0) echo "osc_callgrind.sh: '$v' is not a positive number" >&2; exit 2 ;; esac
done
[ "$size" -ge 4 ] || { echo "osc_callgrind.sh: --size must be at least 4 (acc_lat adds ints)" >&2; exit 2; }
case "$flavor" in allocate|create|dynamic) ;; *) echo "osc_callgrind.sh: unknown flavor '$flavor'" >&2; exit 2 ;; esac
if [ "$(id -u)" = 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

name=osc_callgrind.sh
# shellcheck source=bench/callgrind_lib.sh
. "$here/callgrind_lib.sh"
cg_setup osc "$@"
export CG_ALL_RANKS=0 CG_RANK=0

# Ir inside calls matching $2 during test $1 (every thread of rank 0).
run_ir() {
    local t=$1 fn=$2 tag=$1.${2//[^A-Za-z_]/}
    rm -f "$work/cg.$tag".*
    CG_OUT=$work/cg.$tag CG_EXTRA="--toggle-collect=$fn" \
        "$mpiexec" -n 2 "${launcher_args[@]}" "$work/wrap.sh" "$work/osc" -t "$t" -s "$size" -w "$flavor" \
        -n "$iters" >"$work/log.$tag" 2>&1 || { echo "$name: $t failed (log: $work/log.$tag)" >&2; exit 1; }
    cat "$work/cg.$tag".* | awk '/^summary:/ { s += $2 } END { print s + 0 }'
}

if [ "$target" = 1 ]; then
    export CG_RANK=1
    printf '%-8s %8s' test bytes
    for fn in ${target_fns//,/ }; do printf ' %24s' "Ir/op in $fn"; done
    printf '\n'
    for t in ${tests//,/ }; do
        per=1
        case "$t" in *_bw) per=64 ;; esac
        ops=$(((iters + 20) * per))
        printf '%-8s %8s' "$t" "$size"
        for fn in ${target_fns//,/ }; do
            printf ' %24.1f' "$(echo "$(run_ir "$t" "*$fn") / $ops" | bc -l)"
        done
        printf '\n'
    done
    exit 0
fi
printf '%-8s %8s %12s %14s\n' test bytes "Ir/op" "Ir/flush"
for t in ${tests//,/ }; do
    flfn='*MPI_Win_flush'
    case "$t" in
        put_lock) fn='*MPI_Win_lock' flfn='*MPI_Win_unlock' ;; # columns: Win_lock, Win_unlock
        put_fence) fn='*MPI_Put' flfn='*MPI_Win_fence' ;;      # columns: Put, Win_fence
        put_lat|put_bw) fn='*MPI_Put' ;;
        get_lat|get_bw) fn='*MPI_Get' ;;
        acc_lat) fn='*MPI_Accumulate' ;;
        fop_lat) fn='*MPI_Fetch_and_op' ;;
        cas_lat) fn='*MPI_Compare_and_swap' ;;
        *) echo "$name: unknown test '$t'" >&2; exit 2 ;;
    esac
    per=1
    case "$t" in *_bw) per=64 ;; esac
    ops=$(((iters + 20) * per))
    op=$(run_ir "$t" "$fn")
    fl=$(run_ir "$t" "$flfn")
    # the flush count also holds the calls around the bandwidth windows, one per window
    printf '%-8s %8s %12.1f %14.1f\n' "$t" "$size" "$(echo "$op / $ops" | bc -l)" "$(echo "$fl / ($iters + 20)" | bc -l)"
done
