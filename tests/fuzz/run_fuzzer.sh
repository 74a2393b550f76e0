#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs one libFuzzer harness for a bounded time on the committed seeds:
#   run_fuzzer.sh HARNESS SECONDS WORK_DIR SEED_DIR... [-- EXTRA_LIBFUZZER_FLAGS]
# WORK_DIR receives the inputs that add coverage and any crash artifact
# (crash-*, timeout-*, oom-*); the seed dirs are only read. One job, so it fits
# a shared 2-core machine. Exit status is libFuzzer's: nonzero on any crash,
# sanitizer report, timeout (-timeout per input) or out-of-memory.
set -eu
harness=$1; seconds=$2; work=$3; shift 3
seeds=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  [ -d "$1" ] && seeds="$seeds $1"
  shift
done
[ $# -gt 0 ] && shift
mkdir -p "$work/corpus" "$work/artifacts"
# shellcheck disable=SC2086
exec "$harness" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2560 -max_len=65536 \
  -print_final_stats=1 -artifact_prefix="$work/artifacts/" "$@" "$work/corpus" $seeds
