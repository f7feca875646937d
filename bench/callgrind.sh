#!/bin/bash
# Instructions per 8-byte ping-pong iteration on rank 0, counted by callgrind.
# Two runs that differ only in the number of timed iterations are subtracted, so MPI_Init,
# warm-up and MPI_Finalize cancel out and what is left is the small-message path itself.
set -eu

usage() {
    cat <<'EOF'
usage: bench/callgrind.sh [options] [MPICC MPIEXEC [MPIEXEC_ARGS...]]

Builds bench/pt2pt.c with MPICC, runs a 2-rank 8-byte ping-pong twice under MPIEXEC
(-n 2 is added), with rank 0 under valgrind --tool=callgrind, and prints rank 0's
instructions (Ir) per ping-pong iteration (one send plus one receive), for its main
thread and for all its threads together.
Default MPI: the repository's build/bin/mpicc and build/bin/mpiexec.

  --iters N      timed iterations of the long run (default 10000)
  --base N       timed iterations of the short run that is subtracted (default 100)
  --size BYTES   message size (default 8)
  --reps N       repeat the pair of runs N times and report each (default 1)
  --all-ranks    run every rank under callgrind (when the launcher sets no rank variable)
  --keep DIR     keep the build, callgrind.out files and logs in DIR

Examples:
  bench/callgrind.sh mpicc.mpich mpiexec.mpich
  bench/callgrind.sh mpicc.openmpi mpirun.openmpi --allow-run-as-root
  bench/callgrind.sh build/bin/mpicc build/bin/mpiexec -genv RMPI_NET tcp
EOF
}

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
iters=10000
base=100
size=8
reps=1
all_ranks=0
keep=""

while [ $# -gt 0 ]; do
    case "$1" in
        --iters) [ $# -ge 2 ] || { usage >&2; exit 2; }; iters=$2; shift ;;
        --base) [ $# -ge 2 ] || { usage >&2; exit 2; }; base=$2; shift ;;
        --size) [ $# -ge 2 ] || { usage >&2; exit 2; }; size=$2; shift ;;
        --reps) [ $# -ge 2 ] || { usage >&2; exit 2; }; reps=$2; shift ;;
        --all-ranks) all_ranks=1 ;;
        --keep) [ $# -ge 2 ] || { usage >&2; exit 2; }; keep=$2; shift ;;
        -h|--help) usage; exit 0 ;;
        --) shift; break ;;
        -*) echo "callgrind.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
        *) break ;;
    esac
    shift
done
for v in "$iters" "$base" "$size" "$reps"; do
    case "$v" in ''|*[!0-9]*) echo "callgrind.sh: '$v' is not a number" >&2; exit 2 ;; esac
done
[ "$iters" -gt "$base" ] || { echo "callgrind.sh: --iters must exceed --base" >&2; exit 2; }

name=callgrind.sh
# shellcheck source=bench/callgrind_lib.sh
. "$here/callgrind_lib.sh"
cg_setup pt2pt "$@"

# Prints "MAIN ALL": rank 0's Ir in its main thread and in all its threads. Threads are
# counted apart because progress or PMI helper threads wake on timers and add noise.
# With --all-ranks the process with the smallest count stands in for rank 0, which is fine
# because both ranks of a ping-pong do the same work.
run_ir() {
    local n=$1 tag=$2
    rm -f "$work/cg.$tag".*
    if ! CG_OUT=$work/cg.$tag CG_ALL_RANKS=$all_ranks timeout 600 \
        "$mpiexec" "${launcher_args[@]}" -n 2 "$work/wrap.sh" "$work/pt2pt" \
        -t latency -m "$size:$size" -i "$n" -x 10 >"$work/$tag.out" 2>"$work/$tag.log"; then
        echo "callgrind.sh: the run with $n iterations failed; log follows" >&2
        cat "$work/$tag.log" >&2
        exit 1
    fi
    local mains=("$work/cg.$tag".*-01)
    [ -e "${mains[0]}" ] || { echo "callgrind.sh: no callgrind output for the $n-iteration run" >&2; exit 1; }
    local best_main="" best_all=""
    for f in "${mains[@]}"; do
        local main all
        main=$(awk '/^(summary|totals):/{print $2; exit}' "$f")
        all=$(cat "${f%-01}"-* | awk '/^summary:/{s += $2} END {print s}')
        if [ -z "$best_main" ] || [ "$main" -lt "$best_main" ]; then best_main=$main best_all=$all; fi
    done
    echo "$best_main $best_all"
}

echo "MPI: $mpicc / $mpiexec ${launcher_args[*]}"
echo "message: $size B, ping-pongs: $iters minus $base (10 warm-up in both)"
printf '%-5s %14s %14s %14s %14s\n' run "main thread" "all threads" "Ir(long)" "Ir(short)"
for rep in $(seq 1 "$reps"); do
    read -r big_main big_all <<<"$(run_ir "$iters" "long$rep")"
    read -r small_main small_all <<<"$(run_ir "$base" "short$rep")"
    awk -v bm="$big_main" -v ba="$big_all" -v sm="$small_main" -v sa="$small_all" \
        -v n="$((iters - base))" -v r="$rep" 'BEGIN {
        printf "%-5d %14.0f %14.0f %14d %14d\n", r, (bm - sm) / n, (ba - sa) / n, ba, sa }'
done
echo "(Ir per ping-pong iteration of rank 0: one send and one receive)"
