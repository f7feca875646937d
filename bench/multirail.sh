#!/bin/bash
# Multirail benchmark: RailMPI and Open MPI between two network namespaces joined by two
# shaped veth rails (tools/netlab), in one run: bandwidth and
# bidirectional bandwidth vs size on one rail, two equal rails and 4:1 rails (even,
# weighted, adaptive striping; Open MPI default and hand-weighted), and bandwidth over
# time while a competing iperf3 flow loads one rail. See bench/README.md.
set -eu

usage() {
    cat <<'EOF'
usage: bench/multirail.sh [--quick] [--only railmpi|openmpi] [--rates R0 R1] [--load-rail RAIL]
                          [--part pt2pt|timeline|many|rates|lat] [--build DIR] [--out DIR] [--no-build]

Needs root (ip netns, tc). Creates namespaces nsA and nsB with tools/netlab (deleting
any left from before), runs everything, and deletes them again at the end.

  --quick          4 sizes (64 KiB, 512 KiB, 4 MiB, 16 MiB), smaller byte budget, 15 s timeline
  --only MPI       railmpi or openmpi (default: both; RailMPI only if it is built)
  --rates R0 R1    tc rates of the unequal rails (default 1gbit 250mbit), each with an
                   optional one-way delay (1gbit@5ms: tools/netlab's delay line); the equal-rail
                   topology uses R0 R0
  --load-rail R    rail the competing iperf3 flow loads (default rail0, the fast one)
  --part P         run only the pt2pt sweeps or only the timeline (default: both), or only
                   'many': many unequal rails with no settings (4 rails 1gbit 500mbit 250mbit
                   125mbit, i.e. 8:4:2:1, and 2 rails 1gbit 100mbit, 10:1; MANY_TOPOS
                   overrides, ';'-separated): each rail alone, then all of them, 4 MiB
                   messages, every run well under a minute, Open MPI default and
                   hand-weighted (btl_tcp_bandwidth_<rail> at the tc rates); summary-many.md; or only
                   'rates': the rails' rates changed mid-stream with tc change (rail1 to
                   100mbit at 6 s, rail0 to 500mbit at 12 s, both back at 18 s), then
                   rail1 cut at 24 s and restored at 27 s, while bw_time streams 256 KiB
                   messages for 33 s (64 always in flight, -p 1) in 50 ms bins, every byte checked (-c 1), RailMPI
                   (no settings) and Open MPI; the optimum of each phase is what TCP
                   carries on each rail alone at its rates; summary-rates.md.
                   RATES_SPREAD=1 has bw_time spread each completion's bytes over the
                   time since the one before (-a 1), so a 50 ms bin no longer moves by
                   whole 256 KiB messages (3.5-7% of a bin at these rates).
                   RATES_SCHED="SECONDS EVENT;..." (events: rail1 100mbit, rail0 500mbit,
                   both back, rail1 cut, rail1 restore) and RATES_SECS replace the
                   schedule, e.g. one change repeated to average the host's noise out
                   (the summary then reads each event's last occurrence).
                   RATES_CONFIGS (default "rmpi-adaptive ompi-default") picks the
                   configurations; rmpi-ofi is RailMPI over libfabric's tcp;ofi_rxm, one
                   rail per interface's domain (RMPI_NET=ofi), no other settings;
                   or only
                   'lat': small-message latency (bench/pt2pt -t latency, LAT_SIZES, default
                   8:1024, LAT_ITERS 10000 iterations) on two equal rails (R0 R0): RailMPI,
                   Open MPI and MPICH (UCX tcp) each over rail0 alone and over both rails,
                   the six runs interleaved and repeated LAT_REPS times (default 5, --quick 3);
                   medians, and RailMPI's two rails against its one; summary-lat.md
  --build DIR      RailMPI build tree (default: the repository's build/)
  --out DIR        results folder (default BUILD/bench/results/multirail-DATE/)
  --no-build       do not run cmake; compile missing RailMPI binaries with BUILD/bin/mpicc

Results: results.jsonl (every measurement, one JSON object a line), run.log (launcher
output), summary.md (also printed), and PNG plots when matplotlib is found.
Env: NETLAB_PREFIX (namespace prefix, see tools/netlab), OMPI_ARGS, RMPI_ARGS (extra
launcher words).
EOF
}

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=$root/build
quick=0 only="" out="" nobuild=0 part=""
rate0=1gbit rate1=250mbit load_rail=rail0

while [ $# -gt 0 ]; do
    case "$1" in
        --quick) quick=1 ;;
        --only) [ $# -ge 2 ] || { usage >&2; exit 2; }; only=$2; shift ;;
        --rates) [ $# -ge 3 ] || { usage >&2; exit 2; }; rate0=$2; rate1=$3; shift 2 ;;
        --load-rail) [ $# -ge 2 ] || { usage >&2; exit 2; }; load_rail=$2; shift ;;
        --part) [ $# -ge 2 ] || { usage >&2; exit 2; }; part=$2; shift ;;
        --build) [ $# -ge 2 ] || { usage >&2; exit 2; }; build=$2; shift ;;
        --out) [ $# -ge 2 ] || { usage >&2; exit 2; }; out=$2; shift ;;
        --no-build) nobuild=1 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "multirail.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
    esac
    shift
done
case "$only" in ""|railmpi|openmpi) ;; *) echo "multirail.sh: --only takes railmpi or openmpi" >&2; exit 2 ;; esac
case "$load_rail" in rail0|rail1) ;; *) echo "multirail.sh: --load-rail takes rail0 or rail1" >&2; exit 2 ;; esac
case "$part" in ""|pt2pt|timeline|many|rates|lat) ;; *) echo "multirail.sh: --part takes pt2pt, timeline, many, rates or lat" >&2; exit 2 ;; esac

