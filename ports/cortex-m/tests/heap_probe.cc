// SPDX-License-Identifier: Apache-2.0
// The no-heap rule, checked at link time. Built three ways: plain (must link
// and run: exit 0), with FLOE_PROBE_MALLOC (calls malloc) and with
// FLOE_PROBE_NEW (operator new); the last two must fail to link, because the
// toolchain file wraps every heap entry point to an undefined __wrap_* symbol
// and no libstdc++ is linked (ctest: WILL_FAIL).
#include <stdlib.h>

#include "runtime/platform.h"

volatile size_t g_size = 64;
// The pointer escapes here, so the compiler cannot elide the allocation.
void* volatile g_escape;

int main() {
  floe::platform::init();
#if defined(FLOE_PROBE_MALLOC)
  g_escape = malloc(g_size);
  floe::platform::log(g_escape ? "malloc returned memory\n" : "malloc returned null\n");
#elif defined(FLOE_PROBE_NEW)
  g_escape = new int[g_size];
  floe::platform::log("new returned memory\n");
#else
  floe::platform::log("heap probe without heap use: linked and ran\n");
#endif
  return 0;
}
