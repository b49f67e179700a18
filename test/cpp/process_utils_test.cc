// util/child_output (a program's standard output, read to its end, with wake-ups and a kill)
// and util/peak_rss, against real processes.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "util/child_output.hh"
#include "util/peak_rss.hh"

namespace rperf {
namespace {

std::string output_of(const ChildOutput& c) { return std::string(c.buf ? c.buf : "", c.len); }

TEST(ChildOutput, ReadsAProgramsOutputToItsEndAndItsStatus) {
  const char* argv[] = {"sh", "-c", "printf 'a\\nb'; head -c 100000 /dev/zero | tr '\\0' x; echo oops >&2", nullptr};
  ChildOutput c;
  ASSERT_EQ(ChildStart::kStarted, start_child(const_cast<char* const*>(argv), c));
  read_child(&c);
  ASSERT_TRUE(c.done);
  EXPECT_TRUE(child_succeeded(c));
  std::string out = output_of(c);
  EXPECT_EQ("a\nb" + std::string(100000, 'x'), out) << "stderr goes to /dev/null";
  release_child(c);

  const char* failing[] = {"sh", "-c", "echo partial; exit 3", nullptr};
  ASSERT_EQ(ChildStart::kStarted, start_child(const_cast<char* const*>(failing), c));
  read_child(&c);
  EXPECT_FALSE(child_succeeded(c));
  EXPECT_EQ("partial\n", output_of(c));
  release_child(c);
}

TEST(ChildOutput, AProgramThatCannotStartIsSaid) {
  const char* argv[] = {"/nonexistent/rperf-no-such-program", nullptr};
  ChildOutput c;
  EXPECT_EQ(ChildStart::kNotStarted, start_child(const_cast<char* const*>(argv), c));
}

// A wake-up returns the reader with the program still running; a kill then ends it, and the
// reader reaps it.
TEST(ChildOutput, AWakeReturnsTheReaderAndAKillEndsTheProgram) {
  const char* argv[] = {"sh", "-c", "echo started; exec sleep 30", nullptr};
  ChildOutput c;
  ASSERT_EQ(ChildStart::kStarted, start_child(const_cast<char* const*>(argv), c));
  ASSERT_GE(c.wake, 0);
  auto t0 = std::chrono::steady_clock::now();
  std::thread waker([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    wake_child(&c);
  });
  read_child(&c);
  waker.join();
  EXPECT_FALSE(c.done) << "woken, not finished";
  EXPECT_EQ(0, kill(c.pid, 0)) << "the program still runs";
  kill_child(&c);
  c.ignore_wake = true;
  read_child(&c);
  EXPECT_TRUE(c.done);
  EXPECT_TRUE(WIFSIGNALED(c.status));
  EXPECT_EQ(SIGKILL, WTERMSIG(c.status));
  EXPECT_EQ("started\n", output_of(c));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20)) << "not the program's 30 s";
  release_child(c);
}

// The peak is at least the current resident set, and grows when more memory is touched.
TEST(PeakRss, IsAtLeastTheResidentSetAndFollowsIt) {
  std::ifstream status("/proc/self/status");
  long rss = -1;
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) rss = std::strtol(line.c_str() + 6, nullptr, 10);
  }
  ASSERT_GT(rss, 0);
  EXPECT_GE(peak_rss_kb(), rss);  // read after: the peak can only have grown
  const size_t bytes = 64u << 20;
  char* block = static_cast<char*>(std::malloc(bytes));
  ASSERT_NE(nullptr, block);
  for (size_t i = 0; i < bytes; i += 4096) block[i] = static_cast<char>(i);
  long after = peak_rss_kb();
  std::free(block);
  EXPECT_GE(after, rss + 60 * 1024) << "64 MB touched";
}

}  // namespace
}  // namespace rperf
