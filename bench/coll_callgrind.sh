#!/bin/bash
# Instructions per small blocking collective call on rank 0, counted by callgrind.
# For each collective and rank count, bench/coll.c runs twice with different iteration
# counts (-i) with rank 0 under valgrind --tool=callgrind; the difference of rank 0's
# main-thread instruction counts divided by the difference of calls is what one call costs
# (MPI_Init, the first checking call, the bench's own barriers and reductions and
# MPI_Finalize cancel out), the subtraction bench/callgrind.sh uses for ping-pongs.
# For RailMPI a second figure leaves out the wait loop (rmpi_core_wait_step and below):
# it still holds the polls that find nothing, whose number depends on how the peers are
# scheduled, while building, starting and freeing the schedule are outside it.
set -eu

usage() {
    cat <<'EOF'
usage: bench/coll_callgrind.sh [options] [MPICC MPIEXEC [MPIEXEC_ARGS...]]

Builds bench/coll.c with MPICC and prints a table of rank 0's instructions (Ir, main
thread) per call of each collective at each rank count. Instruction counts, not time.
Default MPI: the repository's build/bin/mpicc and build/bin/mpiexec.

  --colls LIST   comma list of barrier,bcast,reduce,allreduce,allgather,alltoall (default all)
  --ranks LIST   comma list of rank counts (default 2,4)
  --size BYTES   bytes per call as bench/coll.c counts them (default 8)
  --iters N      timed calls of the long run (default 2000)
  --base N       timed calls of the short run that is subtracted (default 200)
  --reps N       run each pair N times and keep the smallest count of each run (default 3):
                 a rank that waits for a descheduled peer spins, which only adds instructions
  --keep DIR     keep the build, callgrind.out files and logs in DIR
  --per-call     instead of subtracting two runs, count each call on its own: one run of
                 --base calls per rep with callgrind collecting only inside MPI_<Coll>
                 (--toggle-collect, a dump before each call), and print the value most
                 calls took, with how many of them took it: calls that waited for a
                 descheduled peer only add polls, so the mode is the path itself, where
                 the subtraction moves with every poll of a loaded machine
  --pmpi         with --per-call: collect inside PMPI_<Coll> instead (Open MPI's and MPICH's
                 MPI_<Coll> are aliases that callgrind names PMPI_<Coll>, so MPI_<Coll>
                 finds no calls there)

Examples:
  bench/coll_callgrind.sh
  bench/coll_callgrind.sh mpicc.openmpi mpirun.openmpi --allow-run-as-root --oversubscribe
  bench/coll_callgrind.sh --per-call --pmpi mpicc.mpich mpiexec.mpich
EOF
}

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
colls=barrier,bcast,reduce,allreduce,allgather,alltoall
ranks=2,4
size=8
iters=2000
base=200
reps=3
keep=""
per_call=0
pmpi=""

while [ $# -gt 0 ]; do
    case "$1" in
        --colls) [ $# -ge 2 ] || { usage >&2; exit 2; }; colls=$2; shift ;;
        --ranks) [ $# -ge 2 ] || { usage >&2; exit 2; }; ranks=$2; shift ;;
        --size) [ $# -ge 2 ] || { usage >&2; exit 2; }; size=$2; shift ;;
        --iters) [ $# -ge 2 ] || { usage >&2; exit 2; }; iters=$2; shift ;;
        --base) [ $# -ge 2 ] || { usage >&2; exit 2; }; base=$2; shift ;;
        --reps) [ $# -ge 2 ] || { usage >&2; exit 2; }; reps=$2; shift ;;
        --keep) [ $# -ge 2 ] || { usage >&2; exit 2; }; keep=$2; shift ;;
        --per-call) per_call=1 ;;
        --pmpi) pmpi=P ;;
        -h|--help) usage; exit 0 ;;
        --) shift; break ;;
        -*) echo "coll_callgrind.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
        *) break ;;
    esac
    shift
done
for v in "$iters" "$base" "$size" "$reps" ${ranks//,/ }; do
    case "$v" in ''|*[!0-9]*) echo "coll_callgrind.sh: '$v' is not a number" >&2; exit 2 ;; esac
done
[ "$size" -ge 4 ] || { echo "coll_callgrind.sh: --size must be at least 4 (bench/coll.c)" >&2; exit 2; }
[ "$iters" -gt "$base" ] || { echo "coll_callgrind.sh: --iters must exceed --base" >&2; exit 2; }

name=coll_callgrind.sh
# shellcheck source=bench/callgrind_lib.sh
. "$here/callgrind_lib.sh"
cg_setup coll "$@"
export CG_ALL_RANKS=0

# bench/coll.c with -i N makes 1 checking call, N/10 + 1 warm-up calls and N timed calls.
calls() { echo $(($1 + $1 / 10 + 1 + 1)); }

