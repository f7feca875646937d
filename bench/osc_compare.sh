#!/bin/bash
# Side-by-side one-sided benchmark of RailMPI, MPICH and Open MPI on this machine, 2 ranks
# on one host over shared memory, with the same benchmark source (osc.c).
set -eu

usage() {
    cat <<'USAGE'
usage: bench/osc_compare.sh [--only LIST] [--reps N] [--sizes LIST] [--flavor F] [--net N] [--build DIR] [--out FILE]
                             [--before LIBDIR] [--tests LIST] [--state] [--wait slow|fast[:S]]

Builds bench/osc.c with mpicc.mpich and mpicc.openmpi into BUILD/bench/ref/, uses
BUILD/bench/osc for RailMPI (cmake target bench), and runs each MPI with 2 ranks on shared
memory, --reps times (default 3) going round the MPIs in turn.

  --only LIST   comma-separated subset of mpich,openmpi,railmpi (default: all found)
  --reps N      runs per MPI; the table shows the median (default 3)
  --sizes LIST  comma list of sizes for the sized tests (default 8,512,65536,1048576)
  --flavor F    window flavor: allocate (default), create, create_mem (Win_create over
                MPI_Alloc_mem memory), dynamic, dynamic_mem (attached MPI_Alloc_mem memory) or shared (Win_allocate_shared, shm only)
  --tests LIST  comma list of bench/osc.c's tests (osc -t; default every test)
  --net N       shm (default); tcp: as two nodes over loopback TCP (RailMPI RMPI_NET=tcp
                with two fake nodes; MPICH's UCX over tcp with MPIR_CVAR_NOLOCAL; Open MPI
                ob1 with btl tcp,self and its osc rdma component, not sm); ofi-tcp:
                libfabric tcp;ofi_rxm (RailMPI RMPI_NET=ofi with two fake nodes; Open MPI
                cm/mtl ofi on the same provider with osc rdma; MPICH has no libfabric path)
  --build DIR   RailMPI build tree (default: the repository's build/)
  --out FILE    JSON lines (default BUILD/bench/results/osc-DATE.jsonl); the markdown
                table goes to the same name with .md, launcher output to .log
  --before DIR  also run RailMPI with the libmpi.so kept in DIR (a copy of an earlier
                build's lib/; LD_LIBRARY_PATH wins over the benchmark's RUNPATH), as
                column railmpi-before in the same rotation: before and after alternated

  --state       sample the machine's state (bench/linert.c) beside every run and tag each row
                with it (fast, slow or mixed: docs/results/coll.md, "two states"); the
                table then adds each MPI's figures per run, marked F/S/M, and the medians
                of the fast and of the slow rows
  --wait ST[:S] start every job in the machine's state ST (slow or fast), waiting up to S
                seconds (default 300) for it as bench/waitstate.sh does, and leave the job
                out when it does not come; implies --state (the state may still change
                inside a job: the rows' tags say so)

Extra launcher arguments: MPICH_ARGS, OMPI_ARGS, RMPI_ARGS (word-split).
USAGE
}

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=$root/build
only=""
reps=3
sizes=8,512,65536,1048576
tests=""
flavor=allocate
net=shm
out=""
before=""
wait_opt=""
state=0

while [ $# -gt 0 ]; do
    case "$1" in
        --only) [ $# -ge 2 ] || { usage >&2; exit 2; }; only=$2; shift ;;
        --reps) [ $# -ge 2 ] || { usage >&2; exit 2; }; reps=$2; shift ;;
        --sizes) [ $# -ge 2 ] || { usage >&2; exit 2; }; sizes=$2; shift ;;
        --flavor) [ $# -ge 2 ] || { usage >&2; exit 2; }; flavor=$2; shift ;;
        --net) [ $# -ge 2 ] || { usage >&2; exit 2; }; net=$2; shift ;;
        --build) [ $# -ge 2 ] || { usage >&2; exit 2; }; build=$2; shift ;;
        --out) [ $# -ge 2 ] || { usage >&2; exit 2; }; out=$2; shift ;;
        --before) [ $# -ge 2 ] || { usage >&2; exit 2; }; before=$2; shift ;;
        --wait) [ $# -ge 2 ] || { usage >&2; exit 2; }; wait_opt=$2; shift ;;
        --tests) [ $# -ge 2 ] || { usage >&2; exit 2; }; tests=$2; shift ;;
        --state) state=1 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "osc_compare.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
    esac
    shift
done
case "$reps" in ''|*[!0-9]*|0) echo "osc_compare.sh: --reps needs a positive number" >&2; exit 2 ;; esac
case "$flavor" in allocate|create|create_mem|dynamic|dynamic_mem|shared) ;; *) echo "osc_compare.sh: unknown flavor '$flavor'" >&2; exit 2 ;; esac
[ "$flavor/$net" != shared/tcp ] && [ "$flavor/$net" != shared/ofi-tcp ] ||
    { echo "osc_compare.sh: --flavor shared needs both ranks on one node (--net shm)" >&2; exit 2; }
