#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs one libFuzzer harness for a bounded time on the committed seeds:
#   run_fuzzer.sh HARNESS SECONDS WORK_DIR SEED_DIR... [-- EXTRA_LIBFUZZER_FLAGS]
# WORK_DIR receives the inputs that add coverage and any crash artifact
# (crash-*, timeout-*, oom-*); the seed dirs are only read. One job, so it fits
# a shared 2-core machine. Exit status is libFuzzer's: nonzero on any crash,
# sanitizer report, timeout (-timeout per input) or out-of-memory.
# FLOE_FUZZ_BUDGET=cpu makes SECONDS the harness's own CPU time (user + system)
# instead of wall time, so a run on a busy shared machine still fuzzes that
# long: the harness then gets SIGUSR1 (libFuzzer's graceful exit: final stats,
# exit 0) once it has used SECONDS of CPU, with a wall cap of 4 x SECONDS.
set -eu
harness=$1; seconds=$2; work=$3; shift 3
seeds=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  [ -d "$1" ] && seeds="$seeds $1"
  shift
done
[ $# -gt 0 ] && shift
mkdir -p "$work/corpus" "$work/artifacts"
flags="-timeout=30 -rss_limit_mb=2560 -max_len=65536 -print_final_stats=1"
if [ "${FLOE_FUZZ_BUDGET:-wall}" != cpu ]; then
  # shellcheck disable=SC2086
  exec "$harness" -max_total_time="$seconds" $flags -artifact_prefix="$work/artifacts/" "$@" "$work/corpus" $seeds
fi
# shellcheck disable=SC2086
"$harness" -max_total_time=$((seconds * 4)) $flags -artifact_prefix="$work/artifacts/" "$@" "$work/corpus" $seeds &
pid=$!
ticks_per_second=$(getconf CLK_TCK)
ticks=0
while :; do
  # /proc/PID/stat after "(name) ": $1 = state, $12 = utime, $13 = stime (clock ticks)
  stat=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null) || break
  state=$(echo "$stat" | awk '{ print $1 }')
  [ "$state" = Z ] && break  # exited (crash or wall cap): wait collects its status
  ticks=$(echo "$stat" | awk '{ print $12 + $13 }')
  if [ "$ticks" -ge $((seconds * ticks_per_second)) ]; then
    kill -USR1 "$pid" 2>/dev/null || true
    break
  fi
  sleep 2
done
rc=0
wait "$pid" || rc=$?
echo "run_fuzzer.sh: $(basename "$harness") used $((ticks / ticks_per_second)) s of CPU (last sample); exit $rc" >&2
exit "$rc"