say() { echo "multirail.sh: $*" >&2; }

[ "$(id -u)" = 0 ] || { say "needs root (ip netns, tc)"; exit 1; }
netlab=$root/tools/netlab
export NETLAB_PREFIX=${NETLAB_PREFIX:-}
command -v tc >/dev/null || { say "tc (iproute2) is missing"; exit 1; }
if [ "$part" != pt2pt ] && [ "$part" != rates ] && [ "$part" != lat ] && ! command -v iperf3 >/dev/null; then
    say "installing iperf3 (needed for the competing flow)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y iperf3 >/dev/null ||
        { say "apt-get install iperf3 failed"; exit 1; }
fi

# tc rate -> Mbit/s (Open MPI's btl_tcp_bandwidth_IF unit) and -> RMPI_RAIL_BW value.
rate_mbit() {
    echo "$1" | awk '{ r = tolower($1); n = r + 0; sub(/^[0-9.]+/, "", r)
        m = (r == "gbit") ? 1000 : (r == "mbit") ? 1 : (r == "kbit") ? 0.001 : (r == "bit") ? 1e-6 : -1
        if (m < 0 || n <= 0) exit 1; printf "%d\n", n * m + 0.5 }'
}
rail_bw() { local r=${1%%@*}; echo "${r%bit}"; }
mb0=$(rate_mbit "${rate0%%@*}") && mb1=$(rate_mbit "${rate1%%@*}") ||
    { say "rates must be tc rates like 1gbit or 250mbit (got $rate0 $rate1)"; exit 2; }

build=$(mkdir -p "$build" && cd "$build" && pwd)
stamp=$(date +%Y%m%d-%H%M%S)
[ -n "$out" ] || out=$build/bench/results/multirail-$stamp
mkdir -p "$out"
out=$(cd "$out" && pwd)
res=$out/results.jsonl log=$out/run.log
: >"$res"; : >"$log"

if [ $quick = 1 ]; then
    sizes="65536 524288 4194304 16777216"; budget=$((48 << 20)); tl_secs=15; key_reps=1
else
    sizes="65536 131072 262144 524288 1048576 2097152 4194304 8388608 16777216"
    budget=$((128 << 20)); tl_secs=30; key_reps=3
fi
# The competing flow runs through the middle third of the timeline.
load_from=$((tl_secs / 3)) load_secs=$((tl_secs / 3))

