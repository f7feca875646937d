#!/bin/bash
# Channel policies side by side (RMPI_CHANNELS=dedicated|shared|adaptive): the seed's
# onetoall, alltoone and repeat patterns with 1-byte messages and xrc-scalable's random-peers
# exchange (bench/channels.c) at several rank counts on this machine, each pattern a fresh job
# per policy, policies in turn so the machine's load hits them alike. Per job: rank 0's time
# per ping-pong and, from RMPI_REPORT=json, each rank's receive-channel memory (peak), buffer
# efficiency and switches. With --callgrind, rank 0 runs under callgrind instead
# (bench/channels_cg.py reads its counts): instructions per ping-pong, and per empty
# MPI_Iprobe with every other rank quiet in a barrier ("idle").
set -eu

usage() {
    cat <<'USAGE'
usage: bench/channels.sh [--ranks "4 8 16"] [--patterns LIST] [--iter N] [--reps N] [--callgrind]
                        [--net shm|ofi] [--policies LIST] [--class-bytes SIZE] [--keep DIR] [--build DIR] [--out FILE]

  --ranks LIST   rank counts (default "4 8 16"; above 2 the ranks are oversubscribed here)
  --patterns L   among onetoall alltoone repeat random (default all four)
  --callgrind    count rank 0's instructions (Ir) per ping-pong and per idle poll instead of
                 timing; needs valgrind
  --net NET      shm (default: RMPI_NET=auto, every rank on this node) or ofi (RMPI_NET=ofi,
                 tcp;ofi_rxm: shared multi-receive buffers against rings written with
                 fi_write), the three RMPI_CHANNELS policies on either; --policies
                 "mrecv single classes" compares ofi's receive buffers instead (RMPI_OFI_MRECV=1m
                 against 0: single buffers of the largest frame's size, one class, against
                 RMPI_OFI_CLASSES=1: size classes chosen by the sender; every peer shared); mixed: RMPI_NET=auto over two pretend nodes
                 (RMPI_TOPO_FAKE_NODES=2, RMPI_OFI_AUTO=any): shm within a node, tcp;ofi_rxm
                 between them, one selector over both
  --policies L   among dedicated shared adaptive adaptive-queue adaptive-rings mrecv single classes
                 (default the first three); adaptive-queue: adaptive with RMPI_CHAN_SMALL_JOB=0,
                 every peer starting on the shared queue whatever the job's size (the start
                 before small jobs started on their rings); adaptive-rings: with
                 RMPI_CHAN_SMALL_JOB=1000, every local peer on its ring while they number at
                 most h
  --class-bytes S  RMPI_CHAN_CLASS_BYTES for the classes policy (default: the knob's, 128k):
                 fewer buffers per class shorten ofi_rxm's walk of its posted tagged receives
  --settle US    with --callgrind: rank 0 sleeps US microseconds before each receive of
                 onetoall, alltoone and repeat (default 200), so the peer's answer is there when
                 it looks: the count is the path without the empty polls of waiting for a peer
                 the scheduler has not run yet (taken off by estimate otherwise; 0: no sleep,
                 the estimate alone, as before 1 Dec 2026)
  --keep DIR     with --callgrind: keep rank 0's callgrind file of each job as
                 DIR/cg-RANKS-PATTERN-POLICY (callgrind_annotate shows where a policy's
                 instructions go, function by function)
  --iter N       ping-pongs per peer per pattern (default 200)
  --reps N       jobs per policy, pattern and rank count; the median time is shown (default 1)
  --build DIR    RailMPI build tree (default: the repository's build/, target bench)
  --out FILE     JSON lines (default BUILD/bench/results/channels-DATE.jsonl); a markdown
                 table goes beside it (.md) and to stdout
USAGE
}

here=$(cd "$(dirname "$0")" && pwd)
build=$(dirname "$here")/build
ranks="4 8 16"
iter=200
reps=1
out=""
patterns="onetoall alltoone repeat random"
callgrind=0
net=shm
policies="dedicated shared adaptive"
class_bytes=""
keep=""
settle=200
. "$here/bench_lib.sh"
args=()
for a in "$@"; do
    if [ "$a" = --callgrind ]; then callgrind=1; else args+=("$a"); fi
done
bench_opts channels.sh "ranks=ranks patterns=patterns iter=iter reps=reps net=net policies=policies class-bytes=class_bytes settle=settle keep=keep build=build out=out" ${args[@]+"${args[@]}"}
# policy -> the job's environment (mpiexec -genv pairs)
case "$net" in
    shm) netenv="" ;;
    ofi) netenv="-genv RMPI_NET ofi" ;;
    mixed) netenv="-genv RMPI_NET auto -genv RMPI_TOPO_FAKE_NODES 2 -genv RMPI_OFI_AUTO any" ;;
    *) echo "channels.sh: --net is shm, ofi or mixed, not '$net'" >&2; exit 2 ;;
esac
for p in $policies; do
    case "$p" in
        dedicated|shared|adaptive|adaptive-queue|adaptive-rings) ;;
        mrecv|single|classes) [ "$net" = ofi ] || { echo "channels.sh: policy $p needs --net ofi" >&2; exit 2; } ;;
        *) echo "channels.sh: unknown policy '$p'" >&2; exit 2 ;;
    esac
