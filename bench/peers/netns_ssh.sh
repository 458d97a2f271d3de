#!/bin/sh
# An ssh stand-in for MPI launchers between tests/netns namespace hosts (bench/compare-netns.sh):
# Open MPI's `--mca plm_rsh_agent` and Hydra's `-launcher ssh -launcher-exec` call it as
#   netns_ssh.sh [-x ...] HOST COMMAND...
# and, like ssh, it runs the command words as one line through a shell, here in the network
# namespace HOST (the environment passes through, unlike ssh; the launchers forward what the
# ranks need anyway). Leading options (Hydra passes -x) are ignored.
while [ "${1#-}" != "$1" ]; do shift; done
host=$1
shift
exec ip netns exec "$host" /bin/sh -c "$*"
