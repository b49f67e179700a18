// Threads' names (profile/thread_names): the header key's entries, each thread's last name,
// the round trips through the JSON and pprof files, and a merge's child names by pid.
#include <gtest/gtest.h>

#include "io/encoders.hh"
#include "io/loader.hh"
#include "io/output.hh"
#include "profile/thread_names.hh"
#include "profile/transform.hh"
#include "test_profiles.hh"

using namespace rperf;
using namespace rperf::fixtures;

namespace {

Profile two_threads() {
  Profile p = make_profile({{"/app/a.rb", "A#a", 1}, {"/app/b.rb", "B#b", 2}}, {{{0}, 10, 1}, {{1}, 20, 2}, {{0, 1}, 5, 3}});
  set_thread_name_entries(p, {{2, "worker", 100, {}}, {2, "worker renamed", 200, {}}, {3, "reaper", 0, {}}});
  return p;
}

std::string json_of(const Profile& p) {
  std::string s;
  Output out(&s, OutputOptions());
  encode_json(p, JsonValue::object(), out);
  EXPECT_EQ(out.finish(), 0);
  return s;
}

}  // namespace

TEST(ThreadNamesTest, EachThreadShowsItsLastName) {
  Profile p = two_threads();
  ThreadNames names(p);
  EXPECT_EQ(names.of(1), "");
  EXPECT_EQ(names.of(2), "worker renamed");
  EXPECT_EQ(names.label(2), "thread 2 (worker renamed)");
  EXPECT_EQ(names.label(1), "thread 1");
  EXPECT_EQ(names.of(3, "123"), "") << "another process's thread 3 is not this one";
}

TEST(ThreadNamesTest, NoNamesNoKey) {
  Profile p = two_threads();
  set_thread_name_entries(p, {});
  EXPECT_FALSE(p.header.has(kThreadNamesKey));
  EXPECT_TRUE(ThreadNames(p).empty());
}

TEST(ThreadNamesTest, MalformedEntriesAreSkipped) {
  Profile p = two_threads();
  JsonValue list = JsonValue::array();
  list.push(JsonValue::string("not an entry"));
  JsonValue bad = JsonValue::array();
  bad.push(JsonValue::integer(-1));
  bad.push(JsonValue::string("negative"));
  list.push(bad);
  JsonValue huge = JsonValue::array();
  huge.push(JsonValue::integer(int64_t{1} << 40));
  huge.push(JsonValue::string("too large"));
  list.push(huge);
  JsonValue good = JsonValue::array();
  good.push(JsonValue::integer(7));
  good.push(JsonValue::string("kept"));
  list.push(good);
  p.header.set(kThreadNamesKey, list);
  std::vector<ThreadName> entries = thread_name_entries(p);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].thread_seq, 7u);
  EXPECT_EQ(entries[0].name, "kept");
  EXPECT_EQ(entries[0].time_ns, 0);
}

TEST(ThreadNamesTest, JsonRoundTripKeepsEveryEntry) {
  Profile p = two_threads();
  std::string json = json_of(p);
  Profile back;
  std::string error;
  ASSERT_TRUE(load_json_profile(json.data(), json.size(), back, error)) << error;
  EXPECT_EQ(thread_name_entries(back), thread_name_entries(p));
}

TEST(ThreadNamesTest, PprofCarriesEachThreadsLastName) {
  Profile p = two_threads();
  std::string pb = encode_pprof(p, {});
  EXPECT_NE(pb.find("thread_name"), std::string::npos);
  Profile back;
  std::string error;
  ASSERT_TRUE(load_pprof_profile(pb.data(), pb.size(), back, error)) << error;
  ThreadNames names(back);
  EXPECT_EQ(names.of(1), "");
  EXPECT_EQ(names.of(2), "worker renamed");
  EXPECT_EQ(names.of(3), "reaper");
}

TEST(ThreadNamesTest, PprofWithoutNamesWritesNoLabel) {
  Profile p = two_threads();
  set_thread_name_entries(p, {});
  EXPECT_EQ(encode_pprof(p, {}).find("thread_name"), std::string::npos);
}

TEST(ThreadNamesTest, MergedChildNamesAreItsProcesss) {
  Profile root = two_threads();
  Profile child = make_profile({{"/app/c.rb", "C#c", 1}}, {{{0}, 10, 2}});
  set_thread_name_entries(child, {{2, "child worker", 50, {}}});
  merge_child(root, child, "4242");
  ThreadNames names(root);
  EXPECT_EQ(names.of(2), "worker renamed");
  EXPECT_EQ(names.of(2, "4242"), "child worker");

  // The pprof file names the child's thread by its %pid label.
  std::string pb = encode_pprof(root, {});
  Profile back;
  std::string error;
  ASSERT_TRUE(load_pprof_profile(pb.data(), pb.size(), back, error)) << error;
  ThreadNames read(back);
  EXPECT_EQ(read.of(2), "worker renamed");
  EXPECT_EQ(read.of(2, "4242"), "child worker");
}
