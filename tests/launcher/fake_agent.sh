#!/bin/sh
# Stand-in for ssh in the launcher tests: "fake_agent.sh HOST COMMAND" runs COMMAND here,
# evaluated by a shell as ssh would, with FAKE_HOST=HOST so ranks can tell where they "are".
# "fake_agent.sh fork HOST COMMAND" runs COMMAND as its child, as sshd does on the other
# host, so the rank is not the process mpiexec started.
fork=
[ "$1" = fork ] && { fork=1; shift; }
host=$1
shift
FAKE_HOST=$host
export FAKE_HOST
[ -n "$fork" ] || exec /bin/sh -c "$*"
# a background job's stdin would be /dev/null: hand it ours (the job key) explicitly
exec 3<&0
/bin/sh -c "$*" <&3 3<&- &
exec 3<&-
wait $!
