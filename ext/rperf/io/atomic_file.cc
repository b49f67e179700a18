#include "io/atomic_file.hh"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace rperf {

namespace {

std::string dir_of(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// After a rename, the directory entry reaches the disk with the directory's fsync. A failure
// here is not the write's: the file is complete either way.
void sync_dir(const std::string& path) {
  int dfd = ::open(dir_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return;
  fsync(dfd);
  close(dfd);
}

}  // namespace

// A directory of /proc (/proc/self/fd, /dev/fd): its links are the process's open files
// (/dev/stdout: a pipe, a terminal, or the file the shell opened), to be written in place.
static bool in_proc(const std::string& path) {
  char real[PATH_MAX];
  if (!realpath(dir_of(path).c_str(), real)) return false;
  return std::strncmp(real, "/proc/", 6) == 0 || std::strcmp(real, "/proc") == 0;
}

int resolve_symlinks(const std::string& path, std::string& out) {
  std::string p = path;
  for (int hops = 0; hops <= 40; hops++) {
    if (in_proc(p)) {
      out.clear();
      return 0;
    }
    struct stat st;
    if (lstat(p.c_str(), &st) != 0) {
      if (errno != ENOENT) return errno;
      out = p;  // a file to create
      return 0;
    }
    if (!S_ISLNK(st.st_mode)) {
      out = p;
      return 0;
    }
    std::string link(PATH_MAX, '\0');
    ssize_t n = readlink(p.c_str(), &link[0], link.size());
    if (n < 0) return errno;
    link.resize(static_cast<size_t>(n));
    if (link.empty()) return ENOENT;
    if (link[0] != '/') {
      size_t slash = p.rfind('/');
      if (slash != std::string::npos) link = p.substr(0, slash + 1) + link;
    }
    p = link;
  }
  return ELOOP;
}

AtomicFile::~AtomicFile() { abandon(); }

int AtomicFile::open(const std::string& path) {
  abandon();
  if (path.empty()) return ENOENT;
  int error = resolve_symlinks(path, target_);
  if (error) return error;
  if (target_.empty()) {  // an open file of this process (/dev/stdout): written in place
    target_ = path;
    fd_ = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0) return errno;
    int flags = fcntl(fd_, F_GETFL);
    if (flags >= 0) fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK);
    return 0;
  }
  struct stat st;
  bool exists = stat(target_.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) return EISDIR;
  if (exists && !S_ISREG(st.st_mode)) {
    // In place. O_NONBLOCK: opening a FIFO without a reader fails (ENXIO) instead of waiting.
    fd_ = ::open(target_.c_str(), O_WRONLY | O_TRUNC | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0) return errno;
    int flags = fcntl(fd_, F_GETFL);
    if (flags >= 0) fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK);
    tmp_.clear();
    return 0;
  }
  tmp_ = target_ + ".tmp-XXXXXX";
  fd_ = mkostemp(&tmp_[0], O_CLOEXEC);
  if (fd_ < 0) {
    error = errno;
    tmp_.clear();
    return error;
  }
  fchmod(fd_, exists ? (st.st_mode & 07777) : 0644);
  return 0;
}

int AtomicFile::commit() {
  if (fd_ < 0) return EBADF;
  int error = 0;
  if (!tmp_.empty() && fsync(fd_) != 0) error = errno;
  if (close(fd_) != 0 && !error) error = errno;
  fd_ = -1;
  if (tmp_.empty()) return error;
  if (!error && rename(tmp_.c_str(), target_.c_str()) != 0) error = errno;
  if (error) {
    unlink(tmp_.c_str());
  } else {
    sync_dir(target_);
  }
  tmp_.clear();
  return error;
}

void AtomicFile::abandon() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  if (!tmp_.empty()) unlink(tmp_.c_str());
  tmp_.clear();
}

int write_file_atomically(const std::string& path, const char* data, size_t len) {
  AtomicFile file;
  int error = file.open(path);
  if (error) return error;
  while (len > 0) {
    ssize_t w = ::write(file.fd(), data, len);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return errno;  // the destructor removes the temporary file
    data += w;
    len -= static_cast<size_t>(w);
  }
  return file.commit();
}

}  // namespace rperf
