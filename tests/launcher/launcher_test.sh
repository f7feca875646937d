#!/bin/bash
# Launcher tests: launcher_test.sh CASE MPIEXEC PMI_EXCHANGE [SPIN [CPUS]]
# Each case runs mpiexec (or hydra, or the helper alone) and checks exit status, output and
# elapsed time. Exit 0 = pass, 77 = skipped, anything else = failure.
set -u
case_name=$1 MPIEXEC=$2 PMIX=$3 SPIN=${4:--} CPUS=${5:--}
HERE=$(cd "$(dirname "$0")" && pwd)
AGENT="/bin/sh $HERE/fake_agent.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/rmpi-launcher.XXXXXX")
trap 'rm -rf "$T"' EXIT
unset PMI_FD PMI_PORT PMI_ID PMI_RANK PMI_SIZE

# a failing case leaves no job behind: its ranks follow a killed mpiexec
fail() { [ -n "${mpx:-}" ] && kill -9 "$mpx" 2>/dev/null; echo "FAIL ($case_name): $*"; for f in out err; do [ -s "$T/$f" ] && { echo "--- std$f:"; head -40 "$T/$f"; }; done; exit 1; }
now_ms() { date +%s%3N; }
# run CMD...: sets rc and ms (elapsed), output in $T/out and $T/err
run() {
  local t0; t0=$(now_ms)
  "$@" >"$T/out" 2>"$T/err"
  rc=$?
  ms=$(( $(now_ms) - t0 ))
}
expect_rc() { [ "$rc" = "$1" ] || fail "exit status $rc, expected $1"; }
expect_in() { grep -qE -- "$2" "$T/$1" || fail "std$1 lacks /$2/"; }
expect_not_in() { ! grep -qE -- "$2" "$T/$1" || fail "std$1 has /$2/"; }
expect_fast() { [ "$ms" -lt "$1" ] || fail "took ${ms} ms, limit $1 ms"; }
count() { grep -cE -- "$2" "$T/$1"; }
# empty out and err before a job started with &: its own redirection truncates them only when
# the forked shell runs, and a wait_up that ran first would count the last job's "up" lines
fresh_out() { : >"$T/out"; : >"$T/err"; }
# binding: this shell's CPUs (mpiexec's), and what a rank prints of its own
MINE=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
show='echo "$PMI_RANK $(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)"'
need_cpus() { [ "$(nproc)" -ge "$1" ] || { echo "SKIP: needs $1 CPUs, this process may use $(nproc)"; exit 77; }; }
need_cpus_prog() { [ "$CPUS" != - ] || { echo "SKIP: the MPI library is not built"; exit 77; }; }
# cpus_of R: the CPU list rank R printed (lines "R LIST" or "cpus: rank R LIST")
cpus_of() { sed -n "s/^\(cpus: rank \)\{0,1\}$1 //p" "$T/out"; }
# two ranks on one CPU each, not the same one
expect_one_core_each() {
  local a b; a=$(cpus_of 0) b=$(cpus_of 1)
  echo "$a" | grep -qE '^[0-9]+$' && echo "$b" | grep -qE '^[0-9]+$' || fail "$1: ranks on cpus \"$a\" and \"$b\", not one each"
  [ "$a" != "$b" ] || fail "$1: both ranks on cpu $a"
}
# every one of N ranks on all of mpiexec's CPUs
expect_unbound() {
  for r in $(seq 0 $(($2 - 1))); do [ "$(cpus_of $r)" = "$MINE" ] || fail "$1: rank $r on cpus \"$(cpus_of $r)\", not $MINE"; done
}
need_spin() { [ "$SPIN" != - ] || { echo "SKIP: the MPI library is not built"; exit 77; }; }
# wait_up N: until N ranks printed "spin: rank R pid P up" (30 s at most: a loaded machine); sets pids
wait_up() {
  for _ in $(seq 300); do [ "$(count out '^spin: rank [0-9]+ pid [0-9]+ up$')" -ge "$1" ] && break; sleep 0.1; done
  pids=$(sed -n 's/^spin: rank [0-9]* pid \([0-9]*\) up$/\1/p' "$T/out")
  [ "$(echo $pids | wc -w)" = "$1" ] || fail "expected $1 ranks up"
}
# alive PIDS...: those that still run (a zombie waiting for its reaper does not count)
alive() { for p in "$@"; do [ -e /proc/$p ] && ! grep -q '^[0-9]* ([^)]*) Z' /proc/$p/stat 2>/dev/null && echo $p; done; }
# the shared-memory segments of the job of mpiexec pid $1 left in /dev/shm
shm_left() { ls /dev/shm 2>/dev/null | grep -E "^rmpi-kvs_.*_$1_[0-9]+-"; }

case $case_name in
exit_code)
  run "$MPIEXEC" -n 3 true
  expect_rc 0
  # rank 1 fails first with 3; rank 0 would exit 9 later but must be ended by then
  run "$MPIEXEC" -n 3 sh -c 'case $PMI_RANK in 1) exit 3;; 0) sleep 2; exit 9;; *) exec sleep 20;; esac'
  expect_rc 3
  expect_in err "^mpiexec: rank 1 \(pid [0-9]+ on [^)]+\) exited with code 3"
  expect_not_in err "rank [02] .*exited"
  expect_fast 1800
  # program that cannot be started: 127 with a message naming the rank
  run "$MPIEXEC" -n 2 /nonexistent/program
  expect_rc 127
  expect_in err "rank [01] cannot run /nonexistent/program"
  run "$MPIEXEC" --help
  expect_rc 0
  expect_in out "^Usage: mpiexec"
  run "$MPIEXEC" --no-such-option true
  expect_rc 2
  expect_in err "unknown option --no-such-option"
  ;;
signal)
  # rank 2 dies by SIGSEGV; rank 0 ignores SIGTERM so only SIGKILL (after 3 s) ends it
  run "$MPIEXEC" -n 3 sh -c 'case $PMI_RANK in 2) sleep 0.3; kill -SEGV $$;; 0) trap "" TERM; exec sleep 30;; *) exec sleep 30;; esac'
  expect_rc 139
  expect_in err "^mpiexec: rank 2 \(pid [0-9]+ on [^)]+\) was killed by signal 11 \(SIGSEGV\)"
  expect_fast 8000
  [ "$ms" -ge 3000 ] || fail "ended after ${ms} ms: rank 0 ignores SIGTERM, so SIGKILL should only come after 3 s"
  ;;
