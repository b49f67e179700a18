#include "io/atomic_file.hh"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
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
  tmp_ = target_ + ".tmp-" + std::to_string(getpid()) + "-XXXXXX";
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
    // Here, not in open: commit runs without the GVL (the encoders' job, Native.write_file).
    remove_stale_temporaries(dir_of(target_), kStaleTemporaryAge);
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
  FileSizeLimitAsError limit_as_error;
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

namespace {

// The writer's pid in a temporary name of ours (`<anything>.tmp-<pid>-XXXXXX`, the suffix of
// mkostemp's letters and digits), or 0 when the name is not one.
pid_t temporary_writer(const char* name) {
  const char* tag = nullptr;
  for (const char* p = std::strstr(name, ".tmp-"); p; p = std::strstr(p + 1, ".tmp-")) tag = p;
  if (!tag || tag == name) return 0;
  const char* p = tag + 5;
  long pid = 0;
  const char* digits = p;
  while (*p >= '0' && *p <= '9' && p - digits < 10) pid = pid * 10 + (*p++ - '0');
  if (p == digits || *p != '-' || pid <= 0 || pid > INT_MAX) return 0;
  p++;
  size_t suffix = 0;
  for (; p[suffix]; suffix++) {
    char c = p[suffix];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) return 0;
  }
  return suffix == 6 ? static_cast<pid_t>(pid) : 0;
}

bool process_exists(pid_t pid) { return kill(pid, 0) == 0 || errno == EPERM; }

}  // namespace

int remove_stale_temporaries(const std::string& dir, int min_age_s) {
  DIR* d = opendir(dir.c_str());
  if (!d) return 0;
  const time_t now = time(nullptr);
  const uid_t me = geteuid();
  int removed = 0;
  while (const dirent* e = readdir(d)) {
    pid_t pid = temporary_writer(e->d_name);
    if (pid == 0 || process_exists(pid)) continue;
    struct stat st;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISREG(st.st_mode) || st.st_uid != me || now - st.st_mtime < min_age_s) continue;
    if (unlinkat(dirfd(d), e->d_name, 0) == 0) removed++;
  }
  closedir(d);
  return removed;
}

FileSizeLimitAsError::FileSizeLimitAsError() {
  sigset_t xfsz, previous;
  sigemptyset(&xfsz);
  sigaddset(&xfsz, SIGXFSZ);
  blocked_ = pthread_sigmask(SIG_BLOCK, &xfsz, &previous) == 0 && !sigismember(&previous, SIGXFSZ);
}

FileSizeLimitAsError::~FileSizeLimitAsError() {
  if (!blocked_) return;
  sigset_t xfsz, pending;
  sigemptyset(&xfsz);
  sigaddset(&xfsz, SIGXFSZ);
  if (sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ)) {
    const timespec no_wait{0, 0};
    while (sigtimedwait(&xfsz, nullptr, &no_wait) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_UNBLOCK, &xfsz, nullptr);
}

}  // namespace rperf
