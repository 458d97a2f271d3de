#!/bin/bash
export REPO=/work/main
/work/main/tests/netns/netns.sh run --hosts 2 --mtu "${1:-1500}" -- /tmp/lead/inside2.sh