abort)
  run "$MPIEXEC" -n 3 "$PMIX" abort 7
  expect_rc 7
  expect_in err "^mpiexec: rank 1 called abort \(exit code 7\); ending the job"
  expect_in err "pmi_exchange: test abort"
  expect_fast 5000
  ;;
nofinalize)
  run "$MPIEXEC" -n 2 "$PMIX" nofinalize
  expect_rc 1
  expect_in err "rank 0 \(pid [0-9]+ on [^)]+\) exited with code 0 without calling PMI finalize"
  # a program that never speaks PMI may exit 0 without it
  run "$MPIEXEC" -n 2 echo hi
  expect_rc 0
  [ "$(count out '^hi$')" = 2 ] || fail "expected two lines 'hi'"
  ;;
timeout)
  run "$MPIEXEC" --timeout 1 -n 2 sleep 20
  expect_rc 124
  expect_in err "timeout 1 s"
  expect_fast 5000
  ;;
sigint)
  "$MPIEXEC" -n 2 sh -c 'trap "echo got-int-$PMI_RANK; exit 5" INT; echo up; while :; do sleep 0.1; done' >"$T/out" 2>"$T/err" &
  pid=$!
  for _ in $(seq 50); do [ "$(count out '^up$')" = 2 ] && break; sleep 0.1; done
  kill -INT $pid
  wait $pid
  rc=$?
  expect_rc 130
  expect_in err "received SIGINT"
  expect_in out "^got-int-0$"
  expect_in out "^got-int-1$"
  ;;
genv)
  export XFROMENV=fromenv
  run "$MPIEXEC" -n 2 -genv FOO bar -genv BAZ=qux -env SP "a b" -x XFROMENV -x XSET=7 \
      sh -c 'echo "R$PMI_RANK:$FOO:$BAZ:$SP:$XFROMENV:$XSET"'
  expect_rc 0
  expect_in out "^R0:bar:qux:a b:fromenv:7$"
  expect_in out "^R1:bar:qux:a b:fromenv:7$"
  mkdir "$T/wd"
  run "$MPIEXEC" -n 1 -wdir "$T/wd" pwd
  expect_rc 0
  expect_in out "^$T/wd$"
  # the same through a launch agent: variables travel inside the remote command string
  run "$MPIEXEC" -n 2 --host hostA,hostB --agent "$AGENT" --pmi-addr 127.0.0.1 -genv FOO "it's \$HOME" \
      -x XFROMENV sh -c 'echo "R$PMI_RANK@$FAKE_HOST:$FOO:$XFROMENV"'
  expect_rc 0
  expect_in out "^R0@hostA:it's \\\$HOME:fromenv$"
  expect_in out "^R1@hostB:it's \\\$HOME:fromenv$"
  run "$MPIEXEC" -n 1 --host hostA --agent "$AGENT" --pmi-addr 127.0.0.1 -wdir "$T/wd" pwd
  expect_in out "^$T/wd$"
  ;;
prefix)
  # every rank writes lines in three pieces; no line may mix ranks or lose its prefix
  run "$MPIEXEC" -n 3 --prepend-rank sh -c 'i=0; while [ $i -lt 200 ]; do printf "r%s-" $PMI_RANK; printf "x%s" $i; printf "\n"; i=$((i+1)); done; echo "err$PMI_RANK" >&2; printf tail$PMI_RANK'
  expect_rc 0
  for r in 0 1 2; do
    [ "$(count out "^\[$r\] r$r-x[0-9]+$")" = 200 ] || fail "rank $r: expected 200 clean '[$r] r$r-xN' lines"
    expect_in out "^\[$r\] tail$r$"
    expect_in err "^\[$r\] err$r$"
  done
  [ "$(wc -l <"$T/out")" = 603 ] || fail "expected 603 stdout lines, got $(wc -l <"$T/out")"
  run "$MPIEXEC" -n 2 -l echo hi
  [ "$(count out '^\[[01]\] hi$')" = 2 ] || fail "-l did not prefix"
  ;;
hostfile)
  cat >"$T/hosts" <<'EOF'
# test hostfile
hostA slots=2   # two slots
hostB:1

   localhost
EOF
  run "$MPIEXEC" -f "$T/hosts" -n 5 --agent "$AGENT" --pmi-addr 127.0.0.1 \
      sh -c 'echo "$PMI_RANK ${FAKE_HOST:-local} ${PMI_PORT:+port}${PMI_FD:+fd}"'
  expect_rc 0
  sort "$T/out" >"$T/sorted"
  printf '0 hostA port\n1 hostA port\n2 hostB port\n3 local fd\n4 hostA port\n' | cmp -s - "$T/sorted" ||
    fail "placement differs: $(tr '\n' ';' <"$T/sorted")"
  # without -n: one rank per slot
  run "$MPIEXEC" --hostfile "$T/hosts" --agent "$AGENT" --pmi-addr 127.0.0.1 sh -c 'echo r$PMI_SIZE'
  [ "$(count out '^r4$')" = 4 ] || fail "expected 4 ranks from 4 slots"
  printf 'hostA slots=two\n' >"$T/bad"
  run "$MPIEXEC" -f "$T/bad" true
  expect_rc 2
  expect_in err "bad:1: slots= needs a number"
  # PMI over TCP (remote ranks) and a socketpair (local rank) in one job
  run "$MPIEXEC" -f "$T/hosts" -n 4 --agent "$AGENT" --pmi-addr 127.0.0.1 "$PMIX"
  expect_rc 0
  [ "$(count out '^pmi_exchange: rank [0-3] of 4: ok$')" = 4 ] || fail "TCP PMI exchange did not report 4 oks"
  ;;
pmi4)
  run "$MPIEXEC" -n 4 "$PMIX"
  expect_rc 0
  [ "$(count out '^pmi_exchange: rank [0-3] of 4: ok$')" = 4 ] || fail "expected 4 ok lines"
  [ "$(count out 'singleton 0 appnum 0 kvsname kvs_[^ ]+_[0-9]+_0$')" = 4 ] || fail "kvsname or singleton flag wrong"
  run "$MPIEXEC" -n 2 "$PMIX" long
  expect_rc 0
  [ "$(count out ': ok$')" = 2 ] || fail "long values: expected 2 ok lines"
  ;;