if [ "$(id -u)" = 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

# --- binaries ---------------------------------------------------------------------------
ref=$build/bench/ref
mkdir -p "$ref"
have_ompi=0 have_rmpi=0
if [ "$only" != railmpi ]; then
    if command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null; then
        say "building pt2pt and bw_time with mpicc.openmpi"
        for p in pt2pt bw_time; do
            mpicc.openmpi -std=c11 -O2 -g -Wall -Wextra -o "$ref/$p.openmpi" "$here/$p.c"
        done
        have_ompi=1
    else
        say "mpicc.openmpi/mpirun.openmpi not found; skipping Open MPI"
    fi
fi
have_mpich=0
if [ "$part" = lat ] && [ "$only" != railmpi ]; then
    if command -v mpicc.mpich >/dev/null && command -v mpiexec.mpich >/dev/null; then
        say "building pt2pt with mpicc.mpich"
        mpicc.mpich -std=c11 -O2 -g -Wall -Wextra -o "$ref/pt2pt.mpich" "$here/pt2pt.c"
        have_mpich=1
    else
        say "mpicc.mpich/mpiexec.mpich not found; skipping MPICH"
    fi
fi
if [ "$only" != openmpi ]; then
    if [ -x "$build/bin/mpiexec" ] && [ -x "$build/bin/mpicc" ]; then
        if [ $nobuild = 0 ] && [ -f "$build/CMakeCache.txt" ]; then
            say "building RailMPI's benchmarks (cmake target bench)"
            cmake --build "$build" --target bench >>"$log" 2>&1 ||
                { say "building the bench target failed (see $log)"; exit 1; }
        fi
        for p in pt2pt bw_time; do
            if [ ! -x "$build/bench/$p" ]; then
                say "compiling $p with $build/bin/mpicc"
                "$build/bin/mpicc" -std=c11 -O2 -g -Wall -Wextra -o "$build/bench/$p" "$here/$p.c"
            fi
        done
        have_rmpi=1
    elif [ "$only" = railmpi ]; then
        say "RailMPI is not built in $build (no bin/mpicc or bin/mpiexec); run 'make' first"; exit 1
    else
        say "RailMPI not built in $build; running Open MPI only"
    fi
fi
[ $have_ompi = 1 ] || [ $have_rmpi = 1 ] || { say "no MPI to run"; exit 1; }

# --- topology ---------------------------------------------------------------------------
bg_pids=()
cleanup() {
    for p in "${bg_pids[@]}"; do kill "$p" 2>/dev/null || true; done
    "$netlab" down >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ns_exist() { ip netns list | grep -qE "^${NETLAB_PREFIX}ns[AB]( |\$)"; }

topo_up() { # R0 R1
    # The netns tests (tests/netns) use the same names: give a running one time to finish
    # rather than pull its namespaces away.
    local i
    if [ -z "${topo:-}" ] && ns_exist; then
        say "namespaces nsA/nsB exist (a netns test running, or left over); waiting up to 60 s"
        for i in $(seq 1 60); do ns_exist || break; sleep 1; done
        ns_exist && say "deleting the namespaces nsA/nsB left from before"
    fi
    "$netlab" down >/dev/null 2>&1 || true
    "$netlab" up "$1" "$2" >>"$log" 2>&1 || { say "netlab up $1 $2 failed (see $log)"; exit 1; }
    topo="$1/$2" topo_rates="$1 $2"
    echo "### topology $topo" >>"$log"
    "$netlab" status >>"$log" 2>&1 || true
    # What TCP itself gets from each rail alone: the yardstick for 'sum of the rails'.
    local line rail mbit
    "$netlab" bw 2 2>>"$log" | while read -r line; do
        rail=${line%%:*}; mbit=$(echo "$line" | awk '{print $2}')
        echo "$line" >>"$log"
        [ -n "$mbit" ] && echo "{\"test\":\"iperf_rail\",\"topo\":\"$topo\",\"rail\":\"$rail\",\"mb_s\":$(awk -v m="$mbit" 'BEGIN{printf "%.1f", m / 8}')}" >>"$res"
    done
}

# Someone else's 'netlab down' takes our topology with it: build it again.
ensure_topo() {
    if ! ip netns list | grep -qE "^${NETLAB_PREFIX}nsA( |\$)" || ! ip netns list | grep -qE "^${NETLAB_PREFIX}nsB( |\$)"; then
        say "warning: nsA/nsB disappeared (deleted by another job?); building them again"
        # shellcheck disable=SC2086
        topo_up $topo_rates
    fi
}

# nsA's byte counters of both rails: rail0 rx tx rail1 rx tx.
counters() {
    "$netlab" exec nsA awk '{ sub(/^ */, ""); sub(/:/, " ") } $1 == "rail0" || $1 == "rail1" { c[$1] = $2 " " $10 }
        END { print c["rail0"], c["rail1"] }' /proc/net/dev
}

# --- configurations -----------------------------------------------------------------------
# One command line per configuration, built into the array CMD. Open MPI: ob1 over btl tcp
# on the named interfaces (out-of-band traffic on the unshaped ctl link); RailMPI: TCP
# over the named interfaces, PMI over ctl, RMPI_REPORT for per-rail bytes and weights.
config_cmd() { # CONFIG PROGRAM-BASENAME
    local c=$1 prog=$2 ifaces=rail0,rail1
    case "$c" in *-rail0) ifaces=rail0 ;; esac
    case "$c" in
        ompi-*)
            # shellcheck disable=SC2206
            CMD=("$netlab" exec nsA mpirun.openmpi -np 2 --host nsA:1,nsB:1 --bind-to none
                 --mca plm_rsh_agent "$netlab agent" --mca plm_rsh_no_tree_spawn 1
                 --mca oob_tcp_if_include ctl --mca pml ob1 --mca btl self,tcp
                 --mca btl_tcp_if_include "$ifaces" ${OMPI_ARGS:-})
            if [ "$c" = ompi-weighted ]; then
                CMD+=(--mca btl_tcp_bandwidth_rail0 "$mb0" --mca btl_tcp_bandwidth_rail1 "$mb1")
            fi
            CMD+=("$ref/$prog.openmpi") ;;
        rmpi-*)
            # shellcheck disable=SC2206
            CMD=("$netlab" exec nsA "$build/bin/mpiexec" -n 2 --host nsA,nsB --agent "$netlab agent"
                 --pmi-iface ctl -genv RMPI_TCP_IFACES "$ifaces" -genv RMPI_REPORT 1 ${RMPI_ARGS:-})
            case "$c" in
                rmpi-even) CMD+=(-genv RMPI_STRIPE_POLICY even) ;;
                rmpi-weighted) CMD+=(-genv RMPI_STRIPE_POLICY weighted
                                     -genv RMPI_RAIL_BW "tcp:rail0:$(rail_bw "$rate0"),tcp:rail1:$(rail_bw "$rate1")") ;;
            esac
            CMD+=("$build/bench/$prog") ;;
    esac
    if [ "$c" = rmpi-ofi ]; then
        # the same launcher words, then libfabric's tcp;ofi_rxm over the two interfaces
        CMD=("${CMD[@]:0:${#CMD[@]}-1}" -genv RMPI_NET ofi -genv RMPI_OFI_DOMAINS "$ifaces" "${CMD[@]: -1}")
    fi
}

wanted() {
    case "$1" in ompi-*) [ $have_ompi = 1 ] ;; rmpi-*) [ $have_rmpi = 1 ] ;; esac
}

# Fewer messages per window as they grow, so every size moves about the same bytes.
window_for() { local w=$(((32 << 20) / $1)); [ $w -gt 64 ] && w=64; [ $w -lt 2 ] && w=2; echo $w; }

failed=0
run_pt2pt() { # CONFIG
    local c=$1 test size w iters rep reps
    wanted "$c" && [ "$part" != timeline ] || return 0
    for test in bw bibw; do
        for size in $sizes; do
            w=$(window_for "$size")
            iters=$(((budget + w * size - 1) / (w * size))); [ $iters -lt 2 ] && iters=2
            # The size the targets are judged at is repeated; the summary takes the median.
            reps=1; [ "$size" = $((4 << 20)) ] && reps=$key_reps
            for rep in $(seq 1 $reps); do
                run_pt2pt_one "$c" "$test" "$size" "$w" "$iters" "$rep" "$reps"
            done
        done
    done
    rm -f "$out/stderr.tmp"
}

