#!/bin/bash
# Side-by-side non-contiguous ping-pong (vector.c) of RailMPI, MPICH and Open MPI on this
# machine, 2 ranks over shared memory or TCP on loopback, with the same benchmark source.
set -eu

usage() {
    cat <<'USAGE'
usage: bench/vector_compare.sh [--only LIST] [--reps N] [--blocks LIST] [--sizes MIN:MAX] [--net N] [--build DIR] [--out FILE]

Builds bench/vector.c with mpicc.mpich and mpicc.openmpi into BUILD/bench/ref/, uses
BUILD/bench/vector for RailMPI (cmake target bench), and runs each MPI with 2 ranks,
--reps times (default 3) going round the MPIs in turn.

  --only LIST    comma-separated subset of mpich,openmpi,railmpi (default: all found)
  --reps N       runs per MPI; the table shows the median (default 3)
  --blocks LIST  block sizes in bytes, one block every twice that (default 64,1024,16384,131072)
  --sizes A:B    message sizes, doubling (default 1048576:4194304)
  --net N        shm (default) or tcp (loopback; RailMPI RMPI_NET=tcp, MPICH's UCX tcp
                 with MPIR_CVAR_NOLOCAL, Open MPI ob1 with btl tcp,self)
  --build DIR    RailMPI build tree (default: the repository's build/)
  --out FILE     JSON lines (default BUILD/bench/results/vector-DATE.jsonl); the markdown
                 table goes to the same name with .md, launcher output to .log

Extra launcher arguments: MPICH_ARGS, OMPI_ARGS, RMPI_ARGS (word-split).
USAGE
}

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=$root/build
only=""
reps=3
blocks=64,1024,16384,131072
sizes=1048576:4194304
net=shm
out=""

bench_name=vector_compare.sh
# shellcheck source=bench/bench_lib.sh
. "$here/bench_lib.sh"
bench_opts vector_compare.sh "only=only reps=reps blocks=blocks sizes=sizes net=net build=build out=out" "$@"
case "$reps" in '' | *[!0-9]* | 0) echo "vector_compare.sh: --reps needs a positive number" >&2; exit 2 ;; esac
case "$net" in shm | tcp) ;; *) echo "vector_compare.sh: unknown net '$net'" >&2; exit 2 ;; esac
build=$(mkdir -p "$build" && cd "$build" && pwd)
bench_setup vector
bench_build_all vector

launch() {
    case "$1/$net" in
        mpich/shm) echo "mpiexec.mpich -n 2 ${MPICH_ARGS:-} $ref/vector.mpich" ;;
        mpich/tcp) echo "mpiexec.mpich -n 2 -genv MPIR_CVAR_NOLOCAL 1 -genv UCX_TLS tcp,self -genv UCX_NET_DEVICES lo" \
                        "${MPICH_ARGS:-} $ref/vector.mpich" ;;
        openmpi/shm) echo "mpirun.openmpi -n 2 --mca pml ob1 --mca btl self,vader ${OMPI_ARGS:-} $ref/vector.openmpi" ;;
        openmpi/tcp) echo "mpirun.openmpi -n 2 --mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include lo" \
                          "${OMPI_ARGS:-} $ref/vector.openmpi" ;;
        railmpi/shm) echo "$build/bin/mpiexec -n 2 ${RMPI_ARGS:-} $build/bench/vector" ;;
        railmpi/tcp) echo "$build/bin/mpiexec -n 2 -genv RMPI_NET tcp ${RMPI_ARGS:-} $build/bench/vector" ;;
    esac
}

bench_meta vector_compare ",\"reps\":$reps,\"net\":\"$net\""

bench_run_all 300 -b "$blocks" -m "$sizes"

python3 - "$out" <<'PY' | tee "$md"
import json, statistics, sys
rows, meta, order = {}, {}, []
for line in open(sys.argv[1]):
    d = json.loads(line)
    if "meta" in d:
        meta = d
        continue
    key = (d["block"], d["size"])
    if key not in rows:
        order.append(key)
    rows.setdefault(key, {}).setdefault(d["mpi"], []).append(d["lat_us"])
mpis = [m for m in ("railmpi", "mpich", "openmpi") if any(m in v for v in rows.values())]
print(f"Vector ping-pong, 2 ranks on {meta.get('net')}, one-way latency in us (median of {meta.get('reps')} runs), "
      f"{meta.get('cores')} cores, CPU busy {meta.get('busy_pct')}% before, load {meta.get('loadavg')}\n")
print("| block | message | " + " | ".join(mpis) + " | RailMPI / best |")
print("|---:|---:|" + "---:|" * len(mpis) + "---:|")
for key in order:
    med = {m: statistics.median(v) for m, v in rows[key].items()}
    others = [med[m] for m in med if m != "railmpi"]
    ratio = f"{med['railmpi'] / min(others):.2f}" if others and "railmpi" in med else "-"
    print(f"| {key[0]} | {key[1]} | " + " | ".join(f"{med[m]:.1f}" if m in med else "-" for m in mpis) + f" | {ratio} |")
PY
exit $failed
