#include "util/peak_rss.hh"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace rperf {

long peak_rss_kb() {
  int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
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
  if (!line) return -1;
  return std::strtol(line + 7, nullptr, 10);
}

}  // namespace rperf