spawn)
  run "$MPIEXEC" -n 2 "$PMIX" spawn
  expect_rc 0
  [ "$(count out '^pmi_exchange: rank [01] of 2: ok$')" = 2 ] || fail "expected 2 parent ok lines"
  [ "$(count out '^pmi_exchange: child [0-2] of 3: ok$')" = 3 ] || fail "expected 3 child ok lines"
  [ "$(count out 'kvsname kvs_[^ ]+_[0-9]+_1$')" = 3 ] || fail "the spawned world's kvsname is not its own"
  # spawned processes go to the hosts mpiexec knows, through the launch agent
  printf 'localhost slots=1\nhostB slots=2\nhostC slots=2\n' >"$T/hosts"
  run "$MPIEXEC" -v -f "$T/hosts" -n 2 --agent "$AGENT" --pmi-addr 127.0.0.1 "$PMIX" spawn
  expect_rc 0
  [ "$(count out '^pmi_exchange: child [0-2] of 3: ok$')" = 3 ] || fail "remote spawn: expected 3 child ok lines"
  [ "$(count err '^mpiexec: rank [2-4] on host[BC] \(remote\)')" = 3 ] || fail "remote spawn: children not started through the agent"
  # a spawned process that aborts ends every world, with a message naming it
  run timeout 20 "$MPIEXEC" -n 2 "$PMIX" spawn abort
  expect_rc 5
  expect_in err "^mpiexec: rank 2 of spawned world 1 called abort \\(exit code 5\\); ending the job"
  expect_fast 8000
  ;;
singleton)
  run "$PMIX"
  expect_rc 0
  expect_in out "^pmi_exchange: wire 0 rank 0 size 1 singleton 1 "
  expect_in out "^pmi_exchange: rank 0 of 1: ok$"
  ;;
hydra)
  HYDRA=/usr/bin/mpiexec.hydra
  [ -x $HYDRA ] || { echo "SKIP: $HYDRA is absent"; exit 77; }
  run timeout 30 $HYDRA -n 4 "$PMIX"
  expect_rc 0
  [ "$(count out '^pmi_exchange: rank [0-3] of 4: ok$')" = 4 ] || fail "hydra (PMI_FD): expected 4 ok lines"
  run timeout 30 $HYDRA -pmi-port -n 2 "$PMIX"
  expect_rc 0
  [ "$(count out '^pmi_exchange: rank [01] of 2: ok$')" = 2 ] || fail "hydra (PMI_PORT): expected 2 ok lines"
  run timeout 30 $HYDRA -n 3 "$PMIX" abort 9
  expect_rc 9
  ;;
auth)
  # a stranger who learns the PMI port of a remote rank that has not connected yet
  export ATTACK_MARK=$T/pwned
  ATK="/bin/bash $HERE/attack_agent.sh"
  run timeout 30 "$MPIEXEC" -n 1 --host hostA --agent "$ATK" --pmi-addr 127.0.0.2 true
  sleep 0.5
  [ -e "$ATTACK_MARK" ] && fail "a connection without the job key made mpiexec spawn a program"
  expect_in out "^probe 127.0.0.1: closed$"
  expect_in out "^attack got: cmd=challenge version=1 nonce=[0-9a-f]{32}$"
  expect_in out "^attack got: cmd=error rc=-1 msg=authenticate_first$"
  expect_not_in out "spawn_result"
  expect_in err "before proving the job key"
  ATTACK_MAC=$(printf '%064d' 0) run timeout 30 "$MPIEXEC" -n 1 --host hostA --agent "$ATK" --pmi-addr 127.0.0.1 true
  sleep 0.5
  [ -e "$ATTACK_MARK" ] && fail "a wrong answer to the challenge made mpiexec spawn a program"
  expect_in out "^attack got: cmd=error rc=-1 msg=authentication_failed$"
  # a flood of idle connections does not lock out a rank that connects after it
  ATTACK_HOST=hostA ATTACK_FLOOD=300 run timeout 30 "$MPIEXEC" -n 2 --host hostA,hostB --agent "$ATK" \
      --pmi-addr 127.0.0.1 sh -c '[ "$PMI_RANK" = 1 ] && sleep 1; exec "$0" dup' "$PMIX"
  expect_rc 0
  expect_in out '^pmi_exchange: rank 1 of 2: ok$'
  # the first connection that proves a rank's id owns it; a second claim is refused
  run timeout 30 "$MPIEXEC" -n 2 --host hostA,hostB --agent "$AGENT" --pmi-addr 127.0.0.1 "$PMIX" dup
  expect_rc 0
  [ "$(count out '^pmi_exchange: rank [01]: second claim got: cmd=error rc=-1 msg=unknown_or_taken_pmiid$')" = 2 ] ||
    fail "a second connection claiming a connected rank's id was not refused"
  [ "$(count out '^pmi_exchange: rank [01] of 2: ok$')" = 2 ] || fail "expected 2 ok lines"
  ;;
jobkey)
  # every rank, local or remote, gets one random key per job, and never on a command line
  RAILMPI_JOB_KEY=$(printf '%064d' 7) run "$MPIEXEC" -v -n 3 --host localhost,hostB,hostC --agent "$AGENT" \
      --pmi-addr 127.0.0.1 -genv RMPI_FOO bar sh -c 'echo "K=$RAILMPI_JOB_KEY"; ps -o args= -p $$'
  expect_rc 0
  [ "$(count out '^K=[0-9a-f]{64}$')" = 3 ] || fail "not every rank got a 64-digit job key"
  [ "$(grep '^K=' "$T/out" | sort -u | wc -l)" = 1 ] || fail "the ranks got different keys"
  key=$(grep -m1 '^K=' "$T/out" | cut -c3-)
  [ "$key" != "$(printf '%064d' 7)" ] || fail "the key came from mpiexec's environment"
  expect_not_in err "$key"
  grep -v '^K=' "$T/out" | grep -q "$key" && fail "the key shows on a rank's command line"
  expect_in err "remote.*IFS= read -r RAILMPI_JOB_KEY"
  run "$MPIEXEC" -n 1 sh -c 'echo "K=$RAILMPI_JOB_KEY"'
  [ "$(grep '^K=' "$T/out" | cut -c3-)" != "$key" ] || fail "two jobs got the same key"
  RAILMPI_JOB_KEY=$key run "$MPIEXEC" -n 1 -x RAILMPI_JOB_KEY true
  expect_rc 2
  expect_in err "RAILMPI_JOB_KEY is made by mpiexec"
  ;;
