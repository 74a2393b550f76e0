#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Fails when a runtime library references the heap, exceptions or RTTI:
# malloc/free/new/delete/__cxa_throw and friends must not be undefined symbols
# of the device-side libraries (firmware links would drag them in).
set -eu
status=0
for lib in "$@"; do
  bad=$(nm -u "$lib" | awk '{print $2}' | grep -E '^(malloc|calloc|realloc|free|_Znw|_Zna|_Zdl|_Zda|__cxa_throw|__cxa_allocate_exception|__cxa_begin_catch|__gxx_personality_v0|_Unwind_Resume|_ZTI|_ZTV)' || true)
  if [ -n "$bad" ]; then
    echo "FAIL: $lib references forbidden symbols:"
    echo "$bad" | sort -u
    status=1
  else
    echo "ok: $lib has no heap/exception/RTTI references"
  fi
done
exit $status
