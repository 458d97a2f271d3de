#!/bin/bash
/work/main/tests/netns/netns.sh run --hosts 2 --mtu "${1:-65535}" -- "$(cd "$(dirname "$0")" && pwd)/inside3.sh"
