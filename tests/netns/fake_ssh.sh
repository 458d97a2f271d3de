#!/bin/sh
# A stand-in for ssh in `sluicerun --launch`: like ssh, it joins its command words with
# spaces and runs the line through a shell on the "remote host" (here a namespace host),
# and the command starts with an empty environment (only PATH, as sshd would set), not the
# launcher's. Whatever the rank needs must come on the command line.
#
#   fake_ssh.sh HOST COMMAND [ARGS...]
host=$1
shift
exec ip netns exec "$host" env -i PATH=/usr/local/bin:/usr/bin:/bin /bin/sh -c "$*"