case "$net" in shm|tcp|ofi-tcp) ;; *) echo "osc_compare.sh: unknown net '$net'" >&2; exit 2 ;; esac
[ "$net" != ofi-tcp ] || only=${only:-openmpi,railmpi}
build=$(mkdir -p "$build" && cd "$build" && pwd)

bench_name=osc_compare.sh
# shellcheck source=bench/bench_lib.sh
. "$here/bench_lib.sh"
bench_setup osc
[ -z "$wait_opt" ] || bench_wait_opt "$wait_opt"

bench_build_all osc
if [ -n "$before" ]; then
    [ -f "$before/libmpi.so" ] || { say "--before: no libmpi.so in $before"; exit 2; }
    before=$(cd "$before" && pwd)
    mpis+=(railmpi-before)
fi

# Shared memory for every MPI, each with its default one-sided component (MPICH ch4 with
# its shm windows, Open MPI ob1/vader with osc selected by itself). Open MPI 4.1.4 here
# crashes in vader (SIGSEGV in mca_btl_vader_poll_handle_frag) when one-sided runs with
# its default single-copy mechanism (CMA) on Win_allocate windows (osc sm); it runs with
# none. Its osc sm takes only allocate and allocate_shared windows, and osc rdma (Win_create,
# dynamic) needs vader's single copy: CMA there, as RailMPI's Win_create windows on shm.
ompi_copy=none
case "$flavor" in allocate|shared) ;; *) ompi_copy=cma ;; esac
launch() {
    case "$1/$net" in
        mpich/tcp) echo "mpiexec.mpich -n 2 -genv MPIR_CVAR_NOLOCAL 1 -genv UCX_TLS tcp,self ${MPICH_ARGS:-} $ref/osc.mpich" ;;
        openmpi/tcp) echo "mpirun.openmpi -n 2 --mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include lo" \
                          "--mca osc rdma,pt2pt ${OMPI_ARGS:-} $ref/osc.openmpi" ;;
        railmpi/tcp) echo "$build/bin/mpiexec -n 2 -genv RMPI_NET tcp -genv RMPI_TOPO_FAKE_NODES 2 ${RMPI_ARGS:-}" \
                          "$build/bench/osc" ;;
        openmpi/ofi-tcp) echo "mpirun.openmpi -n 2 --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include tcp;ofi_rxm" \
                              "--mca osc rdma,pt2pt --mca btl self,tcp --mca btl_tcp_if_include lo ${OMPI_ARGS:-} $ref/osc.openmpi" ;;
        railmpi/ofi-tcp) echo "$build/bin/mpiexec -n 2 -genv RMPI_NET ofi -genv RMPI_OFI_PROVIDER tcp;ofi_rxm" \
                              "-genv RMPI_TOPO_FAKE_NODES 2 ${RMPI_ARGS:-} $build/bench/osc" ;;
        mpich/shm) echo "mpiexec.mpich -n 2 ${MPICH_ARGS:-} $ref/osc.mpich" ;;
        openmpi/shm) echo "mpirun.openmpi -n 2 --mca pml ob1 --mca btl self,vader --mca btl_vader_single_copy_mechanism $ompi_copy" \
                      "${OMPI_ARGS:-} $ref/osc.openmpi" ;;
        railmpi/shm) echo "$build/bin/mpiexec -n 2 ${RMPI_ARGS:-} $build/bench/osc" ;;
        railmpi-before/*) launch railmpi | sed "s|/bin/mpiexec -n 2 |&-genv LD_LIBRARY_PATH $before |" ;;
    esac
}

bench_meta osc_compare ",\"reps\":$reps,\"sizes\":\"$sizes\",\"flavor\":\"$flavor\",\"net\":\"$net\",\"tests\":\"$tests\""

bench_run_all 300 -s "$sizes" -w "$flavor" ${tests:+-t "$tests"}

python3 - "$out" <<'PY' | tee "$md"
import json, statistics, sys
rows, meta, order = {}, {}, []
for line in open(sys.argv[1]):
    d = json.loads(line)
    if "meta" in d:
        meta = d
        continue
    key = (d["test"], d["size"], d["unit"])
    if key not in rows:
        order.append(key)
    rows.setdefault(key, {}).setdefault(d["mpi"], []).append(d["value"])
mpis = [m for m in ("railmpi", "railmpi-before", "mpich", "openmpi") if any(m in v for v in rows.values())]
print(f"One-sided, 2 ranks on {meta.get('net', 'shm')}, {meta.get('flavor')} windows (median of {meta.get('reps')} runs), "
      f"{meta.get('cores')} cores, CPU busy {meta.get('busy_pct')}% before, load {meta.get('loadavg')}\n")
print("| test | bytes | unit | " + " | ".join(mpis) + " | RailMPI slowdown vs best |")
print("|---|---:|---|" + "---:|" * len(mpis) + "---:|")
for key in order:
    test, size, unit = key
    med = {m: statistics.median(v) for m, v in rows[key].items()}
    others = [med[m] for m in med if not m.startswith("railmpi")]
    bw = unit == "MB/s"
    best = (max(others) if bw else min(others)) if others else None
    ratio = "-"
    if best and "railmpi" in med and med["railmpi"] > 0:
        ratio = f"{(best / med['railmpi']) if bw else (med['railmpi'] / best):.2f}"
    if best and "railmpi-before" in med and med["railmpi-before"] > 0:
        ratio += f" (before {(best / med['railmpi-before']) if bw else (med['railmpi-before'] / best):.2f})"
    print(f"| {test} | {size} | {unit} | " + " | ".join(f"{med[m]:.3f}" if m in med else "-" for m in mpis) + f" | {ratio} |")
# --state: every run's figure with its state, and the medians within one state
tagged = [d for d in map(json.loads, open(sys.argv[1])) if "state" in d]
if tagged:
    runs, mark = {}, {"fast": "F", "slow": "S", "mixed": "M"}
    for d in tagged:
        runs.setdefault((d["test"], d["size"], d["unit"]), {}).setdefault(d["mpi"], []).append(d)
    for st in ("fast", "slow"):
        print(f"\nRows measured in the {st} state alone (linert below / at or above 150 ns through the row), "
              "median over the runs (their count), then each run's figure and state\n")
        print("| test | bytes | " + " | ".join(mpis) + " | RailMPI vs best | runs |")
        print("|---|---:|" + "---:|" * len(mpis) + "---:|---|")
        for key in order:
            test, size, unit = key
            byst = {m: [d["value"] for d in v if d["state"] == st] for m, v in runs.get(key, {}).items()}
            med = {m: statistics.median(v) for m, v in byst.items() if v}
            others = [med[m] for m in med if not m.startswith("railmpi")]
            bw = unit == "MB/s"
            ratio = "-"
            if others and med.get("railmpi"):
                best = max(others) if bw else min(others)
                ratio = f"{(best / med['railmpi']) if bw else (med['railmpi'] / best):.2f}"
            each = "; ".join(m + " " + " ".join(f"{d['value']:.4g}{mark.get(d['state'], '?')}" for d in v)
                             for m, v in runs.get(key, {}).items())
            print(f"| {test} | {size} | " + " | ".join(f"{med[m]:.3f} ({len(byst[m])})" if m in med else "-" for m in mpis)
                  + f" | {ratio} | {each} |")
PY
exit $failed
