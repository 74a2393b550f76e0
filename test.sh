#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The test command: set up, build and run the whole test suite (host preset).
# Tests that need ../shared/corpus skip with a visible message when it is absent.
set -euo pipefail
cd "$(dirname "$0")"
bash .ci/install-deps.sh
cmake --preset host
cmake --build --preset host
ctest --preset host
