#!/bin/bash
# Warm-up of RailMPI, MPICH and Open MPI side by side: each test (bench/warmup.c) in a
# fresh 2-rank job on shared memory, its first measurement against the same one repeated.
set -eu

usage() {
    cat <<'EOF'
usage: bench/warmup.sh [--only LIST] [--reps N] [--build DIR] [--out FILE]

Builds bench/warmup.c with mpicc.mpich and mpicc.openmpi into BUILD/bench/ref/, uses
BUILD/bench/warmup for RailMPI (cmake target bench), and runs every test (latency and bw
at 1 B, bcast at 1 B and 64 KiB, allreduce at 8 B and 64 KiB, allgather at 64 KiB, alltoall
at 1 and 64 KiB, one-sided put + flush at 8 B and 64 KiB and accumulate + flush at 8 B) in a
fresh job per MPI,
--reps times (default 3), going round the MPIs in turn. The table shows, per MPI, the
median first measurement, the median steady one and their ratio (above 1: the first is
slower; the target is at most 1.5).

  --only LIST     comma-separated subset of mpich,openmpi,railmpi (default: all found)
  --reps N        jobs per MPI and test (default 3)
  --build DIR     RailMPI build tree (default: the repository's build/)
  --out FILE      JSON lines (default BUILD/bench/results/warmup-DATE.jsonl)
EOF
}

here=$(cd "$(dirname "$0")" && pwd)
build=$(dirname "$here")/build
only=""
reps=3
out=""
while [ $# -gt 0 ]; do
    case "$1" in
        --only) [ $# -ge 2 ] || { usage >&2; exit 2; }; only=$2; shift ;;
        --reps) [ $# -ge 2 ] || { usage >&2; exit 2; }; reps=$2; shift ;;
        --build) [ $# -ge 2 ] || { usage >&2; exit 2; }; build=$2; shift ;;
        --out) [ $# -ge 2 ] || { usage >&2; exit 2; }; out=$2; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "warmup.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
    esac
    shift
done
case "$reps" in ''|*[!0-9]*|0) echo "warmup.sh: '$reps' is not a positive number" >&2; exit 2 ;; esac
build=$(mkdir -p "$build" && cd "$build" && pwd)

bench_name=warmup.sh
# shellcheck source=bench/bench_lib.sh
. "$here/bench_lib.sh"
bench_setup warmup

mpis=()
if wanted mpich && command -v mpicc.mpich >/dev/null; then
    mpicc.mpich -std=c11 -O2 -g -Wall -Wextra -o "$ref/warmup.mpich" "$here/warmup.c"
    mpis+=(mpich)
fi
if wanted openmpi && command -v mpicc.openmpi >/dev/null; then
    mpicc.openmpi -std=c11 -O2 -g -Wall -Wextra -o "$ref/warmup.openmpi" "$here/warmup.c"
    mpis+=(openmpi)
fi
if wanted railmpi && [ -f "$build/CMakeCache.txt" ]; then
    cmake --build "$build" --target bench >>"$log" 2>&1 || { say "building bench failed (see $log)"; exit 1; }
    mpis+=(railmpi)
fi
[ ${#mpis[@]} -gt 0 ] || { say "no MPI to run"; exit 1; }

launch() {
    case "$1" in
        mpich) echo "mpiexec.mpich -n 2 $ref/warmup.mpich" ;;
        # one-sided: without vader's single copy, as osc_compare.sh runs Open MPI's osc sm (it crashes with CMA)
        openmpi) echo "mpirun.openmpi -n 2 --mca pml ob1 --mca btl self,vader" \
                      "$(case "$2" in put|acc) echo "--mca btl_vader_single_copy_mechanism none" ;; esac)" \
                      "$ref/warmup.openmpi" ;;
        railmpi) echo "$build/bin/mpiexec -n 2 $build/bench/warmup" ;;
    esac
}

busy=$(cpu_busy)
echo "{\"meta\":\"warmup\",\"date\":\"$stamp\",\"busy_pct\":$busy,\"loadavg\":\"$(cut -d' ' -f1-3 /proc/loadavg)\",\"reps\":$reps}" >>"$out"
[ "$busy" -lt 20 ] || say "warning: the CPUs are $busy% busy with other work; numbers will be noisy"
failed=0
for rep in $(seq 1 "$reps"); do
    for t in "latency 1" "bw 1" "bcast 1" "bcast 65536" "allreduce 8" "allreduce 65536" "allgather 65536" "alltoall 1024" "alltoall 65536" "put 8" "put 65536" "acc 8"; do
        set -- $t
        for mpi in "${mpis[@]}"; do
            cmd="$(launch "$mpi" "$1") -t $1 -s $2"
            echo "### $cmd" >>"$log"
            # shellcheck disable=SC2086  # the command line is meant to be word-split
            if line=$(timeout 300 $cmd 2>>"$log" | grep '^{'); then
                echo "$line" | sed "s/^{/{\"mpi\":\"$mpi\",\"rep\":$rep,/" >>"$out"
            else
                say "FAILED: $cmd (see $log)"
                failed=1
            fi
        done
    done
done

python3 - "$out" <<'EOF' | tee "$md"
import json, statistics, sys
rows, meta = {}, {}
for line in open(sys.argv[1]):
    d = json.loads(line)
    if "meta" in d:
        meta = d
        continue
    rows.setdefault((d["test"], d["size"], d["unit"]), {}).setdefault(d["mpi"], []).append(d)
mpis = [m for m in ("railmpi", "mpich", "openmpi") if any(m in v for v in rows.values())]
print(f"Warm-up: first measurement after MPI_Init vs the same repeated (median of {meta.get('reps')} jobs), "
      f"2 ranks, shm, CPU busy {meta.get('busy_pct')}%\n")
print("| test | bytes | unit | " + " | ".join(f"{m} first | {m} steady | {m} ratio" for m in mpis) + " |")
print("|---|---:|---|" + "---:|---:|---:|" * len(mpis))
for (test, size, unit), per in rows.items():
    cells = []
    for m in mpis:
        v = per.get(m, [])
        med = lambda k: statistics.median(x[k] for x in v) if v else float("nan")
        cells += [f"{med('first'):.3g}", f"{med('steady'):.3g}", f"{med('ratio'):.2f}"]
    print(f"| {test} | {size} | {unit} | " + " | ".join(cells) + " |")
EOF
exit $failed