run_pt2pt_one() { # CONFIG TEST SIZE WINDOW ITERS REP REPS
    local c=$1 test=$2 size=$3 w=$4 iters=$5 rep=$6 before after line note=""
    [ "$7" -gt 1 ] && note=" (run $rep of $7)"
    config_cmd "$c" pt2pt
    ensure_topo
    say "$topo $c $test $size$note"
    echo "### $topo $c $test $size run $rep: ${CMD[*]} -t $test -m $size:$size -w $w -i $iters" >>"$log"
    before=$(counters)
    if line=$(timeout 180 "${CMD[@]}" -t "$test" -m "$size:$size" -w "$w" -i "$iters" 2>"$out/stderr.tmp"); then
        after=$(counters)
        line=$(printf '%s\n' "$line" | grep '^{"test"' | head -1)
        cat "$out/stderr.tmp" >>"$log"
        if [ -n "$line" ]; then
            echo "${line%\}},\"config\":\"$c\",\"topo\":\"$topo\",\"rep\":$rep,\"window\":$w,\"iters\":$iters,$(rail_mb "$before" "$after")$(report_json "$out/stderr.tmp")}" >>"$res"
            return 0
        fi
    fi
    cat "$out/stderr.tmp" >>"$log"
    say "FAILED: $topo $c $test $size (see $log)"
    echo "{\"test\":\"$test\",\"size\":$size,\"config\":\"$c\",\"topo\":\"$topo\",\"rep\":$rep,\"failed\":true}" >>"$res"
    failed=1
}

# Counter deltas in MB (10^6 bytes), nsA's view: tx is rank 0's sending direction.
rail_mb() { # BEFORE AFTER
    echo "$1 $2" | awk '{ printf "\"rail0_tx_mb\":%.1f,\"rail1_tx_mb\":%.1f,\"rail0_rx_mb\":%.1f,\"rail1_rx_mb\":%.1f",
        ($6 - $2) / 1e6, ($8 - $4) / 1e6, ($5 - $1) / 1e6, ($7 - $3) / 1e6 }'
}

# RailMPI's RMPI_REPORT rail lines, kept verbatim: their format is the library's business.
report_json() { # STDERR-FILE
    local lines
    lines=$(grep -E '^\[rmpi report\] +(rank [0-9]+ -> [0-9]+|rail )' "$1" 2>/dev/null |
            sed 's/^\[rmpi report\] *//; s/\\/\\\\/g; s/"/\\"/g; s/.*/"&"/' | paste -sd, -) || true
    [ -n "$lines" ] && echo ",\"report\":[$lines]"
    return 0
}

now() { date +%s.%N; }

# bw_time's wall-clock start (its first line), once it is printed; empty if the job ended
# or 60 s passed first.
wait_start() { # RAW-OUTPUT PID
    local i t0=""
    for i in $(seq 1 600); do
        t0=$(sed -n 's/^{"test":"bw_time_start","unix":\([0-9.]*\).*/\1/p' "$1" 2>/dev/null | head -1)
        [ -n "$t0" ] && break
        kill -0 "$2" 2>/dev/null || break
        sleep 0.1
    done
    echo "$t0"
}

