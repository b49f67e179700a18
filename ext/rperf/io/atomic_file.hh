// The one way rperf writes a file: readers of the path see the previous content or the new,
// never a part of it, and a failed write leaves the previous file as it was.
//
// A regular (or missing) target is written to a temporary file beside its real path (symlinks
// followed, so a link keeps pointing to the new file and the link itself is not replaced),
// then fsync'ed and renamed over it. The temporary name carries the writer's pid
// (`<target>.tmp-<pid>-XXXXXX`): one a killed writer left behind is removed by a later commit in
// that directory once that pid is gone and the file is old (remove_stale_temporaries). A target that is not a regular file (/dev/null, a
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

// Removes from `dir` the temporary files of AtomicFile writers that are gone: our name pattern
// only, owned by this user, whose pid names no process, and unchanged for `min_age_s` seconds
// (a reused pid, or one of another pid namespace sharing the directory, is not taken for the
// writer's death while it still writes). Returns how many were removed. AtomicFile::commit
// calls it with kStaleTemporaryAge once its file is in place.
constexpr int kStaleTemporaryAge = 10 * 60;
int remove_stale_temporaries(const std::string& dir, int min_age_s);

// While alive, a write of this thread past the file size limit (RLIMIT_FSIZE, `ulimit -f`)
// fails with EFBIG instead of SIGXFSZ ending the process: the caller says which file could not
// be written, removes its temporary file, and the program's buffered output is still flushed at
// its exit. SIGXFSZ is blocked on this thread only, and the one a failed write raised is taken
// before the mask is restored.
class FileSizeLimitAsError {
 public:
  FileSizeLimitAsError();
  ~FileSizeLimitAsError();
  FileSizeLimitAsError(const FileSizeLimitAsError&) = delete;
  FileSizeLimitAsError& operator=(const FileSizeLimitAsError&) = delete;

 private:
  bool blocked_ = false;  // by this object (not already blocked by the caller)
};

}  // namespace rperf
