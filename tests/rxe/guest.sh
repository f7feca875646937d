#!/bin/bash
# Runs inside the tests/rxe QEMU guest, chrooted into the host root (see init and run.sh):
# creates the soft-RoCE device rxe0 on eth0, shows that libibverbs and libfabric see it, then
# runs RailMPI's programs with 2 ranks over RMPI_NET=ofi, RMPI_OFI_PROVIDER='verbs;ofi_rxm'.
# Every output line starts with "rxe"; one "RXE-TEST: name PASS|FAIL seconds" per step and a
# final "RXE-RESULT: PASS|FAIL" that run.sh looks for.
# usage: guest.sh BUILD_DIR [KEY=VALUE ...]   (extra environment for every rank)
set -u
build=$1
shift
fails=0
now() { date +%s.%N; }
# step NAME TIMEOUT CMD...: run, prefix the output, time it, record the verdict.
step() {
  local name=$1 limit=$2 t0 rc
  shift 2
  case ",${only:-$name}," in *",$name,"*) ;; *) return 1 ;; esac
  t0=$(now)
  timeout -k 5 "$limit" "$@" >/tmp/step.out 2>&1
  rc=$?
  [ -n "${quiet:-}" ] || sed "s/^/rxe $name| /" /tmp/step.out
  local secs
  secs=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
  if [ $rc = 0 ]; then
    echo "RXE-TEST: $name PASS ${secs}s"
  else
    echo "RXE-TEST: $name FAIL ${secs}s (exit $rc)"
    fails=$((fails + 1))
  fi
  return $rc
}
# The same step, but also failing when the output lacks a pattern.
expect() {
  local name=$1 rx=$2
  if ! grep -Eq -- "$rx" /tmp/step.out; then
    echo "RXE-TEST: $name FAIL (output lacks /$rx/)"
    fails=$((fails + 1))
  fi
}

ulimit -l unlimited
step rdma-link 30 rdma link add rxe0 type rxe netdev eth0
step ibv_devices 30 ibv_devices && expect ibv_devices rxe0
quiet=1 step ibv_devinfo 30 ibv_devinfo -v -d rxe0
grep -E 'max_(cqe|qp_wr|mr_size|sge):|active_mtu|port_lid|state:|GID' /tmp/step.out | sed 's/^/rxe ibv_devinfo| /'
# XRC (per-node connections, src/net/ofi/ofi_xrc.c): the device's capability flags as
# ibv_query_device reports them; the pingpong step checks RailMPI's verdict on them.
sed -n '/device_cap_flags/,/device_cap_exp\|max_mr_size\|^[[:space:]]*[a-z_]*:/p' /tmp/step.out | sed 's/^/rxe ibv_devinfo| /'
if grep -A40 device_cap_flags /tmp/step.out | grep -qw XRC; then xrc_dev=yes; else xrc_dev=no; fi
echo "rxe ibv_devinfo| IBV_DEVICE_XRC: $xrc_dev"
quiet=1 step fi_info 60 fi_info -p 'verbs;ofi_rxm' -t FI_EP_RDM && expect fi_info 'verbs;ofi_rxm'
grep -cE '^provider:' /tmp/step.out | sed 's/^/rxe fi_info| endpoints: /'
sed -n '1,6p' /tmp/step.out | sed 's/^/rxe fi_info| /'
if [ $fails != 0 ]; then
  echo "RXE-RESULT: FAIL (no verbs device)"
  exit 1
fi

# No provider named and no FI_UNIVERSE_SIZE: RailMPI must pick verbs;ofi_rxm from its
# capability table (hardware first) and size the universe from the job (ofi_rxm's default
# 256 makes rdma_rxe refuse the endpoint: its CQ is sized from it). Extra KEY=VALUE
# arguments come after (and win).
genv=(-genv RMPI_NET ofi)
only="" script=""
for kv in "$@"; do
  case $kv in
    RXE_ONLY=*) only=${kv#RXE_ONLY=} ;; # comma list of steps to run (debugging)
    RXE_SCRIPT=*) script=${kv#RXE_SCRIPT=} ;; # steps of your own instead (debugging)
    *) genv+=(-genv "${kv%%=*}" "${kv#*=}") ;;
  esac
done
mpx=("$build/bin/mpiexec" -n 2 "${genv[@]}")
echo "rxe: ranks run with:${genv[*]/#/ }"

if [ -n "$script" ]; then
  . "$script"
  echo "RXE-RESULT: $([ $fails = 0 ] && echo PASS || echo "FAIL ($fails failed)") (RXE_SCRIPT)"
  exit 0
fi
# 8 B .. 4 MiB ping-pong, every byte of every message checked; RMPI_REPORT names the rail.
step pingpong 600 "${mpx[@]}" -genv RMPI_REPORT 1 "$build/examples/pingpong" &&
  expect pingpong '4194304' && expect pingpong 'rail ofi:rxe0: up' &&
  if [ $xrc_dev = no ]; then
    expect pingpong 'rail ofi:rxe0: xrc: no \(device rxe0 lacks IBV_DEVICE_XRC'
  else
    expect pingpong 'rail ofi:rxe0-xrc: xrc: yes'
  fi
step latency 600 "${mpx[@]}" "$build/bench/pt2pt" -t latency -m 0:65536 -i 200
# 0 B .. 16 MiB (4 MiB among them), pairs, ring and unexpected, every byte and guard checked.
step sizes-read 900 "${mpx[@]}" -genv RMPI_RNDV_MODE read "$build/tests/mpi/pt2pt/sizes" &&
  expect sizes-read 'No Errors'
step sizes-write 900 "${mpx[@]}" -genv RMPI_RNDV_MODE write "$build/tests/mpi/pt2pt/sizes" &&
  expect sizes-write 'No Errors'
# Rendezvous from reused, freed and unmapped buffers: pinned pages must not go stale.
step regcache 600 "${mpx[@]}" -genv RMPI_REPORT 1 "$build/tests/mpi/pt2pt/regcache" &&
  expect regcache 'No Errors'

if [ $fails = 0 ]; then
  echo "RXE-RESULT: PASS"
else
  echo "RXE-RESULT: FAIL ($fails failed)"
fi