# Bandwidth over time with a competing iperf3 flow on one rail through the middle third.
run_timeline() { # CONFIG
    local c=$1 ip_a ip_b n=${load_rail#rail} raw=$out/timeline-$1.out t0="" i mpipid sampler srv
    wanted "$c" && [ "$part" != pt2pt ] || return 0
    ip_a=10.201.$n.1 ip_b=10.201.$n.2
    config_cmd "$c" bw_time
    ensure_topo
    say "$topo $c bw over time (${tl_secs} s, iperf3 on $load_rail from ${load_from} s for ${load_secs} s)"
    echo "### $topo $c timeline: ${CMD[*]} -t $tl_secs -i 0.5" >>"$log"
    # Rail byte counters every 0.25 s, read inside nsA.
    "$netlab" exec nsA bash -c 'while :; do
        awk -v t="$(date +%s.%N)" "{ sub(/^ */, \"\"); sub(/:/, \" \") } \$1 == \"rail0\" || \$1 == \"rail1\" { c[\$1] = \$2 \" \" \$10 }
            END { print t, c[\"rail0\"], c[\"rail1\"] }" /proc/net/dev; sleep 0.25; done' >"$out/railctr-$c.txt" &
    sampler=$!; bg_pids+=("$sampler")
    "$netlab" exec nsB iperf3 -s -B "$ip_b" -1 >>"$log" 2>&1 &
    srv=$!; bg_pids+=("$srv")
    timeout $((tl_secs + 120)) "${CMD[@]}" -t "$tl_secs" -i 0.5 >"$raw" 2>"$out/stderr.tmp" &
    mpipid=$!; bg_pids+=("$mpipid")
    t0=$(wait_start "$raw" $mpipid)
    local lstart="" lend=""
    if [ -n "$t0" ]; then
        sleep "$(awk -v t0="$t0" -v d="$load_from" -v n="$(now)" 'BEGIN { s = t0 + d - n; print (s > 0 ? s : 0) }')"
        lstart=$(now)
        "$netlab" exec nsA iperf3 -c "$ip_b" -B "$ip_a" -t "$load_secs" -i 0.5 -J >"$out/iperf-$c.json" 2>>"$log" ||
            say "iperf3 client failed (see $log)"
        lend=$(now)
    else
        say "no start line from bw_time; no competing flow"
    fi
    local rc=0
    wait $mpipid || rc=$?
    # The iperf3 server left after its one client; it is still there only if that failed.
    kill "$sampler" "$srv" 2>/dev/null || true
    wait "$sampler" "$srv" 2>/dev/null || true
    bg_pids=()
    cat "$out/stderr.tmp" >>"$log"
    if [ $rc != 0 ] || [ -z "$t0" ]; then
        say "FAILED: $topo $c timeline (exit $rc; see $log)"
        echo "{\"test\":\"bw_time\",\"config\":\"$c\",\"topo\":\"$topo\",\"failed\":true}" >>"$res"
        failed=1
        return 0
    fi
    grep '^{"test"' "$raw" | sed "s|}\$|,\"config\":\"$c\",\"topo\":\"$topo\"}|" >>"$res"
    echo "{\"test\":\"load\",\"config\":\"$c\",\"topo\":\"$topo\",\"rail\":\"$load_rail\",$(awk -v t0="$t0" -v a="$lstart" -v b="$lend" \
        'BEGIN { printf "\"start\":%.3f,\"end\":%.3f", a - t0, b - t0 }')}" >>"$res"
    # Per-rail transmit rate of nsA over 0.5 s steps (MPI and iperf3 bytes together).
    awk -v t0="$t0" -v c="$c" -v topo="$topo" 'NF == 5 {
            if (have && $1 - pt >= 0.45) {
                printf "{\"test\":\"rail_rate\",\"config\":\"%s\",\"topo\":\"%s\",\"t\":%.3f,\"rail0_mb_s\":%.1f,\"rail1_mb_s\":%.1f}\n",
                    c, topo, $1 - t0, ($3 - p0) / ($1 - pt) / 1e6, ($5 - p1) / ($1 - pt) / 1e6
                have = 0
            }
            if (!have) { pt = $1; p0 = $3; p1 = $5; have = 1 }
        }' "$out/railctr-$c.txt" >>"$res"
    # The competing flow's own rate, as iperf3 measured it.
    python3 - "$out/iperf-$c.json" "$lstart" "$t0" "$c" "$topo" >>"$res" 2>>"$log" <<'EOF' || true
import json, sys
path, lstart, t0, config, topo = sys.argv[1:]
with open(path) as f:
    doc = json.load(f)
base = float(lstart) - float(t0)
for iv in doc.get("intervals", []):
    s = iv["sum"]
    print(json.dumps({"test": "iperf", "config": config, "topo": topo,
                      "t": round(base + s["end"], 3), "mb_s": round(s["bits_per_second"] / 8e6, 1)}))
EOF
    rm -f "$out/stderr.tmp"
}

# Small-message latency, one rail against two, RailMPI against Open MPI and MPICH (Debian's
# is ch4:ucx: UCX's tcp on the named interfaces), the configurations interleaved so that
# the load of the moment falls on all of them alike.
lat_cmd() { # MPI IFACES
    # shellcheck disable=SC2206
    case "$1" in
        rmpi) CMD=("$netlab" exec nsA "$build/bin/mpiexec" -n 2 --host nsA,nsB --agent "$netlab agent"
                   --pmi-iface ctl -genv RMPI_TCP_IFACES "$2" ${RMPI_ARGS:-} "$build/bench/pt2pt") ;;
        ompi) CMD=("$netlab" exec nsA mpirun.openmpi -np 2 --host nsA:1,nsB:1 --bind-to none
                   --mca plm_rsh_agent "$netlab agent" --mca plm_rsh_no_tree_spawn 1
                   --mca oob_tcp_if_include ctl --mca pml ob1 --mca btl self,tcp
                   --mca btl_tcp_if_include "$2" ${OMPI_ARGS:-} "$ref/pt2pt.openmpi") ;;
        mpich) CMD=("$netlab" exec nsA mpiexec.mpich -n 2 -hosts nsA:1,nsB:1 -launcher rsh
                    -launcher-exec "$netlab" -iface ctl -genv UCX_TLS tcp,self -genv UCX_NET_DEVICES "$2"
                    ${MPICH_ARGS:-} "$ref/pt2pt.mpich") ;;
    esac
}
run_lat() {
    local reps=${LAT_REPS:-5} sizes=${LAT_SIZES:-8:1024} iters=${LAT_ITERS:-10000} rep mpi rails ifaces line
    [ $quick = 1 ] && reps=${LAT_REPS:-3}
    topo_up "$rate0" "$rate0"
    for rep in $(seq 1 "$reps"); do
        for mpi in rmpi ompi mpich; do
            case $mpi in rmpi) [ $have_rmpi = 1 ] ;; ompi) [ $have_ompi = 1 ] ;; mpich) [ $have_mpich = 1 ] ;; esac || continue
            for rails in 1 2; do
                ifaces=rail0; [ $rails = 2 ] && ifaces=rail0,rail1
                lat_cmd $mpi $ifaces
                ensure_topo
                say "$topo $mpi $rails rail(s) latency $sizes (run $rep of $reps)"
                echo "### $topo $mpi $ifaces lat run $rep: ${CMD[*]} -t latency -m $sizes -i $iters" >>"$log"
                if line=$(timeout 120 "${CMD[@]}" -t latency -m "$sizes" -i "$iters" 2>>"$log"); then
                    printf '%s\n' "$line" | grep '^{"test":"latency"' |
                        sed "s|}\$|,\"part\":\"lat\",\"mpi\":\"$mpi\",\"rails\":$rails,\"rep\":$rep,\"load\":$(cut -d' ' -f1 /proc/loadavg)}|" >>"$res"
                else
                    say "FAILED: $topo $mpi $ifaces latency (see $log)"
                    echo "{\"test\":\"latency\",\"part\":\"lat\",\"mpi\":\"$mpi\",\"rails\":$rails,\"rep\":$rep,\"failed\":true}" >>"$res"
                    failed=1
                fi
            done
        done
    done
    python3 - "$res" >"$out/summary-lat.md" <<'PY'
