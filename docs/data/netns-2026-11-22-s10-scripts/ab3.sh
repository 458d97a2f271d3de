#!/bin/bash
/work/main/tests/netns/netns.sh run --hosts 2 --mtu "${1:-65535}" -- /tmp/lead/inside3.sh
