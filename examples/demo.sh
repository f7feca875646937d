#!/bin/bash
# Runs the examples with 4 ranks through RailMPI's mpiexec, over shared memory and then
# over TCP, and fails if any run fails.
set -eu

usage() {
    cat <<'USAGE'
usage: examples/demo.sh BUILD_DIR

Runs BUILD_DIR/examples/{hello,ring,pingpong} with BUILD_DIR/bin/mpiexec -n 4, first over
shared memory (the default) and then over TCP (-genv RMPI_NET tcp). Exits non-zero if any
run fails. Set DEMO_TIMEOUT (seconds, default 120) to bound each run.
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

echo
if [ ${#failed[@]} -gt 0 ]; then
    echo "demo: ${#failed[@]} run(s) failed: ${failed[*]}" >&2
    exit 1
fi
echo "demo: all runs passed"