done
pol_env() {
    case "$1" in
        mrecv) echo "$netenv -genv RMPI_CHANNELS shared -genv RMPI_OFI_MRECV 1m" ;;
        single) echo "$netenv -genv RMPI_CHANNELS shared -genv RMPI_OFI_MRECV 0" ;;
        classes) echo "$netenv -genv RMPI_CHANNELS shared -genv RMPI_OFI_CLASSES 1${class_bytes:+ -genv RMPI_CHAN_CLASS_BYTES $class_bytes}" ;;
        adaptive-queue) echo "$netenv -genv RMPI_CHANNELS adaptive -genv RMPI_CHAN_SMALL_JOB 0" ;;
        adaptive-rings) echo "$netenv -genv RMPI_CHANNELS adaptive -genv RMPI_CHAN_SMALL_JOB 1000" ;;
        *) echo "$netenv -genv RMPI_CHANNELS $1" ;;
    esac
}
for p in $patterns; do
    case "$p" in onetoall|alltoone|repeat|random) ;; *) echo "channels.sh: unknown pattern '$p'" >&2; exit 2 ;; esac
done
case "$settle" in ''|*[!0-9]*) echo "channels.sh: --settle takes microseconds, not '$settle'" >&2; exit 2 ;; esac
for v in "$iter" "$reps"; do
    case "$v" in ''|*[!0-9]*|0) echo "channels.sh: '$v' is not a positive number" >&2; exit 2 ;; esac
done
prog=$build/bench/channels
[ -x "$prog" ] || { echo "channels.sh: $prog missing: build it with 'cmake --build $build --target bench'" >&2; exit 2; }
[ -n "$out" ] || out=$build/bench/results/channels-$(date +%Y%m%d-%H%M%S).jsonl
mkdir -p "$(dirname "$out")"
md=${out%.jsonl}.md
: >"$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "$callgrind" = 1 ]; then
    command -v valgrind >/dev/null || { echo "channels.sh: valgrind is not installed" >&2; exit 1; }
    name=channels.sh
    # shellcheck source=bench/callgrind_lib.sh
    . "$here/callgrind_lib.sh"
    cg_wrapper "$tmp/wrap.sh"
    for n in $ranks; do
        # idle first: its cost of an empty progress pass per policy is what the patterns'
        # waiting polls are taken off with
        for pat in idle $patterns; do
            for pol in $policies; do
                if [ "$pat" = idle ]; then it=$((iter * 50)); else it=$iter; fi
                st=0
                case "$pat" in onetoall|alltoone|repeat) st=$settle ;; esac
                rm -f "$tmp"/cg.*
                # shellcheck disable=SC2046
                CG_OUT=$tmp/cg CG_ALL_RANKS=0 timeout 900 "$build/bin/mpiexec" -n "$n" $(pol_env "$pol") \
                    -genv RMPI_REPORT json "$tmp/wrap.sh" "$prog" "$pat" "$it" "$st" >"$tmp/out" 2>"$tmp/err" ||
                    { echo "channels.sh: $pat at $n ranks with policy $pol under callgrind failed:" >&2; cat "$tmp/err" >&2; exit 1; }
                cgf=$(ls "$tmp"/cg.*-01 | head -1)
                python3 "$here/channels_cg.py" "$n" "$pat" "$pol" "$it" "$st" "$tmp/out" "$tmp/err" "$out" \
                    "$cgf" >>"$out"
                [ -z "$keep" ] || { mkdir -p "$keep" && cp "$cgf" "$keep/cg-$n-$pat-$pol"; }
            done
        done
    done
    python3 "$here/channels_cg.py" --table "$out" >"$md"
    cat "$md"
    echo "channels.sh: results in $out and $md" >&2
    exit 0
fi

for n in $ranks; do
    for pat in $patterns; do
        for rep in $(seq "$reps"); do
            for pol in $policies; do
                # shellcheck disable=SC2046
                "$build/bin/mpiexec" -n "$n" $(pol_env "$pol") -genv RMPI_REPORT json \
                    "$prog" "$pat" "$iter" >"$tmp/out" 2>"$tmp/err" ||
                    { echo "channels.sh: $pat at $n ranks with policy $pol failed:" >&2; cat "$tmp/err" >&2; exit 1; }
                python3 - "$pol" "$rep" "$tmp/out" "$tmp/err" >>"$out" <<'PY'
import json, sys
pol, rep, outf, errf = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
res = json.loads(open(outf).read().strip().splitlines()[-1])
ranks = [json.loads(l) for l in open(errf) if l.startswith('{"rank"')]
mem = [r["channel_bytes"]["dedicated"] + r["channel_bytes"]["shared"] for r in ranks]
res.update(policy=pol, rep=rep, nreports=len(ranks),
           mem_per_process=sum(mem) / max(len(mem), 1), mem_max=max(mem or [0]),
           mem_rank0=mem[[r["rank"] for r in ranks].index(0)] if ranks else 0,
           buffer_efficiency_rank0=[r["buffer_efficiency"] for r in ranks if r["rank"] == 0][0],
           switches=sum(r["switches"] for r in ranks),
           dedicated_rank0=[r["channel_bytes"]["dedicated"] for r in ranks if r["rank"] == 0][0])
print(json.dumps(res))
PY
            done
        done
    done
done

python3 - "$out" >"$md" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
key = lambda r: (r["ranks"], r["pattern"], r["policy"])
groups = {}
for r in rows:
    groups.setdefault(key(r), []).append(r)
print("| ranks | pattern | policy | us per ping-pong (median) | channel memory per process (mean) | max | rank 0 buffer efficiency |")
print("|---:|---|---|---:|---:|---:|---:|")
for k in sorted(groups, key=lambda k: (k[0], ["onetoall", "alltoone", "repeat", "random"].index(k[1]), k[2])):
    g = groups[k]
    us = statistics.median(r["us_per_pingpong"] for r in g)
    print("| %d | %s | %s | %.2f | %.0f KiB | %.0f KiB | %.3f |" % (k[0], k[1], k[2], us,
          g[0]["mem_per_process"] / 1024, g[0]["mem_max"] / 1024, g[0]["buffer_efficiency_rank0"]))
PY
cat "$md"
echo "channels.sh: results in $out and $md" >&2
