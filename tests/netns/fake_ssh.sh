#!/bin/sh
# A stand-in for ssh in `sluicerun --launch`: like ssh, it joins its command words with
# spaces and runs the line through a shell on the "remote host" (here a namespace host),
# and the command starts with an empty environment (only PATH, as sshd would set), not the
# launcher's. Whatever the rank needs must come on the command line.
#
#   fake_ssh.sh HOST COMMAND [ARGS...]
host=$1
shift
# A command line is public (ps): the job key must never be on one.
case "$*" in
  *SLUICE_JOB_KEY=*)
    echo "fake_ssh.sh: the job key is on the launch command line (visible in ps)" >&2
    exit 1 ;;
esac
exec ip netns exec "$host" env -i PATH=/usr/local/bin:/usr/bin:/bin /bin/sh -c "$*"