badspawn)
  # malformed spawn commands from a rank: an error line, the connection closed, no crash
  spawn_try() {
    run timeout 20 "$MPIEXEC" -n 1 bash -c 'trap "" PIPE; printf "$1" >&$PMI_FD; while IFS= read -r -t 5 l <&$PMI_FD; do echo "got $l"; done' x "$1"
    [ "$rc" -lt 128 ] || fail "mpiexec died with status $rc on: $1"
    expect_in out "^got cmd=error rc=-1 msg=spawn_"
    expect_not_in out "spawn_result rc=0"
  }
  H='mcmd=spawn\nnprocs=1\nexecname=true\ntotspawns=1\nspawnssofar=1\n'
  spawn_try "${H}arg1=x\nendcmd\n"
  spawn_try "${H}preput_num=1\narg1=x\nendcmd\n"
  spawn_try "${H}preput_key_0=k\npreput_val_0=v\nendcmd\n"
  spawn_try "${H}argcnt=1\n$(for i in $(seq 1 200); do printf 'arg%d=xxxxxxxx\\n' $i; done)endcmd\n"
  spawn_try "${H}argcnt=99999999\nendcmd\n"
  spawn_try "${H}preput_num=1\npreput_key_0=k\npreput_key_1=k\nendcmd\n"
  spawn_try "mcmd=spawn\nnprocs=99999999\nexecname=true\ntotspawns=1\nendcmd\n"
  # a well-formed one still works
  run timeout 20 "$MPIEXEC" -n 1 bash -c 'printf "$1" >&$PMI_FD; IFS= read -r -t 5 l <&$PMI_FD; echo "got $l"' x \
      "${H}argcnt=1\narg1=spawned-ok\npreput_num=1\npreput_key_0=k\npreput_val_0=v\ninfo_num=0\nendcmd\n"
  expect_in out "^got cmd=spawn_result rc=0$"
  ;;
noread)
  # a rank that sends commands and never reads the replies must not freeze mpiexec
  run timeout -k 5 20 "$MPIEXEC" --timeout 3 -n 1 bash -c 'trap "" PIPE; while :; do printf "cmd=get_maxes\ncmd=get_maxes\ncmd=get_maxes\ncmd=get_maxes\n" >&$PMI_FD 2>/dev/null || break; done; sleep 30'
  expect_rc 124
  expect_in err "rank 0 does not read its PMI replies"
  expect_in err "timeout 3 s"
  expect_fast 8000
  # one whose replies are larger than what it sends; the job ends: its PMI connection is gone
  run timeout -k 5 20 "$MPIEXEC" --timeout 20 -n 1 bash -c 'trap "" PIPE; printf "cmd=init pmi_version=1\ncmd=put key=k value=%01000d\n" 0 >&$PMI_FD; while :; do printf "cmd=get key=k\n%.0s" $(seq 200) >&$PMI_FD 2>/dev/null || break; done; sleep 30'
  expect_rc 1
  expect_in err "rank 0 does not read its PMI replies"
  expect_in err "closed its PMI connection before finalize"
  expect_fast 8000
  ;;
sigabort)
  # rank 0 aborts (as a rank does that lost a peer), and only then is rank 1's death by a
  # signal seen: the death, the cause, is what the job reports
  run timeout 30 "$MPIEXEC" -n 2 bash -c 'if [ $PMI_RANK = 0 ]; then printf "cmd=init pmi_version=1\ncmd=abort exitcode=1\n" >&$PMI_FD; touch "$1/aborted"; sleep 10; else while [ ! -e "$1/aborted" ]; do sleep 0.01; done; kill -9 $$; fi' x "$T"
  expect_rc 137
  expect_in err "^mpiexec: rank 1 \(pid [0-9]+ on [^)]+\) was killed by signal 9 \(SIGKILL\); ending the job"
  expect_in err "rank 0 called abort just before"
  expect_not_in err "rank 0 called abort \(exit code"
  expect_fast 5000
  # a remote rank's signal comes back as its agent's exit code 128+N (ssh, a shell)
  run timeout 30 "$MPIEXEC" -n 2 --host hostA,hostB --agent "/bin/sh $HERE/fake_agent.sh fork" --pmi-addr 127.0.0.1 \
      sh -c 'if [ "$PMI_RANK" = 1 ]; then sleep 0.3; kill -9 $$; fi; exec sleep 30'
  expect_rc 137
  expect_in err "^mpiexec: rank 1 \(on hostB, launch agent pid [0-9]+\) was killed by signal 9 \(SIGKILL\) \(its launch agent"
  # an MPI job over tcp: a rank killed from outside is always the one reported
  need_spin
  for i in 1 2 3 4; do
    fresh_out
    "$MPIEXEC" -n 4 -genv RMPI_NET tcp "$SPIN" ring >"$T/out" 2>"$T/err" &
    mpx=$!
    wait_up 4
    kill -9 "$(sed -n 's/^spin: rank 2 pid \([0-9]*\) up$/\1/p' "$T/out")"
    wait $mpx
    rc=$?
    expect_rc 137
    expect_in err "^mpiexec: rank 2 \(pid [0-9]+ on [^)]+\) was killed by signal 9 \(SIGKILL\)"
    expect_not_in err "called abort \(exit code"
  done
  ;;
gone)
  # mpiexec killed by SIGKILL: its ranks must end within 10 s, local ones (parent-death
  # signal) and remote ones (their PMI connection closes; the agent's child is not the agent)
  need_spin
  for hosts in localhost hostA,hostB,hostC,hostD; do
    fresh_out
    "$MPIEXEC" -n 4 --host $hosts --agent "/bin/sh $HERE/fake_agent.sh fork" --pmi-addr 127.0.0.1 "$SPIN" wait >"$T/out" 2>"$T/err" &
    mpx=$!
    wait_up 4
    sleep 0.5
    kill -9 $mpx
    for _ in $(seq 100); do [ -z "$(alive $pids)" ] && break; sleep 0.1; done
    [ -z "$(alive $pids)" ] || { kill -9 $pids 2>/dev/null; fail "ranks $(alive $pids | tr '\n' ' ')still run 10 s after mpiexec was killed (hosts $hosts)"; }
  done
  ;;