# Rank 0's main-thread Ir for one run.
run_ir() {
    local coll=$1 n=$2 iters=$3 tag=$1.$2.$3.$4
    rm -f "$work/cg.$tag".*
    if ! CG_OUT=$work/cg.$tag timeout 600 "$mpiexec" "${launcher_args[@]}" -n "$n" "$work/wrap.sh" \
        "$work/coll" -c "$coll" -s "$size" -i "$iters" >"$work/$tag.out" 2>"$work/$tag.log"; then
        echo "coll_callgrind.sh: $coll at $n ranks, $iters calls failed; log follows" >&2
        cat "$work/$tag.log" >&2
        exit 1
    fi
    local mains=("$work/cg.$tag".*-01)
    [ -e "${mains[0]}" ] || { echo "coll_callgrind.sh: no callgrind output for $tag" >&2; exit 1; }
    local main wait
    main=$(awk '/^(summary|totals):/{print $2; exit}' "${mains[0]}")
    # RailMPI: the wait loop's share (polls that find nothing depend on how the peers are
    # scheduled); 0 for other MPIs
    wait=$(callgrind_annotate --inclusive=yes --threshold=100 "${mains[0]}" 2>/dev/null |
        awk '/:rmpi_core_wait_step /{gsub(",", "", $1); print $1; exit}')
    echo "$main ${wait:-0}"
}

# The MPI function a collective's calls enter (bench/coll.c calls the MPI_ names).
fn_of() {
    case "$1" in
        barrier) echo ${pmpi}MPI_Barrier ;; bcast) echo ${pmpi}MPI_Bcast ;; reduce) echo ${pmpi}MPI_Reduce ;;
        allreduce) echo ${pmpi}MPI_Allreduce ;; allgather) echo ${pmpi}MPI_Allgather ;; alltoall) echo ${pmpi}MPI_Alltoall ;;
        *) echo "coll_callgrind.sh: unknown collective '$1'" >&2; exit 2 ;;
    esac
}

# --per-call: rank 0's Ir inside each call of one run (one dump per call), one value a line.
run_calls() {
    local coll=$1 n=$2 tag=pc.$1.$2.$3 fn
    fn=$(fn_of "$coll")
    rm -f "$work/cg.$tag".*
    if ! CG_OUT=$work/cg.$tag CG_EXTRA="--toggle-collect=$fn --dump-before=$fn" timeout 600 "$mpiexec" \
        "${launcher_args[@]}" -n "$n" "$work/wrap.sh" "$work/coll" -c "$coll" -s "$size" -i "$base" \
        >"$work/$tag.out" 2>"$work/$tag.log"; then
        echo "coll_callgrind.sh: $coll at $n ranks failed; log follows" >&2
        cat "$work/$tag.log" >&2
        exit 1
    fi
    # the main thread's dumps (PID.N-01); the last one (PID-01, finalize) has no call in it
    local f
    for f in "$work/cg.$tag".*.*-01; do
        [ -e "$f" ] || { echo "coll_callgrind.sh: no per-call dumps for $tag" >&2; exit 1; }
        awk '/^(summary|totals):/{print $2; exit}' "$f"
    done
}

# One cell of the table: --per-call's mode, else the subtraction of two runs.
cell_per_call() {
    for rep in $(seq 1 "$reps"); do run_calls "$1" "$2" "$rep"; done |
        awk '$1 > 0 { k[$1]++; all++ } END {
            for (v in k) if (k[v] > best || (k[v] == best && v + 0 < m + 0)) { best = k[v]; m = v }
            printf "%s (%d/%d)", m, best, all }'
}

cell_subtract() {
    local big="" small="" bigw="" smallw="" b bw s sw
    for rep in $(seq 1 "$reps"); do
        read -r b bw <<<"$(run_ir "$1" "$2" "$iters" "$rep")"
        read -r s sw <<<"$(run_ir "$1" "$2" "$base" "$rep")"
        if [ -z "$big" ] || [ "$b" -lt "$big" ]; then big=$b; fi
        if [ -z "$small" ] || [ "$s" -lt "$small" ]; then small=$s; fi
        if [ -z "$bigw" ] || [ $((b - bw)) -lt "$bigw" ]; then bigw=$((b - bw)); fi
        if [ -z "$smallw" ] || [ $((s - sw)) -lt "$smallw" ]; then smallw=$((s - sw)); fi
    done
    awk -v b="$big" -v s="$small" -v bo="$bigw" -v so="$smallw" \
        -v d="$(( $(calls "$iters") - $(calls "$base") ))" 'BEGIN {
        if (bo == b) printf "%.0f", (b - s) / d
        else printf "%.0f (%.0f)", (b - s) / d, (bo - so) / d }'
}

echo "MPI: $mpicc / $mpiexec ${launcher_args[*]}"
if [ "$per_call" = 1 ]; then
    echo "size: $size B; $(calls "$base") calls a run inside MPI_<Coll>, $reps runs"
    echo "Ir of rank 0's main thread per call: the value most calls took (calls that took it / calls)"
    cellw=20 cell=cell_per_call
else
    echo "size: $size B; calls: $(calls "$iters") minus $(calls "$base"), smallest of $reps runs each"
    echo "Ir of rank 0's main thread per call; RailMPI: (in brackets) without rmpi_core_wait_step"
    cellw=16 cell=cell_subtract
fi
printf '%-10s' coll
for n in ${ranks//,/ }; do printf " %${cellw}s" "$n ranks"; done
printf '\n'
for coll in ${colls//,/ }; do
    printf '%-10s' "$coll"
    for n in ${ranks//,/ }; do printf " %${cellw}s" "$("$cell" "$coll" "$n")"; done
    printf '\n'
done
