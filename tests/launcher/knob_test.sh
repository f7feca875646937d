#!/bin/bash
# Knob values: knob_test.sh MPIEXEC KNOB_INIT RMPI_INFO
# A bad value of each knob type stops MPI_Init (singleton and 2 ranks under mpiexec) with
# "RMPI_<NAME>=<value>: expected ..." and a non-zero exit; good values of each type are
# accepted, parsed to the typed value (rmpi_info --knobs) and the job runs.
set -u
MPIEXEC=$1 PROG=$2 INFO=$3
T=$(mktemp -d "${TMPDIR:-/tmp}/rmpi-knobs.XXXXXX")
trap 'rm -rf "$T"' EXIT
unset PMI_FD PMI_PORT PMI_ID PMI_RANK PMI_SIZE
for v in $(env | sed -n 's/^\(RMPI_[A-Z0-9_]*\)=.*/\1/p'); do unset "$v"; done

fail() { echo "FAIL ($what): $*"; for f in out err; do [ -s "$T/$f" ] && { echo "--- std$f:"; head -20 "$T/$f"; }; done; exit 1; }
run() { "$@" >"$T/out" 2>"$T/err"; rc=$?; }

# bad VAR=VALUE MESSAGE: rejected by a singleton and by a 2-rank job, message on stderr
bad() {
  local msg=$2
  what="$1 singleton"
  run env "$1" "$PROG"
  [ "$rc" != 0 ] || fail "exit status 0, expected a failure"
  grep -qF -- "$msg" "$T/err" || fail "stderr lacks '$msg'"
  grep -q "knob_init: rank" "$T/out" && fail "the program got past MPI_Init"
  what="$1 mpiexec -n 2"
  run "$MPIEXEC" -n 2 --timeout 60 -genv "${1%%=*}" "${1#*=}" "$PROG"
  [ "$rc" != 0 ] || fail "exit status 0, expected a failure"
  grep -qF -- "$msg" "$T/err" || fail "stderr lacks '$msg'"
  grep -q "knob_init: rank" "$T/out" && fail "a rank got past MPI_Init"
}
bad RMPI_NET=foo "RMPI_NET=foo: expected one of auto|shm|tcp|ofi."
bad RMPI_COLL_ALLREDUCE=ringg "RMPI_COLL_ALLREDUCE=ringg: expected one of auto|recursive_doubling|rabenseifner|ring|two_level|site."
bad RMPI_HDR_CACHE=maybe "RMPI_HDR_CACHE=maybe: expected a boolean, one of 1|0|yes|no|true|false|on|off."
bad RMPI_WINDOW=16x "RMPI_WINDOW=16x: expected an integer (default 16)."
bad RMPI_WINDOW= "RMPI_WINDOW=: expected an integer (default 16)."
bad RMPI_ADAPT_ALPHA=half "RMPI_ADAPT_ALPHA=half: expected a number (default 0.5)."
bad RMPI_SHM_RING_SIZE=64q "RMPI_SHM_RING_SIZE=64q: expected a size in bytes with an optional k|m|g suffix (default 256k)."
bad RMPI_UNEXP_MAX=-1 "RMPI_UNEXP_MAX=-1: expected a size in bytes with an optional k|m|g suffix (default 256m)."
# values the type accepts and the meaning does not (range checks of the consumer)
bad RMPI_CHAN_SLOT=0 "RMPI_CHAN_SLOT=0: expected milliseconds from 1 to RMPI_CHAN_INTERVAL (1000)."
bad RMPI_CHAN_GAMMA=-1 "RMPI_CHAN_GAMMA=-1: expected nanoseconds from 0 to 1e15."
bad RMPI_CHAN_SMALL_JOB=-2 "RMPI_CHAN_SMALL_JOB=-2: expected -1 (h), 0 (never) or a number of peers up to 1000000."
bad RMPI_CHAN_QUEUE_KEEP_MS=-5 "RMPI_CHAN_QUEUE_KEEP_MS=-5: expected -1 (RMPI_CHAN_INTERVAL), 0 (at once) or milliseconds up to 86400000 (a day)."

# good values of every type: the typed value is what rmpi_info shows, and a job runs with them
good=(RMPI_NET=tcp RMPI_COLL_ALLREDUCE=ring RMPI_HDR_CACHE=off RMPI_WINDOW=0x20 RMPI_ADAPT_ALPHA=0.25
      RMPI_SHM_RING_SIZE=64k RMPI_EAGER_LIMIT=intra:4k,inter:32k)
what="good values: rmpi_info"
run env "${good[@]}" "$INFO" --knobs
[ "$rc" = 0 ] || fail "exit status $rc"
for want in "RMPI_NET +ENUM +tcp " "RMPI_COLL_ALLREDUCE +ENUM +ring " "RMPI_HDR_CACHE +BOOL +0 " \
            "RMPI_WINDOW +INT +32 " "RMPI_ADAPT_ALPHA +FLOAT +0.25 " "RMPI_SHM_RING_SIZE +SIZE +65536 " \
            "RMPI_EAGER_LIMIT +STR +intra:4k,inter:32k "; do
  grep -qE -- "^$want" "$T/out" || fail "rmpi_info --knobs lacks /^$want/"
done
[ -s "$T/err" ] && fail "warnings on stderr"
what="good values: mpiexec -n 2"
genv=(); for kv in "${good[@]}"; do genv+=(-genv "${kv%%=*}" "${kv#*=}"); done
run "$MPIEXEC" -n 2 --timeout 60 "${genv[@]}" "$PROG"
[ "$rc" = 0 ] || fail "exit status $rc"
[ "$(grep -c "^knob_init: rank [01] ok$" "$T/out")" = 2 ] || fail "not every rank ran"
[ -s "$T/err" ] && fail "messages on stderr"
what="good values: singleton"
run env "${good[@]}" "$PROG"
[ "$rc" = 0 ] || fail "exit status $rc"
grep -q "^knob_init: rank 0 ok$" "$T/out" || fail "the singleton did not run"
echo "knob_test: every bad value stopped MPI_Init with its message; good values accepted"
