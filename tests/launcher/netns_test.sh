#!/bin/bash
# mpiexec started inside network namespace nsA launches ranks in nsA and nsB through
# tools/netlab's agent: PMI over TCP across namespaces, and failure of a remote rank.
# netns_test.sh MPIEXEC PMI_EXCHANGE NETLAB. Exit 77 (skip) without root or ip netns.
set -u
MPIEXEC=$1 PMIX=$2 NETLAB=$3
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
command -v ip >/dev/null && ip netns list >/dev/null 2>&1 || { echo "SKIP: ip netns is unavailable"; exit 77; }
unset PMI_FD PMI_PORT PMI_ID PMI_RANK PMI_SIZE

T=$(mktemp -d "${TMPDIR:-/tmp}/rmpi-netns.XXXXXX")
# This run's own namespaces (t<pid>-nsA...); the agent finds them through the variable.
export NETLAB_PREFIX=t$$-
"$NETLAB" up >/dev/null || { "$NETLAB" down >/dev/null 2>&1; echo "FAIL: netlab up"; exit 1; }
trap '"$NETLAB" down; rm -rf "$T"' EXIT
AGENT="$NETLAB agent"
fail() { echo "FAIL: $*"; for f in out err; do [ -s "$T/$f" ] && { echo "--- std$f:"; head -40 "$T/$f"; }; done; exit 1; }

timeout 60 "$NETLAB" exec nsA "$MPIEXEC" -n 4 --host nsA:2,nsB:2 --agent "$AGENT" -l \
  sh -c 'echo "host=$(hostname)"; exec "$0"' "$PMIX" >"$T/out" 2>"$T/err"
rc=$?
[ $rc = 0 ] || fail "PMI exchange across nsA/nsB exited with $rc"
[ "$(grep -cE '^\[[0-3]\] pmi_exchange: rank [0-3] of 4: ok$' "$T/out")" = 4 ] || fail "expected 4 ok lines"
grep -qx '\[2\] host=nsB' "$T/out" && grep -qx '\[1\] host=nsA' "$T/out" || fail "ranks did not run in nsA and nsB"

# a local rank plus two in nsB over the ctl link; rank 2 kills itself
t0=$(date +%s%3N)
timeout 60 "$NETLAB" exec nsA "$MPIEXEC" -n 3 --host localhost,nsB:2 --pmi-iface ctl --agent "$AGENT" \
  sh -c 'if [ "$PMI_RANK" = 2 ]; then sleep 0.3; kill -KILL $$; fi; exec sleep 30' >"$T/out" 2>"$T/err"
rc=$? ms=$(( $(date +%s%3N) - t0 ))
[ $rc = 137 ] || fail "exit status $rc, expected 137"
grep -qE '^mpiexec: rank 2 \(on nsB, launch agent pid [0-9]+\) was killed by signal 9 \(SIGKILL\)' "$T/err" ||
  fail "no message naming rank 2 on nsB"
[ $ms -lt 10000 ] || fail "took $ms ms"
echo "PASS (netns)"
