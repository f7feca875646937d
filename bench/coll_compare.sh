#!/bin/bash
# Side-by-side collective latency of RailMPI, MPICH and Open MPI on this machine, all
# ranks on one host over shared memory, with the same benchmark source (coll.c).
set -eu

usage() {
    cat <<'EOF'
usage: bench/coll_compare.sh [--np N] [--only LIST] [--reps N] [--sizes MIN:MAX] [--colls LIST] [--osu] [--build DIR] [--before LIBDIR] [--out FILE]
                             [--wait slow|fast[:S]]

Builds bench/coll.c with mpicc.mpich and mpicc.openmpi into BUILD/bench/ref/, uses
BUILD/bench/coll for RailMPI (cmake target bench), and runs each MPI with N ranks
(default 4) on shared memory, --reps times (default 3) going round the MPIs in turn.

  --np N          ranks per run (default 4)
  --only LIST     comma-separated subset of mpich,openmpi,railmpi (default: all found)
  --reps N        runs per MPI; the table shows the median (default 3)
  --sizes S       MIN:MAX (doubling) or a comma list such as 8,65536,1048576
                  (default 8:1048576)
  --colls LIST    collectives, as coll's -c (default: the blocking ones; add
                  ibarrier,ibcast,ireduce,iallreduce,iallgather,ialltoall
                  for the non-blocking forms, gather,scatter,gatherv,scatterv,
                  allgatherv,alltoallv,reduce_scatter,scan for the rest of OSU's)
  --osu           OSU's timing for every MPI (coll -B): a barrier before every call, each
                  call timed alone, the mean over ranks (default: calls back to back, the
                  slowest rank's mean)
  --build DIR     RailMPI build tree (default: the repository's build/)
  --before LIBDIR also run RailMPI's coll with the libmpi.so of LIBDIR (a copy of an
                  earlier build's lib/, e.g. main's) as column "before", in the same
                  rounds; rail/best still compares with MPICH and Open MPI only
  --out FILE      JSON lines (default BUILD/bench/results/coll-DATE.jsonl); the markdown
                  table goes to the same name with .md, launcher output to .log
  --wait ST[:S]   start every job in the machine's state ST (slow or fast), waiting up
                  to S seconds (default 300) for it as bench/waitstate.sh does, and leave
                  the job out when it does not come; every row is then tagged with the
                  state it ran in (as with state=1 in the environment), and the table adds
                  the medians of the rows that ran in the state asked for

Extra launcher arguments: MPICH_ARGS, OMPI_ARGS, RMPI_ARGS (word-split).
EOF
}

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=$root/build
np=4
only=""
reps=3
sizes=8:1048576
colls=""
out=""
before=""
wait_opt=""

while [ $# -gt 0 ]; do
    case "$1" in
        --np) [ $# -ge 2 ] || { usage >&2; exit 2; }; np=$2; shift ;;
        --only) [ $# -ge 2 ] || { usage >&2; exit 2; }; only=$2; shift ;;
        --reps) [ $# -ge 2 ] || { usage >&2; exit 2; }; reps=$2; shift ;;
        --sizes) [ $# -ge 2 ] || { usage >&2; exit 2; }; sizes=$2; shift ;;
        --colls) [ $# -ge 2 ] || { usage >&2; exit 2; }; colls=$2; shift ;;
        --osu) osu=1 ;;
        --build) [ $# -ge 2 ] || { usage >&2; exit 2; }; build=$2; shift ;;
        --out) [ $# -ge 2 ] || { usage >&2; exit 2; }; out=$2; shift ;;
        --before) [ $# -ge 2 ] || { usage >&2; exit 2; }; before=$2; shift ;;
        --wait) [ $# -ge 2 ] || { usage >&2; exit 2; }; wait_opt=$2; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "coll_compare.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
    esac
    shift
done
for v in "$np" "$reps"; do
    case "$v" in ''|*[!0-9]*|0) echo "coll_compare.sh: '$v' is not a positive number" >&2; exit 2 ;; esac
done
build=$(mkdir -p "$build" && cd "$build" && pwd)

bench_name=coll_compare.sh
# shellcheck source=bench/bench_lib.sh
. "$here/bench_lib.sh"
bench_setup coll
[ -z "$wait_opt" ] || bench_wait_opt "$wait_opt"

bench_build_all coll
if [ -n "$before" ]; then
    [ -f "$before/libmpi.so" ] || { say "--before: no libmpi.so in $before"; exit 2; }
    before=$(cd "$before" && pwd)
    mpis+=(before)
fi

# Shared memory for every MPI (see bench/README.md for how each transport was checked).
# More ranks than cores: Open MPI needs --oversubscribe (its ob1 then yields while
# polling, as RailMPI does after RMPI_SPIN_COUNT polls); MPICH/UCX keeps spinning.
# Only then: with as many cores as ranks the flag would still switch Open MPI to yielding
# and unbound ranks, which is not how it runs by default.
ompi_over=""
if [ "$np" -gt "$(nproc)" ]; then ompi_over="--oversubscribe"; fi
launch() {
    case "$1" in
        mpich) echo "mpiexec.mpich -n $np ${MPICH_ARGS:-} $ref/coll.mpich" ;;
        openmpi) echo "mpirun.openmpi -n $np $ompi_over --mca pml ob1 --mca btl self,vader ${OMPI_ARGS:-}" \
                      "$ref/coll.openmpi" ;;
        railmpi) echo "$build/bin/mpiexec -n $np ${RMPI_ARGS:-} $build/bench/coll" ;;
        # the same binary and launcher; the loader takes libmpi.so from the earlier build
        before) echo "$build/bin/mpiexec -n $np ${RMPI_ARGS:-} env LD_LIBRARY_PATH=$before $build/bench/coll" ;;
    esac
}