shmleak)
  # rank 2 dies inside MPI_Init after the others made their shared-memory segments
  need_spin
  "$MPIEXEC" -n 4 sh -c '[ "$PMI_RANK" = 2 ] && exec "$1" initdie; exec "$2" wait' x "$PMIX" "$SPIN" >"$T/out" 2>"$T/err" &
  mpx=$!
  wait $mpx
  rc=$?
  expect_rc 137
  [ -z "$(shm_left $mpx)" ] || fail "segments left in /dev/shm: $(shm_left $mpx | tr '\n' ' ')"
  # rank 0 killed after creating a communicator's node segment, before every rank mapped it
  # (the name is unlinked only then): mpiexec removes it by the job's prefix
  "$MPIEXEC" -n 2 "$SPIN" segkill >"$T/out" 2>"$T/err" &
  mpx=$!
  wait $mpx
  rc=$?
  expect_rc 137
  wait_up 2
  expect_in out "^spin: segment seen"
  [ -z "$(shm_left $mpx)" ] || fail "segments left in /dev/shm after a node segment's creator was killed: $(shm_left $mpx | tr '\n' ' ')"
  [ -z "$(ls /dev/shm | grep -E "^rmpi-seg-($(echo $pids | tr ' ' '|'))-")" ] || fail "node segments named without the job's prefix left in /dev/shm"
  # mpiexec itself killed while the ranks are inside MPI_Init: ranks that outlive it (on
  # other hosts: the agent's children) remove their own
  "$MPIEXEC" -n 4 --host hostA,hostB,hostC,hostD --agent "/bin/sh $HERE/fake_agent.sh fork" --pmi-addr 127.0.0.1 \
      sh -c '[ "$PMI_RANK" = 2 ] && exec "$1" initdie stall; exec "$2" wait' x "$PMIX" "$SPIN" >"$T/out" 2>"$T/err" &
  mpx=$!
  for _ in $(seq 100); do [ "$(shm_left $mpx | wc -l)" -ge 3 ] && break; sleep 0.1; done
  staller=$(sed -n 's/^pmi_exchange: rank 2 pid \([0-9]*\) stalls$/\1/p' "$T/out")
  [ "$(shm_left $mpx | wc -l)" -ge 3 ] || { kill -9 $staller; fail "the ranks made no shared-memory segments; the test proves nothing"; }
  kill -9 $mpx
  wait $mpx 2>/dev/null
  for _ in $(seq 100); do [ -z "$(shm_left $mpx)" ] && break; sleep 0.1; done
  kill -9 $staller
  [ -z "$(shm_left $mpx)" ] || fail "segments left in /dev/shm after mpiexec was killed: $(shm_left $mpx | tr '\n' ' ')"
  ;;
spellings)
  # what users bring from hydra and Open MPI; FAKE_HOST tells where a rank "is"
  where='echo "$PMI_RANK ${FAKE_HOST:-local}"'
  placed() { sort "$T/out" | tr '\n' ';'; }
  for ppn in "-ppn 2" "-perhost 2" "--npernode 2" "-npernode 2" "-N 2" "--ppn=2"; do
    run "$MPIEXEC" $ppn -n 5 --host hostA,hostB --agent "$AGENT" --pmi-addr 127.0.0.1 sh -c "$where"
    expect_rc 0
    [ "$(placed)" = "0 hostA;1 hostA;2 hostB;3 hostB;4 hostA;" ] || fail "$ppn: placement $(placed)"
  done
  # -ppn without -n: that many per host
  run "$MPIEXEC" -ppn 1 -hosts hostA,hostB --agent "$AGENT" --pmi-addr 127.0.0.1 sh -c "$where"
  [ "$(placed)" = "0 hostA;1 hostB;" ] || fail "-ppn 1 on 2 hosts: placement $(placed)"
  printf 'hostA slots=2\nhostB:1\n' >"$T/hosts"
  for hf in "-hostfile $T/hosts" "--hostfile $T/hosts" "-machinefile $T/hosts" "--machinefile=$T/hosts" "-f $T/hosts"; do
    run "$MPIEXEC" $hf -np 4 --agent "$AGENT" --pmi-addr 127.0.0.1 sh -c "$where"
    [ "$(placed)" = "0 hostA;1 hostA;2 hostB;3 hostA;" ] || fail "$hf: placement $(placed)"
  done
  run "$MPIEXEC" --np 3 --oversubscribe --allow-run-as-root sh -c 'echo "r$PMI_SIZE"'
  expect_rc 0
  [ "$(count out '^r3$')" = 3 ] || fail "--np 3 --oversubscribe: expected 3 ranks"
  # environment to remote ranks: an agent with an empty environment shows what travels
  EMPTY="env -i /bin/sh $HERE/fake_agent.sh"
  export GVA=a GVB=b GVC=c
  show='echo "R$PMI_RANK:${GVA-}:${GVB-}:${GVC-}:${RMPI_SPELL-}"'
  RMPI_SPELL=k run "$MPIEXEC" -n 1 --host hostA --agent "$EMPTY" --pmi-addr 127.0.0.1 sh -c "$show"
  expect_in out "^R0::::k$"
  RMPI_SPELL=k run "$MPIEXEC" -n 1 --host hostA --agent "$EMPTY" --pmi-addr 127.0.0.1 -genvall sh -c "$show"
  expect_in out "^R0:a:b:c:k$"
  run "$MPIEXEC" -n 1 --host hostA --agent "$EMPTY" --pmi-addr 127.0.0.1 -genvlist GVA,GVC sh -c "$show"
  expect_in out "^R0:a::c:$"
  run "$MPIEXEC" -n 1 --host hostA --agent "$EMPTY" --pmi-addr 127.0.0.1 -envlist GVB -x GVC=z sh -c "$show"
  expect_in out "^R0::b:z:$"
  mkdir "$T/wd"
  for wd in "-wdir $T/wd" "--wdir=$T/wd" "-wd $T/wd"; do
    run "$MPIEXEC" -n 1 $wd pwd
    expect_in out "^$T/wd$"
  done
  # what it does not know: one line naming the option and mpiexec -h, exit 2
  for bad in "--mca btl tcp" "-genvnone" "--cpus-per-proc 2" "-ppn 0"; do
    run "$MPIEXEC" $bad true
    expect_rc 2
    [ "$(wc -l <"$T/err")" = 1 ] || fail "$bad: expected one line on stderr, got $(wc -l <"$T/err")"
  done
  run "$MPIEXEC" --mca btl tcp true
  expect_in err "^mpiexec: unknown option --mca; see mpiexec -h\.$"
  run "$MPIEXEC" -genvlist "A,1B" true
  expect_rc 2
  expect_in err '"1B" is not a valid variable name'
  ;;
