#!/bin/sh
# Calibration of bench/scalesim against the library: a real job on shared memory runs with
# RMPI_CHAN_TRACE and RMPI_REPORT=json, and scalesim replays its traces with the parameters they
# record. For every rank the peers it predicts on dedicated channels must be the ones the report
# names, and its shared channel memory within 10% of the report's; its dedicated memory's peak
# within 10% of the range the replay gives (whether a ring given back was still held when the
# same run's new ring became active is up to the markers' timing). Cases:
#   select: 4 ranks, rank 0 hears 6:3:1 from ranks 1-3 (tests/mpi/pt2pt/chan_select, h = 2)
#   coll:   8 ranks, bench/coll's six collectives at 8 bytes (every rank dedicates h or fewer;
#           Reduce kept point-to-point)
#   ofi:    select over libfabric (RMPI_NET=ofi, tcp;ofi_rxm, RMPI_CHAN_GAIN_OFI=1000): every
#           peer is of the libfabric cost class, its rings written with fi_write
#   mixed:  select under RMPI_NET=auto on two pretend nodes: rank 1 over shm (class 0), ranks
#           2 and 3 over tcp;ofi_rxm (class 1), one selector over both (the barrier and the
#           reduce of the tests' final error count pinned: on two pretend nodes their automatic
#           choice, site or two_level, follows round trips measured under load, and the two runs
#           below must agree)
# Every rank's object is one JSON line, and its "collectives" key says what RMPI_REPORT=on's
# collective lines say for the same job run again (coll: the six collectives are in it).
# Also: a trace path that cannot be written stops MPI_Init naming RMPI_CHAN_TRACE.
# Usage: scalesim_calibrate.sh BUILD_DIR SOURCE_DIR select|coll|ofi|mixed
set -u
B=$1
MPIEXEC=$B/bin/mpiexec
SIM=$B/bench/scalesim
CASE=${3:-}
NET=shm
# shm peers' r set to what the replay applies to every frame: a trace records no progress
# passes, so the replay cannot tell a stream's frames (RMPI_CHAN_GAIN_STREAM) from the others;
# with r above w every frame of a shm peer saves r in both
GAIN="-genv RMPI_CHAN_GAIN_SHM 1000"
case $CASE in
select) NP=4 PROG=$B/tests/mpi/pt2pt/chan_select ARGS=selected
    set -- -genv RMPI_CHAN_MAX_DEDICATED 2 -genv RMPI_CHAN_SLOT 2 $GAIN ;;
ofi) NP=4 PROG=$B/tests/mpi/pt2pt/chan_select ARGS=selected NET=ofi
    set -- -genv RMPI_CHAN_MAX_DEDICATED 2 -genv RMPI_CHAN_SLOT 2 -genv RMPI_CHAN_GAIN_OFI 1000 ;;
mixed) NP=4 PROG=$B/tests/mpi/pt2pt/chan_select ARGS=selected NET=auto
    set -- -genv RMPI_CHAN_MAX_DEDICATED 2 -genv RMPI_CHAN_SLOT 2 -genv RMPI_CHAN_GAIN_OFI 1000 $GAIN \
        -genv RMPI_TOPO_FAKE_NODES 2 -genv RMPI_OFI_AUTO any -genv RMPI_COLL_BARRIER two_level \
        -genv RMPI_COLL_REDUCE two_level ;;
coll) NP=8 PROG=$B/bench/coll ARGS="-m 8:8 -i 300"
    # the collectives point-to-point: at 8 ranks on few cores the node's segment takes
    # small Reduce (RMPI_COLL_SHM_OVERSUBSCRIBED_REDUCE) and small Barrier, Allreduce,
    # Allgather and Alltoall (RMPI_COLL_SHM_OVERSUBSCRIBED_SMALL) by default, which send
    # nothing, and the remaining messages did not make any rank dedicate a partner
    set -- -genv RMPI_COLL_SHM_OVERSUBSCRIBED_REDUCE 0 -genv RMPI_COLL_SHM_OVERSUBSCRIBED_SMALL 0 $GAIN ;;
*) echo "usage: $0 BUILD_DIR SOURCE_DIR select|coll|ofi|mixed"; exit 2 ;;
esac
for f in "$MPIEXEC" "$PROG" "$SIM"; do
    [ -x "$f" ] || { echo "skipped: $f is not built"; exit 77; }
done
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0

# shellcheck disable=SC2086
timeout 100 "$MPIEXEC" -n $NP -genv RMPI_NET $NET -genv RMPI_REPORT json "$@" -genv RMPI_CHAN_TRACE "$T/tr" \
    "$PROG" $ARGS >"$T/out" 2>"$T/report" ||
    { echo "FAIL: the traced job failed:"; cat "$T/out" "$T/report"; exit 1; }
