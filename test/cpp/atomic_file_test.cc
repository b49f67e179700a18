// io/atomic_file: a file is replaced whole or not at all, through symlinks, on a real file system.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
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
