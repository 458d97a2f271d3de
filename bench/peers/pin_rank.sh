#!/bin/sh
# pin_rank.sh PROG [ARGS...]: runs PROG on CPU <its MPI rank> (Open MPI's OMPI_COMM_WORLD_RANK,
# Hydra's PMI_RANK). For ranks on namespace "hosts" that share one machine's cores: the MPI
# launchers bind per host, which would put rank 0 and rank 1 both on core 0.
r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}
exec taskset -c "$r" "$@"
