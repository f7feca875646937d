#!/bin/sh
# Stand-in for ssh in the launcher tests: "fake_agent.sh HOST COMMAND" runs COMMAND here,
# evaluated by a shell as ssh would, with FAKE_HOST=HOST so ranks can tell where they "are".
host=$1
shift
FAKE_HOST=$host
export FAKE_HOST
exec /bin/sh -c "$*"
