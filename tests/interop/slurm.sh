#!/usr/bin/env bash
# RailMPI programs under Slurm's srun: a single-node Slurm (munged, slurmctld, slurmd) made
# for this test in a temporary directory, on ports nobody else uses, stopped by PID at the
# end (also on failure or interruption). Runs the point-to-point and a collective program
# with srun --mpi=pmi2 and --mpi=pmix at 4 ranks, checks that a failing rank's exit status
# reaches srun and that srun without --mpi is refused by name.
# usage: slurm.sh BUILD_DIR HAVE_PMIX     exit 77 (skipped) without root or without slurm-wlm
set -u
b=$1 have_pmix=${2:-0}
[ "$(id -u)" = 0 ] || { echo "skip: a private Slurm needs root (munged as user munge, slurmd)"; exit 77; }
for c in slurmctld slurmd srun munged; do
  command -v $c >/dev/null || { echo "skip: $c not installed (apt-get install slurmctld slurmd slurm-client munge)"; exit 77; }
done
id munge >/dev/null 2>&1 || { echo "skip: no user munge (package munge)"; exit 77; }

T=$(mktemp -d /tmp/rmpi-slurm.XXXXXX)
chmod 755 "$T"
pids=""
# slurmd's step daemons (slurmstepd) are no children of ours: the daemons run with
# RAILMPI_SLURM_TEST=$T in their environment, which the stepds inherit, and are found by it
ours() {
  for e in /proc/[0-9]*/environ; do
    tr '\0' '\n' 2>/dev/null <"$e" | grep -qx "RAILMPI_SLURM_TEST=$T" && { p=${e#/proc/}; echo "${p%/environ}"; }
  done
}
stop() {
  [ -f "$T/slurm.conf" ] && SLURM_CONF=$T/slurm.conf scancel --quiet --user=root 2>/dev/null
  pids="$pids $(ours)"
  for p in $pids; do kill "$p" 2>/dev/null; done
  for _ in $(seq 50); do
    left=""; for p in $pids; do kill -0 "$p" 2>/dev/null && left="$left $p"; done
    [ -z "$left" ] && break; sleep 0.1
  done
  for p in $left; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$T"
}
trap stop EXIT
trap 'exit 130' INT TERM
fail() {
  echo "FAIL: $*"
  for f in slurmctld.log slurmd.log; do [ -s "$T/$f" ] && { echo "--- $f:"; tail -20 "$T/$f"; }; done
  exit 1
}

# munged of our own: its own key, socket and files under $T, as user munge
# (its runtime directory, which holds the socket, must be owned by munge and open to all)
mkdir -p "$T/munge" "$T/munge-run"
dd if=/dev/urandom of="$T/munge/key" bs=1024 count=1 status=none
chown -R munge:munge "$T/munge" "$T/munge-run"
chmod 700 "$T/munge"
chmod 755 "$T/munge-run"
chmod 400 "$T/munge/key"
sock=$T/munge-run/sock
runuser -u munge -- env RAILMPI_SLURM_TEST="$T" munged --key-file="$T/munge/key" --socket="$sock" --pid-file="$T/munge-run/pid" \
    --log-file="$T/munge/log" --seed-file="$T/munge/seed" --foreground 2>"$T/munged.err" &
pids="$pids $!"
for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || fail "munged did not start: $(tail -2 "$T/munged.err")"

# four free TCP ports: slurmctld, slurmd, and srun's range
read -r pctl pd psrun <<<"$(python3 -c 'import socket
s=[socket.socket() for _ in range(3)]
[x.bind(("127.0.0.1", 0)) for x in s]
print(" ".join(str(x.getsockname()[1]) for x in s))')"
host=$(hostname)
node=$(slurmd -C | head -1)
mkdir -p "$T/state" "$T/spool"
cat >"$T/slurm.conf" <<CONF
ClusterName=rmpitest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$pctl
SlurmdPort=$pd
SrunPortRange=$psrun-$((psrun + 20))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
MpiDefault=none
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
$node
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
export SLURM_CONF=$T/slurm.conf
RAILMPI_SLURM_TEST=$T slurmctld -D -i >/dev/null 2>&1 &
pids="$pids $!"
RAILMPI_SLURM_TEST=$T slurmd -D >/dev/null 2>&1 &
pids="$pids $!"
up=0
for _ in $(seq 100); do
  sinfo -h -o %T 2>/dev/null | grep -qE '^idle' && { up=1; break; }
  sleep 0.2
done
[ $up = 1 ] || fail "the node did not come up (sinfo: $(sinfo -h 2>&1 | head -2))"
echo "slurm up after $SECONDS s"

# srun -O: 4 tasks on a machine with fewer cores
# (in the background: a signal to this script is handled at once, not after srun ends)
run() { timeout 60 srun -O -n 4 "$@" >"$T/out" 2>&1 & wait $!; rc=$?; out=$(cat "$T/out"); echo "$out"; }
mpis=$(srun --mpi=list 2>&1)
for mpi in pmi2 pmix; do
  echo "$mpis" | grep -q "$mpi" || { echo "note: this Slurm has no mpi/$mpi plugin; not tested"; continue; }
  [ $mpi = pmix ] && [ "$have_pmix" != 1 ] && { echo "note: built without libpmix; --mpi=pmix not tested"; continue; }
  run --mpi=$mpi "$b/examples/ring"
  [ $rc = 0 ] || fail "ring under srun --mpi=$mpi exited $rc"
  echo "$out" | grep -q "over 4 ranks.*ok" || fail "ring under srun --mpi=$mpi: not one job of 4 ranks"
  for p in pt2pt/sendrecv coll/allreduce coll/bcast; do
    run --mpi=$mpi "$b/tests/mpi/$p"
    [ $rc = 0 ] || fail "$p under srun --mpi=$mpi exited $rc"
    echo "$out" | grep -q "No Errors" || fail "$p under srun --mpi=$mpi did not report No Errors"
  done
  # rank 1 exits 3 while the others wait in MPI: srun names task 1's exit code 3 and ends
  # the step. Slurm lets the other tasks run on unless told (-K, or KillOnBadExit=1), for
  # every MPI alike. srun's own status is the highest exit code, or 128 + the signal of a
  # task that died of one (man srun): 3, or 143 when the others were already waiting in
  # MPI_Init's exchange and died of the step's SIGTERM (since RailMPI starts in 10 ms
  # rather than 200 they are; before, they were still loading and exited 1 when the step
  # went away).
  run --mpi=$mpi -K sh -c '[ "$SLURM_PROCID" = 1 ] && exit 3; exec "$0" wait' "$b/tests/launcher/spin"
  { [ $rc = 3 ] || [ $rc = 143 ]; } && echo "$out" | grep -q "task 1: Exited with exit code 3" ||
    fail "a rank's exit 3 under srun --mpi=$mpi -K gave srun status $rc"
  # MPI_Abort: Slurm ends the step (PMI-2 carries no exit code; srun reports failure)
  run --mpi=$mpi "$b/tests/launcher/spin" abort
  [ $rc != 0 ] && [ $rc != 124 ] || fail "MPI_Abort under srun --mpi=$mpi gave srun status $rc"
done
# binding under srun: RMPI_BIND=core binds by node-local rank when Slurm did not bind
# (task/none here), and leaves the tasks alone when srun says it bound them (--cpu-bind)
if [ "$(nproc)" -ge 2 ]; then
  out=$(RMPI_BIND=core:report timeout 60 srun --mpi=pmi2 -n 2 "$b/tests/launcher/bindings" 2>&1)
  [ "$(echo "$out" | grep -cE '^report-bindings: rank [01] on .* bound to core [0-9]+ \(cpus [0-9]+\)$')" = 2 ] ||
    fail "RMPI_BIND=core under srun: $out"
  [ "$(echo "$out" | sed -n 's/^cpus: rank [01] //p' | sort -u | wc -l)" = 2 ] || fail "RMPI_BIND=core under srun: one cpu for both: $out"
  out=$(RMPI_BIND=core:report timeout 60 srun --mpi=pmi2 -n 2 --cpu-bind=cores "$b/tests/launcher/bindings" 2>&1)
  [ "$(echo "$out" | grep -cE '^report-bindings: rank [01] on .* left as Slurm bound it')" = 2 ] ||
    fail "RMPI_BIND=core under srun --cpu-bind=cores: $out"
fi
# which wire: Slurm's mpi/pmi2 serves PMI-1 and PMI-2 on the same PMI_FD; RailMPI must pick
# PMI-2 there (PMI_JOBID), and PMI-1 when forced
run --mpi=pmi2 "$b/tests/launcher/pmi_exchange"
[ $rc = 0 ] || fail "pmi_exchange under srun --mpi=pmi2 exited $rc"
[ "$(echo "$out" | grep -cE '^pmi_exchange: wire 2 rank [0-3] size 4 ')" = 4 ] || fail "srun --mpi=pmi2: not every rank on PMI-2"
[ "$(echo "$out" | grep -cE '^pmi_exchange: rank [0-3] of 4: ok$')" = 4 ] || fail "srun --mpi=pmi2: PMI-2 exchange not ok"
RMPI_PMI=pmi1 run --mpi=pmi2 "$b/tests/launcher/pmi_exchange"
[ "$(echo "$out" | grep -cE '^pmi_exchange: wire 1 rank [0-3] size 4 singleton 0 appnum 0 ')" = 4 ] || fail "srun --mpi=pmi2 with RMPI_PMI=pmi1: not on PMI-1"
[ "$(echo "$out" | grep -cE '^pmi_exchange: rank [0-3] of 4: ok$')" = 4 ] || fail "srun --mpi=pmi2: PMI-1 exchange not ok"
# ports and the name service (MPI_Publish_name / Lookup_name): PMI-2's name-publish/lookup
run --mpi=pmi2 "$b/tests/mpi/dynproc/connect"
[ $rc = 0 ] && echo "$out" | grep -q "No Errors" || fail "dynproc/connect under srun --mpi=pmi2: exit $rc"
if [ "$have_pmix" = 1 ] && echo "$mpis" | grep -q pmix; then
  # Slurm's PMIx server has no name service (22.05): then the failure must name it
  run --mpi=pmix "$b/tests/mpi/dynproc/connect"
  [ $rc = 0 ] || echo "$out" | grep -q "PMIx: the PMIx server .* offers no name service" ||
    fail "dynproc/connect under srun --mpi=pmix: exit $rc without naming the missing name service"
fi
# MPI_Comm_spawn under --mpi=pmi2: Slurm starts the children with a new srun inside the
# job, whose step must share the job's CPUs (SLURM_OVERLAP). Slurm's PMI-2 reports no
# MPI_APPNUM (appnum=-1) and runs Spawn_multiple from a multi-prog file it leaves in /tmp:
# the test's appnum checks fail there, every other check must pass.
ls /tmp >"$T/tmp.before"
SLURM_OVERLAP=1 run --mpi=pmi2 "$b/tests/mpi/dynproc/spawn"
for f in $(ls /tmp | grep -E '^[0-9]+\.[A-Za-z0-9]{6}$' | grep -vxF -f "$T/tmp.before"); do
  grep -q "dynproc/spawn" "/tmp/$f" 2>/dev/null && rm -f "/tmp/$f"
done
other=$(echo "$out" | grep -E 'spawn\.c:[0-9]+:' | grep -viE 'appnum')
[ -z "$other" ] || fail "MPI_Comm_spawn under srun --mpi=pmi2: $other"
echo "$out" | grep -qE 'spawn\.c:[0-9]+:|Errors' || fail "MPI_Comm_spawn under srun --mpi=pmi2 reported nothing (rc $rc)"
# under --mpi=pmix spawn is refused by name
if [ "$have_pmix" = 1 ] && echo "$mpis" | grep -q pmix; then
  run --mpi=pmix "$b/tests/mpi/dynproc/spawn"
  [ $rc != 0 ] || fail "MPI_Comm_spawn under srun --mpi=pmix succeeded"
  echo "$out" | grep -q "MPI_Comm_spawn is not supported under PMIx" || fail "spawn under --mpi=pmix: no message naming PMIx"
fi
# srun without --mpi (MpiDefault=none): refused by name, not four singletons
run "$b/examples/ring"
[ $rc != 0 ] || fail "srun without --mpi ran the ring as singletons"
echo "$out" | grep -q "without a process-manager interface.*--mpi=pmi2" || fail "srun without --mpi: no message naming --mpi=pmi2"
echo "PASS after $SECONDS s"
