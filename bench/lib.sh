# shellcheck shell=bash
# Shared helpers for bench/run: a microsecond clock, medians, ratios and
# number formatting.  Sourced, not run; needs bash (EPOCHREALTIME) and awk.
# All figures are integers until formatted, so no float arithmetic happens
# in bash; awk does the division, in the C locale.

# Say what failed and stop.
bench_die ()
{
  printf 'bench: %s\n' "$*" >&2
  exit 1
}

# Set the variable named $1 to the time now in microseconds.  It sets a
# variable rather than printing, so timing a command costs no subshell.
# EPOCHREALTIME (bash 5) is read without forking; its decimal separator
# follows the locale, so every non-digit is stripped rather than assuming
# a '.'.  Without it, date(1) (GNU, for %N) is the fallback.
bench_now_us ()
{
  if [ -n "${EPOCHREALTIME:-}" ]; then
    printf -v "$1" '%s' "${EPOCHREALTIME//[!0-9]/}"
  else
    local _bench_ns
    _bench_ns=$(date +%s%N)
    printf -v "$1" '%s' "$((_bench_ns / 1000))"
  fi
}

# Print the median of the integer arguments (the mean of the two middle
# values for an even count, rounded down; %.0f, as mawk clamps %d at
# 2^31 - 1).
bench_median ()
{
  [ "$#" -gt 0 ] || bench_die "bench_median: no values"
  printf '%s\n' "$@" | sort -n | awk '
    { v[NR] = $1 }
    END {
      if (NR % 2) print v[(NR + 1) / 2]
      else printf "%.0f\n", int((v[NR / 2] + v[NR / 2 + 1]) / 2)
    }'
}

# Print the largest of the integer arguments.
bench_max ()
{
  [ "$#" -gt 0 ] || bench_die "bench_max: no values"
  printf '%s\n' "$@" | sort -n | tail -n 1
}

# Print microseconds as milliseconds with two decimals: 1234 -> 1.23.
bench_fmt_ms ()
{
  LC_ALL=C awk -v us="$1" 'BEGIN { printf "%.2f\n", us / 1000 }'
}

# Print a throughput in MB/s (10^6 bytes per second) from bytes and
# microseconds.
bench_mb_per_s ()
{
  LC_ALL=C awk -v b="$1" -v us="$2" 'BEGIN {
    if (us <= 0) us = 1
    printf "%.1f\n", b / us
  }'
}

# Print a/b with two decimals, or "n/a" when b is zero.
bench_ratio ()
{
  LC_ALL=C awk -v a="$1" -v b="$2" 'BEGIN {
    if (b == 0) print "n/a"
    else printf "%.2f\n", a / b
  }'
}

# Print the value of KEY from a maxrss report line in FILE
# ("maxrss_kib=... status=... wall_ms=...").
bench_report_field ()
{
  local key=$1 file=$2
  awk -v key="$key" '
    { for (i = 1; i <= NF; i++) if (index($i, key "=") == 1) {
        print substr($i, length(key) + 2); found = 1; exit } }
    END { if (!found) exit 1 }' "$file" ||
    bench_die "no $key in maxrss report $file"
}
