// The one way rperf writes a file: readers of the path see the previous content or the new,
// never a part of it, and a failed write leaves the previous file as it was.
//
// A regular (or missing) target is written to a temporary file beside its real path (symlinks
// followed, so a link keeps pointing to the new file and the link itself is not replaced),
// then fsync'ed and renamed over it. A target that is not a regular file (/dev/null, a
// terminal, a FIFO) or an open file of the process (/dev/stdout) is written in place; a FIFO without a reader fails at once (ENXIO)
// instead of blocking the opener. Ruby-independent; errors are errno values.
#pragma once
#include <string>

namespace rperf {

class AtomicFile {
 public:
  AtomicFile() = default;
  ~AtomicFile();  // an uncommitted file is abandoned
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Opens a place to write `path`: 0, or the errno of what failed (EISDIR for a directory).
  int open(const std::string& path);
  int fd() const { return fd_; }
  // Makes the written bytes the file's content: fsync, close, rename. 0 or an errno; on
  // failure the temporary file is removed and the target is untouched.
  int commit();
  // Closes and removes the temporary file; the target is untouched.
  void abandon();
  // The file that is (or will be) replaced: the path with its symlinks followed.
  const std::string& target() const { return target_; }

 private:
  int fd_ = -1;
  std::string target_;
  std::string tmp_;  // empty when writing the target in place
};

// The path a file name leads to once symlinks are followed (at most 40), whether or not that
// file exists; empty when the chain reaches /proc (/dev/stdout, /dev/fd/N: an open file of the
// process, written in place). 0 or an errno (ELOOP).
int resolve_symlinks(const std::string& path, std::string& out);

// Writes `data` to `path` through an AtomicFile. 0 or an errno.
int write_file_atomically(const std::string& path, const char* data, size_t len);

}  // namespace rperf
