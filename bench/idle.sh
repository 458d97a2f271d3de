# Sourced by the benchmark scripts: wait for a quiet machine before a measurement.
#   wait_idle SECONDS NAME   waits up to SECONDS (0 = not at all) until less than 10 % of
#                            all CPU time is busy over one second; NAME prefixes messages.
# On 2 cores a concurrent build halves the figures, so every run waits here first.

# Percentage of CPU time busy (all CPUs) over one second, from /proc/stat.
cpu_busy_pct() {
  local _c a b c idle iow irq sirq steal t1 i1 t2 i2
  read -r _c a b c idle iow irq sirq steal _ </proc/stat
  t1=$((a + b + c + idle + iow + irq + sirq + steal)); i1=$((idle + iow))
  sleep 1
  read -r _c a b c idle iow irq sirq steal _ </proc/stat
  t2=$((a + b + c + idle + iow + irq + sirq + steal)); i2=$((idle + iow))
  echo $((100 * ((t2 - t1) - (i2 - i1)) / (t2 - t1 > 0 ? t2 - t1 : 1)))
}

wait_idle() {
  local limit=$1 name=$2 waited=0 busy
  [ "$limit" -gt 0 ] || return 0
  while busy=$(cpu_busy_pct); [ "$busy" -gt 10 ]; do
    if [ $waited -ge "$limit" ]; then
      echo "$name: warning: machine still ${busy}% busy after ${limit}s; measuring anyway" >&2
      return 0
    fi
    [ $waited = 0 ] && echo "$name: machine ${busy}% busy, waiting for it to be idle..." >&2
    waited=$((waited + 1))
  done
}