import json, statistics, sys
from collections import defaultdict
runs = defaultdict(list)
loads = []
for l in open(sys.argv[1]):
    d = json.loads(l)
    if d.get("part") == "lat" and not d.get("failed"):
        runs[(d["mpi"], d["rails"], d["size"])].append(d["latency_us"])
        loads.append(d["load"])
names = {"rmpi": "RailMPI", "ompi": "Open MPI", "mpich": "MPICH"}
sizes = sorted({k[2] for k in runs})
cols = [(m, r) for m in ("rmpi", "ompi", "mpich") for r in (1, 2) if any((m, r, s) in runs for s in sizes)]
print("## Small-message latency, one rail against two (us one way, median of the interleaved runs)")
print()
if loads:
    print(f"load average {min(loads):.1f}-{max(loads):.1f} during the runs")
    print()
print("| size | " + " | ".join(f"{names[m]} {r} rail{'s' if r > 1 else ''}" for m, r in cols) + " | RailMPI 2/1 |")
print("|---" * (len(cols) + 2) + "|")
for s in sizes:
    med = {c: statistics.median(runs[(c[0], c[1], s)]) for c in cols if (c[0], c[1], s) in runs}
    ratio = f"{med[('rmpi', 2)] / med[('rmpi', 1)]:.3f}" if ("rmpi", 2) in med and ("rmpi", 1) in med else "-"
    print(f"| {s} | " + " | ".join(f"{med[c]:.2f}" if c in med else "-" for c in cols) + f" | {ratio} |")
PY
    cat "$out/summary-lat.md"
}

# Many unequal rails, no settings: RailMPI's default (adaptive striping over every rail)
# and Open MPI's default, against the sum of what each rail carries alone (RailMPI, one
# rail) and of what TCP carries on each (iperf3 through netlab bw).
many_one() { # MPI IFACES ITERS LABEL
    local mpi=$1 ifaces=$2 iters=$3 label=$4 line
    if [ "$mpi" = ompi ]; then
        # shellcheck disable=SC2206
        CMD=("$netlab" exec nsA mpirun.openmpi -np 2 --host nsA:1,nsB:1 --bind-to none
             --mca plm_rsh_agent "$netlab agent" --mca plm_rsh_no_tree_spawn 1
             --mca oob_tcp_if_include ctl --mca pml ob1 --mca btl self,tcp
             --mca btl_tcp_if_include "$ifaces" ${MANY_OMPI_BW:-} "$ref/pt2pt.openmpi")
    else
        CMD=("$netlab" exec nsA "$build/bin/mpiexec" -n 2 --host nsA,nsB --agent "$netlab agent"
             --pmi-iface ctl -genv RMPI_TCP_IFACES "$ifaces" -genv RMPI_REPORT 1 "$build/bench/pt2pt")
    fi
    say "$topo $mpi $label bw 4 MiB"
    echo "### $topo $mpi $label: ${CMD[*]} -t bw -m 4194304:4194304 -w 8 -i $iters" >>"$log"
    if line=$(timeout 60 "${CMD[@]}" -t bw -m 4194304:4194304 -w 8 -i "$iters" 2>"$out/stderr.tmp"); then
        line=$(printf '%s\n' "$line" | grep '^{"test"' | head -1)
        cat "$out/stderr.tmp" >>"$log"
        if [ -n "$line" ]; then
            echo "${line%\}},\"part\":\"many\",\"mpi\":\"$mpi\",\"rails\":\"$label\",\"topo\":\"$topo\"$(report_json "$out/stderr.tmp")}" >>"$res"
            echo "$line" | sed -n 's/.*"mb_s":\([0-9.]*\).*/\1/p'
            return 0
        fi
    fi
    cat "$out/stderr.tmp" >>"$log"
    say "FAILED: $topo $mpi $label (see $log)"
    failed=1
    echo 0
}

