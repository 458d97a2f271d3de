#!/bin/bash
for i in 1 2 3 4; do /tmp/net/ab2.sh "$@"; done
