// This process's peak resident set (VmHWM of /proc/self/status), read with plain system calls.
// Ruby's File methods release the GVL while they read, and a CPU-bound thread then keeps it for
// a whole time slice: Rperf.snapshot/stop took ~100 ms per busy thread for this one line.
#pragma once

namespace rperf {

// KB, or -1 where /proc is not available.
long peak_rss_kb();

}  // namespace rperf