run_many() {
    local t n i ifaces one sum iperf all ompi shares md=$out/summary-many.md
    local IFS_SAVE=$IFS
    IFS=';' read -r -a topos <<<"${MANY_TOPOS:-1gbit 500mbit 250mbit 125mbit;1gbit 100mbit}"
    IFS=$IFS_SAVE
    {
        echo "## Many unequal rails, no settings (4 MiB messages, bw, MB/s)"
        echo
        echo "| rails | TCP alone per rail (iperf3) | RailMPI alone per rail | sum alone | RailMPI all rails | of the sum | of iperf3's sum | Open MPI all rails | Open MPI hand-weighted | RailMPI bytes per rail (share) |"
        echo "|---|---|---|---|---|---|---|---|---|---|"
    } >"$md"
    for t in "${topos[@]}"; do
        "$netlab" down >/dev/null 2>&1 || true
        # shellcheck disable=SC2086
        "$netlab" up $t >>"$log" 2>&1 || { say "netlab up $t failed (see $log)"; exit 1; }
        topo=$(echo "$t" | tr ' ' /)
        n=$(echo "$t" | wc -w)
        ifaces=$(seq -s, -f 'rail%g' 0 $((n - 1)))
        iperf=$("$netlab" bw 2 2>>"$log" | awk '{ printf "%s%.1f", (NR > 1 ? " " : ""), $2 / 8 }')
        one="" sum=0
        for i in $(seq 0 $((n - 1))); do
            r=$(many_one rmpi "rail$i" 6 "rail$i"); [ "$r" = 0 ] && failed=1
            one="$one${one:+ }$r"
            sum=$(awk -v a="$sum" -v b="$r" 'BEGIN { print a + b }')
        done
        all=$(many_one rmpi "$ifaces" 16 all); [ "$all" = 0 ] && failed=1
        # The two ranks' report lines interleave: per rail the larger count of those near
        # rank 0's header (both ranks count the same rendezvous bytes or one counts none).
        shares=$(grep -A$((4 * n)) "rank 0 -> 1: $n subchannel" "$out/stderr.tmp" 2>/dev/null | grep "rail tcp" |
                 sed -n 's/.*rail tcp:\(rail[0-9]*\):.* rdma bytes \([0-9]*\),.*/\1 \2/p' |
                 awk '!($1 in b) { n[++k] = $1; b[$1] = 0 } $2 > b[$1] { b[$1] = $2 }
                      END { for (i = 1; i <= k; i++) s += b[n[i]]; for (i = 1; i <= k; i++)
                      printf "%s%s %.0f MB (%.1f%%)", (i > 1 ? ", " : ""), n[i], b[n[i]] / 1e6, (s ? 100 * b[n[i]] / s : 0) }')
        ompi="-" ompiw="-"
        [ $have_ompi = 1 ] && ompi=$(many_one ompi "$ifaces" 16 all)
        # Open MPI hand-weighted: btl_tcp_bandwidth_<if> set to each rail's tc rate (Mbit/s).
        MANY_OMPI_BW=""
        i=0
        for r in $t; do
            MANY_OMPI_BW="$MANY_OMPI_BW --mca btl_tcp_bandwidth_rail$i $(rate_mbit "${r%%@*}")"
            i=$((i + 1))
        done
        [ $have_ompi = 1 ] && ompiw=$(many_one ompi "$ifaces" 16 weighted)
        MANY_OMPI_BW=""
        local isum
        isum=$(echo "$iperf" | awk '{ for (i = 1; i <= NF; i++) s += $i; print s }')
        echo "| $topo | $iperf | $one | $sum | $all | $(awk -v a="$all" -v s="$sum" 'BEGIN { printf "%.1f%%", s ? 100 * a / s : 0 }') | $(awk -v a="$all" -v s="$isum" 'BEGIN { printf "%.1f%%", s ? 100 * a / s : 0 }') | $ompi | $ompiw | $shares |" >>"$md"
    done
    cat "$md"
}

# Rates changing under a stream (see --part rates). tc rates of rail0/rail1 per phase, the
# events' times from bw_time's start; the phases' optimum is measured first with netlab bw.
RATES_SCHED=${RATES_SCHED:-"6 rail1 100mbit;12 rail0 500mbit;18 both back;24 rail1 cut;27 rail1 restore"}
RATES_SECS=${RATES_SECS:-33}
set_rate() { # RAIL RATE: both ends, as netlab shaped them
    local h
    for h in nsA nsB; do
        "$netlab" exec "$h" tc qdisc change dev "$1" root tbf rate "$2" burst "${BURST:-256kb}" \
            latency "${TBF_LATENCY:-50ms}" >>"$log" 2>&1 || say "tc change $1 $2 in $h failed"
    done
}
rates_opt() { # R0 R1: TCP alone on each rail at these rates, summed (MB/s)
    set_rate rail0 "$1"; set_rate rail1 "$2"
    local bw
    bw=$("$netlab" bw 2 2>>"$log" | awk '{ printf "%s%.1f", (NR > 1 ? " " : ""), $2 / 8 }')
    echo "{\"test\":\"rates_opt\",\"rates\":\"$1/$2\",\"rails_mb_s\":\"$bw\",\"mb_s\":$(echo "$bw" | awk '{ print $1 + $2 }')}" >>"$res"
}
rates_event() { # WHAT...: applied now
    case "$*" in
        "rail1 100mbit") set_rate rail1 100mbit ;;
        "rail0 500mbit") set_rate rail0 500mbit ;;
        "both back") set_rate rail0 "$rate0"; set_rate rail1 "$rate1" ;;
        "rail1 cut") "$netlab" exec nsA ip link set rail1 down; "$netlab" exec nsB ip link set rail1 down ;;
        "rail1 restore") "$netlab" exec nsA ip link set rail1 up; "$netlab" exec nsB ip link set rail1 up ;;
    esac
}
run_rates() {
    local c raw t0 mpipid ev at what rc tev
    topo_up "$rate0" "$rate1"
    rates_opt "$rate0" 100mbit; rates_opt 500mbit 100mbit; rates_opt "$rate0" "$rate1"
    for c in ${RATES_CONFIGS:-rmpi-adaptive ompi-default}; do
        wanted "$c" || continue
        rates_event both back
        raw=$out/rates-$c.out
        config_cmd "$c" bw_time
        say "$topo $c rates changing under a stream ($RATES_SECS s)"
        echo "### $topo $c rates: ${CMD[*]} -t $RATES_SECS -i 0.05 -s 256k -w 64 -c 1 -p 1 -a ${RATES_SPREAD:-0}" >>"$log"
        timeout $((RATES_SECS + 120)) "${CMD[@]}" -t "$RATES_SECS" -i 0.05 -s 256k -w 64 -c 1 -p 1 -a "${RATES_SPREAD:-0}" >"$raw" 2>"$out/stderr.tmp" &
        mpipid=$!; bg_pids+=("$mpipid")
        t0=$(wait_start "$raw" $mpipid)
        if [ -n "$t0" ]; then
            IFS=';' read -r -a ev <<<"$RATES_SCHED"
            for e in "${ev[@]}"; do
                at=${e%% *} what=${e#* }
                sleep "$(awk -v t0="$t0" -v d="$at" -v n="$(now)" 'BEGIN { s = t0 + d - n; print (s > 0 ? s : 0) }')"
                # the event's time is when its change starts: tc in both namespaces takes tens
                # of ms, and a bin that ends inside that belongs to the new phase, not the old
                tev=$(now)
                rates_event $what
                echo "{\"test\":\"rate_event\",\"config\":\"$c\",\"topo\":\"$topo\",\"what\":\"$what\",\"t\":$(awk -v t0="$t0" -v n="$tev" 'BEGIN { printf "%.3f", n - t0 }')}" >>"$res"
            done
        fi
        rc=0
        wait $mpipid || rc=$?
        bg_pids=()
        cat "$out/stderr.tmp" >>"$log"
        rates_event rail1 restore
        if [ $rc != 0 ] || [ -z "$t0" ]; then
            say "FAILED: $topo $c rates (exit $rc; see $log)"
            echo "{\"test\":\"rates\",\"config\":\"$c\",\"topo\":\"$topo\",\"failed\":true}" >>"$res"
            failed=1
            continue
        fi
        grep '^{"test"' "$raw" | sed "s|}\$|,\"config\":\"$c\",\"topo\":\"$topo\",\"part\":\"rates\"}|" >>"$res"
        echo "{\"test\":\"rates_report\",\"config\":\"$c\",\"topo\":\"$topo\"$(report_json "$out/stderr.tmp")}" >>"$res"
    done
    rm -f "$out/stderr.tmp"
}

cpu_busy() {
    local a b
    a=$(awk '/^cpu /{print $2+$3+$4+$7+$8, $5+$6}' /proc/stat); sleep 1
    b=$(awk '/^cpu /{print $2+$3+$4+$7+$8, $5+$6}' /proc/stat)
    echo "$a $b" | awk '{ busy = $3 - $1; all = busy + $4 - $2; print (all > 0 ? int(100 * busy / all) : 0) }'
}

plot_png() { # MODE (--png or --rates-png): with the first python that has matplotlib
    local p
    for p in "$build/venv-plot/bin/python" python3; do
        if "$p" -c 'import matplotlib' 2>/dev/null; then
            "$p" "$here/plot_multirail.py" "$1" "$out" "$res" >&2 || say "plotting failed"
            return 0
        fi
    done
    say "matplotlib not found: no plots (python3 -m venv $build/venv-plot && $build/venv-plot/bin/pip install matplotlib)"
}

# --- run ----------------------------------------------------------------------------------
busy=$(cpu_busy)
[ "$busy" -lt 20 ] || say "warning: the CPUs are $busy% busy with other work; numbers will be noisy"
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null | grep -c . || true)
ompi_ver=$(ompi_info --version 2>/dev/null | awk '/Open MPI/{print $3; exit}' || true)
echo "{\"meta\":\"multirail\",\"date\":\"$stamp\",\"host\":\"$(hostname)\",\"kernel\":\"$(uname -r)\",\"cores\":$(nproc),\"busy_pct\":$busy,\"quick\":$quick,\"rate0\":\"$rate0\",\"rate1\":\"$rate1\",\"load_rail\":\"$load_rail\",\"timeline_s\":$tl_secs,\"load_from\":$load_from,\"load_secs\":$load_secs,\"budget_bytes\":$budget,\"key_reps\":$key_reps,\"commit\":\"$commit\",\"dirty_files\":$dirty,\"openmpi\":\"$ompi_ver\",\"railmpi\":$have_rmpi}" >>"$res"