pmi2)
  # the PMI-2 client against a scripted server that speaks Slurm's mpi/pmi2 wire
  SRV="python3 $HERE/pmi2_server.py"
  run timeout 30 $SRV good 4 "$PMIX"
  expect_rc 0
  [ "$(count out '^pmi_exchange: wire 2 rank [0-3] size 4 singleton 0 appnum 0 kvsname pmi2test.0$')" = 4 ] ||
    fail "the ranks did not all start on PMI-2 with the server's jobid"
  [ "$(count out '^pmi_exchange: rank [0-3] of 4: ok$')" = 4 ] || fail "PMI-2 exchange: expected 4 ok lines"
  run timeout 30 $SRV good 2 "$PMIX" long
  expect_rc 0
  [ "$(count out '^pmi_exchange: rank [01] of 2: ok$')" = 2 ] || fail "PMI-2 long values: expected 2 ok lines"
  # spawn is refused by this server, which echoes what it parsed of the frame; the name
  # service that follows must work
  run timeout 30 $SRV good 2 "$PMIX" spawn
  expect_in err "could not spawn the processes \(rc=14, not served here \(ncmds=2 preput=PARENT_ROOT_PORT_NAME subcmds=2 maxprocs=1,2 argv=child,A,two words,child,B\)\)"
  expect_not_in err "publish failed|lookup failed|unpublish failed|succeeded"
    run timeout 30 $SRV good 3 "$PMIX" abort 7
  expect_in out "^server: rank 1 aborts the job$"
  expect_fast 10000
  # real MPI programs: point-to-point and a collective at 4 ranks (the MPI programs are
  # built next to spin, under tests/mpi of the same build)
  if [ "$SPIN" != - ]; then
    for prog in pt2pt/sendrecv coll/allreduce; do
      run timeout 60 $SRV good 4 "$(dirname "$SPIN")/../mpi/$prog"
      expect_rc 0
      expect_in out "No Errors"
    done
  fi
  ;;
pmi2bad)
  # a broken PMI-2 server: each fault gives a message naming it and ends MPI_Init, never a
  # crash (exit 2 is pmi_exchange's "init failed") or a hang (the silent one by RMPI_PMI_TIMEOUT)
  export RMPI_PMI_TIMEOUT=2
  for m in badlen:"does not start with a PMI-2 length field" hugelen:"announces 999999 bytes" \
           nosemi:"is malformed" nul:"holds a NUL byte" close:"PMI-2 server on PMI_FD=[0-9]+ (was closed|failed: )" \
           silent:"no reply from the PMI-2 server on PMI_FD=[0-9]+ within 2 s" pmi1:"does not serve PMI version 2" \
           wrongcmd:"expected cmd=fullinit-response" words:"is malformed"; do
    run timeout 30 python3 "$HERE/pmi2_server.py" "${m%%:*}" 2 "$PMIX"
    expect_rc 2
    [ "$(count err "${m#*:}")" = 2 ] || fail "mode ${m%%:*}: expected /${m#*:}/ from both ranks"
    expect_fast 8000
  done
  ;;
badpm)
  # a missing or mismatched process manager ends init with a message naming what was expected
  run env PMI_FD=99 PMI_JOBID=j.0 PMI_RANK=0 PMI_SIZE=2 "$PMIX"
  expect_rc 2
  expect_in err 'PMI_FD="99" is not an open file descriptor; the PMI-2 process manager that set it'
  run sh -c 'exec env PMI_FD=5 PMI_JOBID=j.0 PMI_RANK=0 PMI_SIZE=2 "$0" 5</dev/null' "$PMIX"
  expect_rc 2
  expect_in err "PMI-2 server on PMI_FD=5"
  # a fifo: what the rank writes comes back to it
  mkfifo "$T/fifo"
  run sh -c 'exec env PMI_FD=5 PMI_RANK=0 PMI_SIZE=2 "$0" 5<>"$1"' "$PMIX" "$T/fifo"
  expect_rc 2
  expect_in err 'expected cmd=response_to_init from the PMI-1 server on PMI_FD=5 but got "cmd=init"'
  # a socket nobody answers on (the rank holds both ends): bounded by RMPI_PMI_TIMEOUT
  run python3 -c 'import os, socket, sys
a, b = socket.socketpair()
a.set_inheritable(True); b.set_inheritable(True)
os.environ.update(PMI_FD=str(b.fileno()), PMI_RANK="0", PMI_SIZE="2", RMPI_PMI_TIMEOUT="1")
os.execv(sys.argv[1], sys.argv[1:])' "$PMIX"
  expect_rc 2
  expect_in err "no reply from the PMI-1 server on PMI_FD=[0-9]+ within 1 s"
  expect_fast 5000
  # srun without --mpi: every task would be a singleton
  run env SLURM_STEP_NUM_TASKS=4 "$PMIX"
  expect_rc 2
  expect_in err "started by Slurm as one of 4 tasks, but without a process-manager interface.*--mpi=pmi2"
  # the real library: a bad RMPI_PMI (its knob parser), then PMIx variables without a PMIx
  # server (pmi_exchange has neither)
  if [ "$SPIN" != - ]; then
    run timeout 30 env RMPI_PMI=3 "$SPIN"
    [ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "RMPI_PMI=3: exit status $rc"
    expect_in err 'RMPI_PMI=3: expected one of auto\|pmi1\|pmi2\|pmix'

    run timeout 30 env PMIX_NAMESPACE=dead.0 PMIX_RANK=0 PMIX_SERVER_URI4='dead.0;tcp4://127.0.0.1:9' \
        PMIX_SERVER_URI41='dead.0;tcp4://127.0.0.1:9' "$SPIN"
    [ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "a dead PMIx server: exit status $rc"
    expect_in err "PMIx.*(PMIX_NAMESPACE=dead.0)"
    expect_fast 10000
  fi
  ;;
bind_core)
  need_cpus 2
  for spelling in "--bind-to core" "-bind-to core" "--bind-to=core"; do
    run "$MPIEXEC" -n 2 $spelling sh -c "$show"
    expect_rc 0
    expect_one_core_each "$spelling"
  done
  # numa: the core's whole NUMA node, so at least that core
  run "$MPIEXEC" -n 2 --bind-to numa sh -c "$show"
  expect_rc 0
  [ -n "$(cpus_of 0)" ] && [ -n "$(cpus_of 1)" ] || fail "--bind-to numa: ranks printed no cpus"
  ;;
bind_none)
  for spelling in "--bind-to none" "-bind-to none"; do
    run "$MPIEXEC" -n 2 $spelling sh -c "$show"
    expect_rc 0
    expect_unbound "$spelling" 2
  done
  ;;
bind_default)
  need_cpus 2
  # ranks that fit the cores are bound, one core each
  run "$MPIEXEC" -n 2 sh -c "$show"
  expect_rc 0
  expect_one_core_each "default, 2 ranks"
  # more ranks than cores: nobody is bound (a bound rank would share its core)
  over=$(( $(nproc) < 4 ? 4 : 2 * $(nproc) ))
  run "$MPIEXEC" -n $over sh -c "$show"
  expect_rc 0
  expect_unbound "default, $over ranks" $over
  # mpiexec itself bound to one CPU: 2 ranks do not fit it, 1 does (inside that CPU)
  last=$(echo "$MINE" | tr ',' '\n' | tail -1 | sed 's/.*-//')
  run taskset -c "$last" "$MPIEXEC" -n 2 sh -c "$show"
  expect_rc 0
  [ "$(cpus_of 0)" = "$last" ] && [ "$(cpus_of 1)" = "$last" ] || fail "under taskset -c $last: $(tr '\n' ';' <"$T/out")"
  # the library's ranks, oversubscribed and unbound, still run at their usual pace
  if [ "$CPUS" != - ]; then
    run "$MPIEXEC" -n $over "$CPUS"
    expect_rc 0
    expect_unbound "default, $over MPI ranks" $over
    expect_fast 30000
  fi
  ;;
