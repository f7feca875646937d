#!/bin/bash
# Runs the examples with 4 ranks through RailMPI's mpiexec, over shared memory and then
# over TCP, and fails if any run fails. As root, it ends with what RailMPI is for: two
# unequal rails from tools/netlab, the bandwidth of each alone and of both striped, and the
# weights the adaptive striping found (then the same with a delay on both rails).
set -eu

usage() {
    cat <<'USAGE'
usage: examples/demo.sh BUILD_DIR

Runs BUILD_DIR/examples/{hello,ring,pingpong} with BUILD_DIR/bin/mpiexec -n 4, first over
shared memory (the default) and then over TCP (-genv RMPI_NET tcp). As root, then brings
up two namespaces joined by a 100 Mbit/s and a 25 Mbit/s rail (tools/netlab) and runs
BUILD_DIR/bench/pt2pt's bandwidth test over rail0 alone, rail1 alone and both, printing
each bandwidth and the rails' weights from RMPI_REPORT, then once more over both rails
with 2 ms of one-way delay each (about 20 s in all). Without root it says so and skips
that part. Exits non-zero if any run fails. Set DEMO_TIMEOUT (seconds, default 120) to
bound each run.
USAGE
}

if [ $# -ne 1 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
    usage
    [ $# -eq 1 ] && exit 0
    exit 2
fi

build=$1
mpiexec=$build/bin/mpiexec
for f in "$mpiexec" "$build/examples/hello" "$build/examples/ring" "$build/examples/pingpong"; do
    if [ ! -x "$f" ]; then
        echo "demo.sh: $f is missing; build first (make, or cmake --build $build)" >&2
        exit 1
    fi
done

failed=()
# A hung run would otherwise hold the demo forever; timeout turns it into a failure.
run() {
    local title=$1
    shift
    echo
    echo "== $title: $*"
    if ! timeout "${DEMO_TIMEOUT:-120}" "$@"; then
        echo "== FAILED: $title" >&2
        failed+=("$title")
    fi
}

for net in shm tcp; do
    if [ $net = shm ]; then
        opts=()
        echo
        echo "#### 4 ranks over shared memory (default transport)"
    else
        opts=(-genv RMPI_NET tcp)
        echo
        echo "#### 4 ranks over TCP (-genv RMPI_NET tcp)"
    fi
    for prog in hello ring pingpong; do
        run "$prog ($net)" "$mpiexec" -n 4 "${opts[@]}" "$build/examples/$prog"
    done
done

# The rails' weights and rendezvous bytes from RMPI_REPORT (file $1, lines tagged "[R] " by
# mpiexec -l: the two ranks' reports interleave line by line), as seen by the rank whose VC
# moved more rendezvous bytes: rank 0 writes the data on a short link, rank 1 reads it on a
# long one (a far peer's rendezvous is read by the receiver), and only the side that moves
# the data learns the weights.
rail_weights() {
    sed -n 's/^\[\([01]\)\] .*rail tcp:\(rail[0-9]\): up, weight \([0-9.]*\),.*rdma bytes \([0-9][0-9]*\),.*/\1 \2 \3 \4/p' "$1" |
        awk '{ r = $1; line[r] = line[r] sprintf("%s%s weight %s (%.1f MB)", (line[r] == "" ? "" : ", "), $2, $3, $4 / 1e6); sum[r] += $4 }
             END { b = (sum[1] > sum[0]) ? 1 : 0; printf "%s%s", line[b], (b ? " (rank 1, the reader)" : "") }'
}

# The bandwidth of one pt2pt bw run between the lab's nsA and nsB over the rails IFACES,
# and the rails' weights and rendezvous bytes from RMPI_REPORT.
lab_bw() { # TITLE IFACES ITERATIONS
    local title=$1 ifaces=$2 iters=$3 out err bw weights
    out=$(mktemp) err=$(mktemp)
    if "$netlab" exec nsA timeout "${DEMO_TIMEOUT:-120}" "$mpiexec" -l -n 2 --host nsA,nsB \
        --agent "$netlab agent" --pmi-iface ctl -genv RMPI_TCP_IFACES "$ifaces" -genv RMPI_REPORT 1 \
        "$build/bench/pt2pt" -t bw -m 1048576:1048576 -w 4 -i "$iters" -x 1 >"$out" 2>"$err"; then
        bw=$(sed -n 's/.*"mb_s":\([0-9.]*\).*/\1/p' "$out" | head -1)
        weights=$(rail_weights "$err")
        printf '  %-34s %6s MB/s   %s\n' "$title" "${bw:-?}" "$weights"
    else
        echo "== FAILED: $title" >&2
        tail -20 "$err" >&2
        failed+=("$title")
    fi
    rm -f "$out" "$err"
}

multirail() {
    netlab=$(cd "$(dirname "$0")/.." && pwd)/tools/netlab
    # Its own namespaces (demo<pid>-nsA...), so a lab someone else has up is left alone.
    export NETLAB_PREFIX=demo$$-
    trap '"$netlab" down >/dev/null 2>&1' EXIT
    echo
    echo "#### 2 ranks in two network namespaces joined by two unequal rails (tools/netlab up 100mbit 25mbit)"
    echo "     pt2pt bw, 1 MiB messages, windows of 4; RMPI_TCP_IFACES picks the rails; weights from RMPI_REPORT"
    if ! "$netlab" up 100mbit 25mbit >/dev/null; then
        failed+=("netlab up"); return
    fi
    lab_bw "rail0 alone (100 Mbit/s)" rail0 4
    lab_bw "rail1 alone (25 Mbit/s)" rail1 1
    lab_bw "both rails, adaptive striping" rail0,rail1 4
    "$netlab" down >/dev/null 2>&1
    echo
    echo "#### the same rails with 2 ms of one-way delay each (tools/netlab up 100mbit@2ms 25mbit@2ms)"
    if ! "$netlab" up 100mbit@2ms 25mbit@2ms >/dev/null; then
        failed+=("netlab up with delay"); return
    fi
    lab_bw "both rails, 4 ms round trip" rail0,rail1 4
    "$netlab" down >/dev/null 2>&1
    trap - EXIT
}

echo
if [ "$(id -u)" != 0 ]; then
    echo "demo: multirail part skipped: it needs root (network namespaces and tc); run 'sudo make demo' to see it"
elif ! command -v ip >/dev/null || ! ip netns list >/dev/null 2>&1; then
    echo "demo: multirail part skipped: 'ip netns' is unavailable (iproute2 and network namespaces needed)"
elif [ ! -x "$build/bench/pt2pt" ]; then
    echo "demo: multirail part skipped: $build/bench/pt2pt is not built"
else
    multirail
fi

echo
if [ ${#failed[@]} -gt 0 ]; then
    echo "demo: ${#failed[@]} run(s) failed: ${failed[*]}" >&2
    exit 1
fi
echo "demo: all runs passed"