busy=$(cpu_busy)
load=$(cut -d' ' -f1-3 /proc/loadavg)
echo "{\"meta\":\"coll_compare\",\"date\":\"$stamp\",\"host\":\"$(hostname)\",\"cores\":$(nproc),\"np\":$np,\"busy_pct\":$busy,\"loadavg\":\"$load\",\"reps\":$reps,\"sizes\":\"$sizes\"$versions}" >>"$out"
[ "$busy" -lt 20 ] || say "warning: the CPUs are $busy% busy with other work (load $load); numbers will be noisy"

case "$sizes" in *,*) sz="-s $sizes" ;; *) sz="-m $sizes" ;; esac
[ -z "$colls" ] || sz="$sz -c $colls"
[ -z "${osu:-}" ] || sz="$sz -B"
# shellcheck disable=SC2086  # sz is two to five words
bench_run_all 900 $sz

python3 - "$out" <<'EOF' | tee "$md"
import json, statistics, sys
rows, skipped, meta = {}, {}, {}
for line in open(sys.argv[1]):
    d = json.loads(line)
    if "meta" in d:
        meta = d
    elif "skipped" in d:
        skipped[(d["mpi"], d["coll"])] = d["skipped"]
    else:
        rows.setdefault((d["coll"], d["size"]), {}).setdefault(d["mpi"], []).append(d["lat_us"])
mpis = [m for m in ("railmpi", "before", "mpich", "openmpi") if any(m in v for v in rows.values())]
print(f"Collective latency (us, median of {meta.get('reps')} runs), {meta.get('np')} ranks on {meta.get('cores')} cores, "
      f"CPU busy {meta.get('busy_pct')}% before, load {meta.get('loadavg')}\n")
print("| collective | bytes | " + " | ".join(mpis) + " | rail/best |")
print("|---|---:|" + "---:|" * len(mpis) + "---:|")
order = ["barrier", "bcast", "reduce", "allreduce", "allgather", "alltoall", "ibarrier", "ibcast", "ireduce", "iallreduce", "iallgather", "ialltoall", "gather", "scatter", "gatherv", "scatterv", "allgatherv", "alltoallv", "reduce_scatter", "scan"]
for (coll, size) in sorted(rows, key=lambda k: (order.index(k[0]), k[1])):
    med = {m: statistics.median(v) for m, v in rows[(coll, size)].items()}
    best = min((med[m] for m in med if m not in ("railmpi", "before")), default=None)
    ratio = f"{med['railmpi'] / best:.2f}" if best and "railmpi" in med else "-"
    print(f"| {coll} | {size} | " + " | ".join(f"{med[m]:.2f}" if m in med else "-" for m in mpis) + f" | {ratio} |")
if meta.get("reps", 1) > 1:
    # every job's figure in run order: a whole job of any MPI may fall into a slow mode at
    # every size, which a median of few jobs does not hide (docs/results/coll.md)
    print(f"\nPer job (us, runs 1..{meta.get('reps')} in order):\n")
    print("| collective | bytes | " + " | ".join(mpis) + " |")
    print("|---|---:|" + "---|" * len(mpis))
    for (coll, size) in sorted(rows, key=lambda k: (order.index(k[0]), k[1])):
        r = rows[(coll, size)]
        print(f"| {coll} | {size} | " + " | ".join(" ".join(f"{x:.1f}" for x in r.get(m, [])) for m in mpis) + " |")
# rows tagged with the machine's state (state=1 or --wait): each MPI's median over the jobs
# whose row ran in one state, per state, then every job's figure marked F/S/M
tagged = [d for d in map(json.loads, open(sys.argv[1])) if "state" in d and "lat_us" in d]
if tagged:
    runs, mark = {}, {"fast": "F", "slow": "S", "mixed": "M"}
    for d in tagged:
        runs.setdefault((d["coll"], d["size"]), {}).setdefault(d["mpi"], []).append(d)
    for st in ("fast", "slow"):
        print(f"\nRows measured in the {st} state alone (linert below / at or above 150 ns through the row), "
              "median over the jobs (their count), then each job's figure and state\n")
        print("| collective | bytes | " + " | ".join(mpis) + " | rail/best | jobs |")
        print("|---|---:|" + "---:|" * len(mpis) + "---:|---|")
        for (coll, size) in sorted(runs, key=lambda k: (order.index(k[0]), k[1])):
            r = runs[(coll, size)]
            byst = {m: [d["lat_us"] for d in v if d["state"] == st] for m, v in r.items()}
            med = {m: statistics.median(v) for m, v in byst.items() if v}
            best = min((med[m] for m in med if m not in ("railmpi", "before")), default=None)
            ratio = f"{med['railmpi'] / best:.2f}" if best and "railmpi" in med else "-"
            each = "; ".join(m + " " + " ".join(f"{d['lat_us']:.3g}{mark.get(d['state'], '?')}" for d in r.get(m, []))
                             for m in mpis if m in r)
            print(f"| {coll} | {size} | " + " | ".join(f"{med[m]:.3f} ({len(byst[m])})" if m in med else "-" for m in mpis)
                  + f" | {ratio} | {each} |")
for (mpi, coll), why in sorted(skipped.items()):
    print(f"\n{mpi}: {coll} skipped ({why})")
EOF
exit $failed