report_bindings)
  need_cpus 2
  host=$(hostname)
  run "$MPIEXEC" -n 2 --report-bindings sh -c "$show"
  expect_rc 0
  [ "$(count err '^report-bindings: ')" = 2 ] || fail "expected one report line per rank"
  for r in 0 1; do
    expect_in err "^report-bindings: rank $r on $host bound to core [0-9]+ \(cpus $(cpus_of $r)\)$"
  done
  run "$MPIEXEC" -n 3 --bind-to none --report-bindings true
  expect_rc 0
  [ "$(count err "^report-bindings: rank [012] on $host not bound \(cpus $MINE\)$")" = 3 ] || fail "--bind-to none: one 'not bound' line per rank"
  # RMPI_REPORT: the mask each rank ran with, and that the node's ranks did not share cpus
  if [ "$CPUS" != - ]; then
    run "$MPIEXEC" -n 2 -genv RMPI_REPORT 1 "$CPUS"
    expect_rc 0
    for r in 0 1; do
      expect_in err "^\[rmpi report\] rank $r on $host: binding as started \(cpus $(cpus_of $r); 2 of the node's ranks share 2 cpus\)$"
    done
  fi
  ;;
bind_bad)
  for spelling in "--bind-to foo" "-bind-to foo" "--bind-to=foo" "--bind-to auto"; do
    run "$MPIEXEC" -n 1 $spelling true
    expect_rc 2
    [ "$(wc -l <"$T/err")" = 1 ] || fail "$spelling: expected one line"
    expect_in err '^mpiexec: -{1,2}bind-to accepts core, numa or none, not "(foo|auto)"\.$'
  done
  for spelling in "--map-by foo" "-map-by foo"; do
    run "$MPIEXEC" -n 1 $spelling true
    expect_rc 2
    [ "$(wc -l <"$T/err")" = 1 ] || fail "$spelling: expected one line"
    expect_in err '^mpiexec: -{1,2}map-by accepts core, numa, node or slot, not "foo"\.$'
  done
  run "$MPIEXEC" -n 1 --bind-to
  expect_rc 2
  expect_in err "--bind-to needs an argument"
  # a bad RMPI_BIND stops MPI_Init naming it
  if [ "$CPUS" != - ]; then
    run env RMPI_BIND=sideways "$CPUS"
    [ "$rc" != 0 ] || fail "RMPI_BIND=sideways: exit status 0"
    expect_in err "RMPI_BIND=sideways is not BIND"
    run env RMPI_BIND=core:slot:2:2 "$CPUS"
    [ "$rc" != 0 ] || fail "RMPI_BIND=core:slot:2:2: exit status 0"
  fi
  ;;
map_by)
  # placement over a hostfile, and the binding each remote rank is told (RMPI_BIND)
  printf 'hostA slots=2\nhostB slots=2\n' >"$T/hosts"
  told='echo "$PMI_RANK ${FAKE_HOST:-local} ${RMPI_BIND:-}"'
  placed() { sort "$T/out" | tr '\n' ';'; }
  for spelling in "--map-by node" "-map-by node" "--map-by=node"; do
    run "$MPIEXEC" -f "$T/hosts" -n 4 $spelling --agent "$AGENT" --pmi-addr 127.0.0.1 sh -c "$told"
    expect_rc 0
    [ "$(placed)" = "0 hostA auto:node:0:2;1 hostB auto:node:0:2;2 hostA auto:node:1:2;3 hostB auto:node:1:2;" ] ||
      fail "$spelling: $(placed)"
  done
  for m in slot core; do
    run "$MPIEXEC" -f "$T/hosts" -n 4 --map-by $m --agent "$AGENT" --pmi-addr 127.0.0.1 sh -c "$told"
    expect_rc 0
    [ "$(placed)" = "0 hostA auto:$m:0:2;1 hostA auto:$m:1:2;2 hostB auto:$m:0:2;3 hostB auto:$m:1:2;" ] ||
      fail "--map-by $m: $(placed)"
  done
  run "$MPIEXEC" -f "$T/hosts" -n 3 --map-by numa --bind-to numa --report-bindings --agent "$AGENT" \
      --pmi-addr 127.0.0.1 sh -c "$told"
  expect_rc 0
  [ "$(placed)" = "0 hostA numa:numa:0:2:report;1 hostA numa:numa:1:2:report;2 hostB numa:numa:0:1:report;" ] ||
    fail "--map-by numa --bind-to numa: $(placed)"
  # a local rank is bound by mpiexec and never told to bind again
  run "$MPIEXEC" -n 1 -genv RMPI_BIND core:report sh -c "$told"
  expect_rc 0
  [ "$(placed)" = "0 local ;" ] || fail "local rank: $(placed)"
  ;;