start=$SECONDS
if [ "$part" = rates ]; then
    run_rates
    "$netlab" down >/dev/null 2>&1 || true
    say "runs took $((SECONDS - start)) s; results in $out"
    python3 "$here/plot_multirail.py" --rates "$res" | tee "$out/summary-rates.md"
    plot_png --rates-png
    exit $failed
fi
if [ "$part" = lat ]; then
    run_lat
    "$netlab" down >/dev/null 2>&1 || true
    say "runs took $((SECONDS - start)) s; results in $out"
    exit $failed
fi
if [ "$part" = many ]; then
    run_many
    "$netlab" down >/dev/null 2>&1 || true
    say "runs took $((SECONDS - start)) s; results in $out"
    exit $failed
fi
topo_up "$rate0" "$rate1"
for c in ompi-rail0 ompi-default ompi-weighted rmpi-rail0 rmpi-even rmpi-weighted rmpi-adaptive; do
    run_pt2pt "$c"
done
for c in rmpi-adaptive rmpi-even ompi-default ompi-weighted; do
    run_timeline "$c"
done
if [ "$part" != timeline ]; then
    topo_up "$rate0" "$rate0"
    for c in ompi-default rmpi-adaptive; do
        run_pt2pt "$c"
    done
fi
"$netlab" down >/dev/null 2>&1 || true
say "runs took $((SECONDS - start)) s; results in $out"

python3 "$here/plot_multirail.py" --summary "$res" | tee "$out/summary.md"
plot_png --png
exit $failed