"$SIM" --replay "$T/tr" >"$T/replay" || { echo "FAIL: scalesim --replay failed"; exit 1; }
# shellcheck disable=SC2086
timeout 100 "$MPIEXEC" -n $NP -genv RMPI_NET $NET -genv RMPI_REPORT on "$@" "$PROG" $ARGS >"$T/out" 2>"$T/lines" ||
    { echo "FAIL: the job with RMPI_REPORT=on failed:"; cat "$T/out" "$T/lines"; exit 1; }
python3 - "$T/report" "$T/replay" "$NP" "$CASE" "$T/lines" <<'PY' || fail=1
import json, re, sys
rep = {}
for line in open(sys.argv[1]):
    if line.startswith('{"rank"'):
        r = json.loads(line)
        rep[r["rank"]] = r
sim = {r["rank"]: r for r in map(json.loads, open(sys.argv[2]))}
np, case = int(sys.argv[3]), sys.argv[4]
bad = []
if sorted(rep) != list(range(np)) or sorted(sim) != list(range(np)):
    bad.append(f"ranks reported {sorted(rep)}, replayed {sorted(sim)}")
for k in sorted(set(rep) & set(sim)):
    a, b = rep[k], sim[k]
    if sorted(a["dedicated_ranks"]) != sorted(b["dedicated_ranks"]):
        bad.append(f"rank {k}: the job dedicated {a['dedicated_ranks']}, scalesim predicts {b['dedicated_ranks']}")
    for kind in ("dedicated", "shared"):
        # dedicated: the replay gives the ends of what the run can reach (a ring given back
        # counted until the next tick or not at all, bench/scalesim.c acct_apply): the
        # report's peak must lie between them, 10% either side
        x, y = a["channel_bytes"][kind], b["channel_bytes"][kind]
        lo = b.get("dedicated_bytes_low", y) if kind == "dedicated" else y
        if x < lo - 0.10 * lo or x > y + 0.10 * y:
            want = f"{y}" if lo == y else f"{lo} to {y}"
            bad.append(f"rank {k}: {kind} channel memory {x} in the report, {want} predicted (more than 10% apart)")
    print(f"rank {k}: dedicated {a['dedicated_ranks']} / predicted {b['dedicated_ranks']}, memory "
          f"{a['channel_bytes']} / predicted {b['channel_bytes']}")
if case in ("select", "ofi", "mixed") and 0 in rep and rep[0]["dedicated_ranks"] != [1, 2]:
    bad.append(f"rank 0 should have dedicated its two busiest senders 1 and 2: {rep[0]['dedicated_ranks']}")
if case == "coll" and sum(len(r["dedicated_ranks"]) for r in rep.values()) < np:
    bad.append("the collectives should have made most ranks dedicate their partners: nothing to compare")
# "[rmpi report] rank R: collective NAME: alg xN (A B), alg xN (A-B B)" as the JSON key would say it
lines = {}
alg_re = re.compile(r"(\S+) x(\d+) \((\d+)(?:-(\d+))? B\)$")
for line in open(sys.argv[5]):
    m = re.match(r"\[rmpi report\] rank (\d+): collective (\w+): (.*)$", line)
    if m:
        algs = []
        for part in m.group(3).split(", "):
            a = alg_re.match(part)
            if not a:
                bad.append(f"unreadable collective line: {line.strip()}")
                continue
            lo = int(a.group(3))
            algs.append({"alg": a.group(1), "calls": int(a.group(2)), "min": lo, "max": int(a.group(4) or lo)})
        lines.setdefault(int(m.group(1)), {})[m.group(2)] = algs
for k in sorted(rep):
    got = rep[k].get("collectives")
    if got != lines.get(k, {}):
        bad.append(f"rank {k}: collectives {got} in the JSON report, RMPI_REPORT=on printed {lines.get(k, {})}")
    elif case == "coll" and not {"barrier", "bcast", "reduce", "allreduce", "allgather", "alltoall"} <= set(got):
        bad.append(f"rank {k}: bench/coll's six collectives are not all in {got}")
if 0 in rep:
    print(f"rank 0: collectives {rep[0].get('collectives')}")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY

# an unwritable trace path is refused by name
timeout 60 "$MPIEXEC" -n 2 -genv RMPI_NET shm -genv RMPI_CHAN_TRACE /nonexistent-dir/tr "$PROG" >"$T/out" 2>"$T/err" &&
    { echo "FAIL: a job with an unwritable RMPI_CHAN_TRACE succeeded"; fail=1; }
grep -q "RMPI_CHAN_TRACE=/nonexistent-dir/tr: cannot write" "$T/err" ||
    { echo "FAIL: no sentence naming RMPI_CHAN_TRACE:"; cat "$T/err"; fail=1; }
[ $fail -eq 0 ] && echo "scalesim calibrate: ok"
exit $fail
