// Rperf::Native.peak_rss_kb: this process's peak resident set (VmHWM of /proc/self/status, in
// KB), read with plain system calls. Ruby's File methods release the GVL while they read, and a
// CPU-bound thread then keeps it for a whole time slice: Rperf.snapshot/stop took ~100 ms per
// busy thread for this one line.
#include <fcntl.h>
#include <ruby/ruby.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace rperf {

namespace {

// -> Integer (KB), or nil where /proc is not available.
VALUE native_peak_rss_kb(VALUE) {
  int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Qnil;
  char buf[8192];
  size_t len = 0;
  for (;;) {
    ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    len += static_cast<size_t>(n);
    if (len == sizeof(buf) - 1) break;
  }
  close(fd);
  buf[len] = '\0';
  const char* line = std::strstr(buf, "\nVmHWM:");
  if (!line) return Qnil;
  return LONG2NUM(std::strtol(line + 7, nullptr, 10));
}

}  // namespace

void init_process_binding(VALUE native) { rb_define_singleton_method(native, "peak_rss_kb", RUBY_METHOD_FUNC(native_peak_rss_kb), 0); }

}  // namespace rperf
