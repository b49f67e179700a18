// io/atomic_file: a file is replaced whole or not at all, through symlinks, on a real file system.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "io/atomic_file.hh"

using namespace rperf;

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/rperf-atomic-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  std::string operator/(const std::string& name) const { return path + "/" + name; }
};

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

size_t entries(const std::string& dir) {
  std::string cmd = "test $(ls -A '" + dir + "' | wc -l) -eq ";
  for (size_t n = 0; n < 16; n++) {
    if (std::system((cmd + std::to_string(n)).c_str()) == 0) return n;
  }
  return 99;
}

bool exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

// A file last written `age_s` seconds ago.
void make_file(const std::string& path, int age_s) {
  std::ofstream(path) << "partial";
  struct timeval old[2];
  gettimeofday(&old[0], nullptr);
  old[0].tv_sec -= age_s;
  old[1] = old[0];
  utimes(path.c_str(), old);
}

// The pid of a process that has ended (reaped).
pid_t dead_pid() {
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  waitpid(pid, nullptr, 0);
  return pid;
}

bool is_symlink(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

}  // namespace

TEST(AtomicFile, WritesAndReplacesWholeFiles) {
  TempDir dir;
  ASSERT_EQ(write_file_atomically(dir / "a.txt", "first", 5), 0);
  EXPECT_EQ(read(dir / "a.txt"), "first");
  chmod((dir / "a.txt").c_str(), 0600);
  ASSERT_EQ(write_file_atomically(dir / "a.txt", "second", 6), 0);
  EXPECT_EQ(read(dir / "a.txt"), "second");
  struct stat st;
  ASSERT_EQ(stat((dir / "a.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << "the replaced file keeps its mode";
  EXPECT_EQ(entries(dir.path), 1u) << "no temporary file is left";
}

TEST(AtomicFile, AnAbandonedWriteLeavesThePreviousFile) {
  TempDir dir;
  ASSERT_EQ(write_file_atomically(dir / "a.txt", "previous", 8), 0);
  {
    AtomicFile f;
    ASSERT_EQ(f.open(dir / "a.txt"), 0);
    ASSERT_EQ(write(f.fd(), "half", 4), 4);
    EXPECT_EQ(read(dir / "a.txt"), "previous") << "readers see the old file while it is written";
    EXPECT_EQ(entries(dir.path), 2u);
  }  // destroyed uncommitted: abandoned
  EXPECT_EQ(read(dir / "a.txt"), "previous");
  EXPECT_EQ(entries(dir.path), 1u);
  EXPECT_EQ(write_file_atomically(dir.path, "x", 1), EISDIR);
  EXPECT_EQ(write_file_atomically(dir / "a.txt/b", "x", 1), ENOTDIR);
  EXPECT_EQ(write_file_atomically(dir / "missing/b", "x", 1), ENOENT);
}

TEST(AtomicFile, ReplacesASymlinksTargetAndKeepsTheLink) {
  TempDir dir;
  ASSERT_EQ(mkdir((dir / "real").c_str(), 0700), 0);
  ASSERT_EQ(write_file_atomically(dir / "real/t.txt", "old", 3), 0);
  ASSERT_EQ(symlink("real/t.txt", (dir / "link").c_str()), 0);
  ASSERT_EQ(symlink((dir / "link").c_str(), (dir / "chain").c_str()), 0);  // absolute, to a link
  ASSERT_EQ(write_file_atomically(dir / "chain", "new", 3), 0);
  EXPECT_TRUE(is_symlink(dir / "chain"));
  EXPECT_TRUE(is_symlink(dir / "link"));
  EXPECT_EQ(read(dir / "real/t.txt"), "new");
  EXPECT_EQ(entries(dir / "real"), 1u);
  ASSERT_EQ(symlink("real/created.txt", (dir / "dangling").c_str()), 0);
  ASSERT_EQ(write_file_atomically(dir / "dangling", "made", 4), 0);
  EXPECT_EQ(read(dir / "real/created.txt"), "made");
  ASSERT_EQ(symlink("loop", (dir / "loop").c_str()), 0);
  EXPECT_EQ(write_file_atomically(dir / "loop", "x", 1), ELOOP);
}

TEST(AtomicFile, WritesDevicesInPlaceAndRefusesAFifoWithoutReader) {
  EXPECT_EQ(write_file_atomically("/dev/null", "x", 1), 0);
  EXPECT_EQ(write_file_atomically("/dev/full", "x", 1), ENOSPC);
  TempDir dir;
  ASSERT_EQ(mkfifo((dir / "fifo").c_str(), 0600), 0);
  EXPECT_EQ(write_file_atomically(dir / "fifo", "x", 1), ENXIO) << "no reader: refused at once, not a blocked open";
}

TEST(AtomicFile, WritesTheProcessesOpenFilesInPlace) {
  // /dev/stdout, /dev/fd/N: a link into /proc to a pipe or to the file a shell opened. Renaming
  // over that file would leave the process's descriptor on the old one.
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ASSERT_EQ(write_file_atomically("/dev/fd/" + std::to_string(fds[1]), "piped", 5), 0);
  char buf[8] = {};
  EXPECT_EQ(read(fds[0], buf, sizeof buf), 5);
  EXPECT_EQ(std::string(buf, 5), "piped");
  close(fds[0]);
  close(fds[1]);
  TempDir dir;
  ASSERT_EQ(write_file_atomically(dir / "out.txt", "previous", 8), 0);
  int fd = open((dir / "out.txt").c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  struct stat before, after;
  ASSERT_EQ(fstat(fd, &before), 0);
  ASSERT_EQ(write_file_atomically("/proc/self/fd/" + std::to_string(fd), "new", 3), 0);
  ASSERT_EQ(stat((dir / "out.txt").c_str(), &after), 0);
  EXPECT_EQ(before.st_ino, after.st_ino) << "the same file, written in place";
  EXPECT_EQ(read(dir / "out.txt"), "new");
  close(fd);
  EXPECT_EQ(entries(dir.path), 1u);
}

// A save killed mid-write (SIGKILL) leaves its temporary file; the next save to the directory
// removes it once its writer is gone and it is old, and nothing else.
TEST(AtomicFile, ASaveRemovesTheTemporaryFilesOfDeadWriters) {
  TempDir dir;
  const std::string dead = std::to_string(dead_pid());
  const int old = kStaleTemporaryAge + 60;
  make_file(dir / ("a.json.gz.tmp-" + dead + "-Ab3xYz"), old);      // removed
  make_file(dir / ("other.txt.tmp-" + dead + "-000000"), old);      // removed: any target of the directory
  make_file(dir / ("b.json.gz.tmp-" + dead + "-Ab3xYz"), 5);        // recent: may be another namespace's writer
  const std::string live = std::to_string(getpid());
  make_file(dir / ("c.json.gz.tmp-" + live + "-Ab3xYz"), old);      // its writer lives
  make_file(dir / ("d.json.gz.tmp-Ab3xYz"), old);                    // not our pattern (no pid)
  make_file(dir / ("e.json.gz.tmp-" + dead + "-Ab3xY"), old);       // not our pattern (5 letters)
  make_file(dir / ("f.tmp-" + dead + "-Ab3xYz.keep"), old);         // not our pattern (suffix)
  ASSERT_EQ(mkdir((dir / ("g.tmp-" + dead + "-Ab3xYz")).c_str(), 0700), 0);  // not a file
  ASSERT_EQ(write_file_atomically(dir / "a.json.gz", "new", 3), 0);
  EXPECT_FALSE(exists(dir / ("a.json.gz.tmp-" + dead + "-Ab3xYz")));
  EXPECT_FALSE(exists(dir / ("other.txt.tmp-" + dead + "-000000")));
  EXPECT_TRUE(exists(dir / ("b.json.gz.tmp-" + dead + "-Ab3xYz")));
  EXPECT_TRUE(exists(dir / ("c.json.gz.tmp-" + live + "-Ab3xYz")));
  EXPECT_TRUE(exists(dir / "d.json.gz.tmp-Ab3xYz"));
  EXPECT_TRUE(exists(dir / ("e.json.gz.tmp-" + dead + "-Ab3xY")));
  EXPECT_TRUE(exists(dir / ("f.tmp-" + dead + "-Ab3xYz.keep")));
  EXPECT_TRUE(exists(dir / ("g.tmp-" + dead + "-Ab3xYz")));
  EXPECT_EQ(read(dir / "a.json.gz"), "new");
  EXPECT_EQ(remove_stale_temporaries(dir.path, 0), 1) << "b, once it is old enough";
}

TEST(AtomicFile, TheTemporaryNameCarriesTheWritersPid) {
  TempDir dir;
  AtomicFile f;
  ASSERT_EQ(f.open(dir / "a.txt"), 0);
  EXPECT_EQ(entries(dir.path), 1u);
  EXPECT_EQ(std::system(("ls '" + dir.path + "' | grep -qx 'a.txt.tmp-" + std::to_string(getpid()) + "-......'").c_str()), 0);
}

// Under a file size limit (`ulimit -f`) a write past it fails with EFBIG instead of SIGXFSZ
// ending the process, and no temporary file is left. In a child: the limit is the process's.
TEST(AtomicFile, AFileSizeLimitIsAnErrorNotADeadlySignal) {
  TempDir dir;
  pid_t pid = fork();
  if (pid == 0) {
    struct rlimit limit = {100, 100};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(10);
    std::string big(1000, 'x');
    if (write_file_atomically(dir / "big.txt", big.data(), big.size()) != EFBIG) _exit(11);
    if (entries(dir.path) != 0) _exit(12);
    {
      FileSizeLimitAsError limit_as_error;  // any write of the thread, nested scopes too
      FileSizeLimitAsError nested;
      int fd = open((dir / "raw.txt").c_str(), O_WRONLY | O_CREAT, 0600);
      if (write(fd, big.data(), 100) != 100 || write(fd, big.data(), 1) != -1 || errno != EFBIG) _exit(13);
      close(fd);
    }
    sigset_t mask;
    pthread_sigmask(SIG_BLOCK, nullptr, &mask);
    if (sigismember(&mask, SIGXFSZ)) _exit(14);  // the thread's mask is as it was
    sigset_t pending;
    sigpending(&pending);
    if (sigismember(&pending, SIGXFSZ)) _exit(15);  // the raised signal was taken
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "ended by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}
