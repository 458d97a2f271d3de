#!/bin/sh
# Fails when a driver's name appears in core or proto: they reach drivers only through
# the registry (src/drivers/registry.hpp). The names are the folders of src/drivers that
# hold a driver (net is a helper library shared by the network drivers, not a driver):
# the name as a word in any case ("shm", "SHM" alone), its class (ShmDriver) and its
# headers (shm_driver.hpp) all count; SLUICE_SHM_CELL_SIZE-style words do not.
#   check_driver_names.sh <source root>
set -eu
root=${1:?usage: check_driver_names.sh <source root>}
found=0
for dir in "$root"/src/drivers/*/; do
  name=$(basename "$dir")
  [ "$name" = net ] && continue
  cls=$(printf '%s' "$name" | cut -c1 | tr a-z A-Z)$(printf '%s' "$name" | cut -c2-)Driver
  if grep -rnwiE "$name|${name}_driver|$cls" "$root/src/core" "$root/src/proto"; then
    echo "driver name '$name' appears in src/core or src/proto (above): go through the registry" >&2
    found=1
  fi
done
[ -d "$root/src/drivers/shm" ] || { echo "no drivers found under $root/src/drivers" >&2; exit 1; }
exit $found