bind_remote)
  need_cpus 2
  need_cpus_prog
  host=$(hostname)
  # remote ranks (the fake agent runs them here) bind themselves at MPI_Init
  run "$MPIEXEC" -n 2 --host hostA:2 --agent "$AGENT" --pmi-addr 127.0.0.1 --report-bindings "$CPUS"
  expect_rc 0
  expect_one_core_each "remote ranks"
  for r in 0 1; do
    expect_in err "^report-bindings: rank $r on $host bound to core [0-9]+ \(cpus $(cpus_of $r)\)$"
  done
  run "$MPIEXEC" -n 2 --host hostA:2 --agent "$AGENT" --pmi-addr 127.0.0.1 -genv RMPI_REPORT 1 "$CPUS"
  expect_rc 0
  expect_not_in err "^report-bindings"
  for r in 0 1; do
    expect_in err "^\[rmpi report\] rank $r on $host: binding bound to core [0-9]+ \(cpus $(cpus_of $r)\)$"
  done
  run "$MPIEXEC" -n 2 --host hostA:2 --agent "$AGENT" --pmi-addr 127.0.0.1 --bind-to none "$CPUS"
  expect_rc 0
  expect_unbound "remote ranks, --bind-to none" 2
  # oversubscribed by default: unbound
  run "$MPIEXEC" -n 4 --host hostA:4 --agent "$AGENT" --pmi-addr 127.0.0.1 "$CPUS"
  expect_rc 0
  expect_unbound "4 remote ranks" 4
  ;;
bind_kernel)
  need_cpus 2
  need_cpus_prog
  # Two "hosts" that are one machine (containers, the lab's network namespaces): host names
  # of their own, one kernel. By default each rank takes a core of its own; counted per host
  # name, both hosts' first ranks went to the same core.
  unshare -u true 2>/dev/null || { echo "SKIP: unshare -u (a UTS namespace) is not permitted here"; exit 77; }
  cat >"$T/uts_agent.sh" <<'EOF'
host=$1
shift
exec unshare -u /bin/sh -c 'hostname "$0" && exec /bin/sh -c "$1"' "$host" "$*"
EOF
  run "$MPIEXEC" -n 2 --host hostA:1,hostB:1 --agent "/bin/sh $T/uts_agent.sh" --pmi-addr 127.0.0.1 --report-bindings "$CPUS"
  expect_rc 0
  expect_one_core_each "one rank on each of two hosts of one kernel"
  expect_in err "^report-bindings: rank 0 on hostA bound to core [0-9]+ \(cpus $(cpus_of 0)\)$"
  expect_in err "^report-bindings: rank 1 on hostB bound to core [0-9]+ \(cpus $(cpus_of 1)\)$"
  # each host's ranks fit its cores, but together they are twice the kernel's: unbound, and
  # a waiting rank yields at once (counted per host name, each rank spun on a CPU the other
  # host's rank needed)
  n=$(nproc)
  run "$MPIEXEC" -n $((2 * n)) --host hostA:$n,hostB:$n --agent "/bin/sh $T/uts_agent.sh" --pmi-addr 127.0.0.1 \
    -genv RMPI_REPORT 1 "$CPUS"
  expect_rc 0
  expect_unbound "$n ranks on each of two hosts of one kernel" $((2 * n))
  [ "$(count err "^\[rmpi report\] rank [0-9]+: waits yield at once \($((2 * n)) ranks on this machine's kernel share $n cpus\)$")" = $((2 * n)) ] ||
    fail "$((2 * n)) ranks on two hosts of one kernel: expected each to yield at once"
  # one rank per host, a core each: they spin before yielding
  run "$MPIEXEC" -n 2 --host hostA:1,hostB:1 --agent "/bin/sh $T/uts_agent.sh" --pmi-addr 127.0.0.1 -genv RMPI_REPORT 1 "$CPUS"
  expect_rc 0
  [ "$(count err "^\[rmpi report\] rank [01]: waits spin, then yield \(2 ranks on this machine's kernel share [0-9]+ cpus\)$")" = 2 ] ||
    fail "one rank on each of two hosts of one kernel: expected both to spin before yielding"
  # --bind-to core is the user's placement, per host name as before
  run "$MPIEXEC" -n 2 --host hostA:1,hostB:1 --agent "/bin/sh $T/uts_agent.sh" --pmi-addr 127.0.0.1 --bind-to core "$CPUS"
  expect_rc 0
  [ "$(cpus_of 0)" = "$(cpus_of 1)" ] || fail "--bind-to core: ranks on $(cpus_of 0) and $(cpus_of 1), not both on their host's first core"
  ;;
bind_respect)
  need_cpus 2
  need_cpus_prog
  host=$(hostname)
  # a singleton told to bind does so (under srun, RMPI_BIND=core binds by node-local rank)
  run env RMPI_BIND=core:report "$CPUS"
  expect_rc 0
  expect_in err "^report-bindings: rank 0 on $host bound to core 0 \(cpus [0-9]+\)$"
  echo "$(cpus_of 0)" | grep -qE '^[0-9]+$' || fail "RMPI_BIND=core: cpus $(cpus_of 0)"
  # Slurm bound the task: left alone
  run env RMPI_BIND=core:report SLURM_CPU_BIND_TYPE=mask_cpu: "$CPUS"
  expect_rc 0
  expect_in err "^report-bindings: rank 0 on $host left as Slurm bound it \(mask_cpu:\)$"
  expect_unbound "Slurm's binding" 1
  # SLURM_CPU_BIND_TYPE=none: Slurm did not bind, so RMPI_BIND does
  run env RMPI_BIND=core:report SLURM_CPU_BIND_TYPE=none "$CPUS"
  expect_rc 0
  expect_in err "bound to core 0"
  # a mask narrower than the host (taskset, a cgroup): left alone
  last=$(echo "$MINE" | tr ',' '\n' | tail -1 | sed 's/.*-//')
  run env RMPI_BIND=core:report taskset -c "$last" "$CPUS"
  expect_rc 0
  expect_in err "^report-bindings: rank 0 on $host left as started \(already bound to cpus $last\)$"
  [ "$(cpus_of 0)" = "$last" ] || fail "taskset -c $last: rank on $(cpus_of 0)"
  ;;
*)
  echo "unknown case $case_name"; exit 2 ;;
esac
echo "PASS ($case_name)"
