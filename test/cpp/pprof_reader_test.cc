// The pprof reader (io/pprof_reader.cc) against files written by our writer (io/pprof.cc), and
// ProfileRows, the row checks it shares with the JSON loader and the Ruby Hash converter.
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>

#include "io/encoders.hh"
#include "io/loader.hh"
#include "io/output.hh"
#include "profile/label_value.hh"
#include "profile/profile_rows.hh"
#include "profile/transform.hh"
#include "test_profiles.hh"

using namespace rperf;
using namespace rperf::fixtures;

namespace {

// Frames, labels, an empty stack, numeric labels (0 too), an empty string label, start lines,
// several threads, and allocation samples.
Profile rich_profile() {
  Profile p = make_profile({{"a.rb", "<main>", 1}, {"a.rb", "Foo#bar", 10}, {"a.rb", "Foo#bar", 12}, {"<C method>", "Integer#times", 0}},
                           {{{1, 0}, 100, 1, 0}, {{2, 0}, 50, 2, 2}, {{3, 1, 0}, 25, 3, 1}, {{}, 7, 1, 3}, {{0}, 9, 1, 4}},
                           {{}, {{"%GVL", "blocked", false}}, {{"endpoint", "/x", false}, {"n", "0", true}, {"big", "-1099511627776", true}},
                            {{"e", "", false}}, {{"%GC", "sweep", false}}});
  p.header.set("start_time_ns", JsonValue::integer(123));
  p.header.set("duration_ns", JsonValue::integer(456));
  p.frames.at(1).start_line = 9;
  p.frames.at(2).start_line = 9;
  p.header.set("allocation_interval", JsonValue::integer(32));
  uint32_t string_class = p.class_names.intern("String");
  uint32_t array_class = p.class_names.intern("Array");
  p.allocations.push_back(AllocationSample{p.samples[0].stack, 1, 0, string_class, 96, 32, 0});
  p.allocations.push_back(AllocationSample{p.samples[1].stack, 2, 2, array_class, 32, 0, 0});
  return p;
}

// A sample as text, whatever the ids: "stack|weight|thread|labels|state".
std::string labels_text(const LabelSet& set) {
  std::set<std::string> parts;
  int64_t number;
  for (const Label& l : set) {
    parts.insert(label_value::to_s(l.key) + "=" + label_value::to_s(l.value) + (label_value::int64_of(l.value, number) ? "i" : "s"));
  }
  std::string out;
  for (const std::string& s : parts) out += s + ",";
  return out;
}
std::multiset<std::string> samples_of(const Profile& p) {
  std::multiset<std::string> out;
  for (const Sample& s : p.samples) {
    out.insert(stack_text(p, s.stack) + "|" + std::to_string(s.weight_ns) + "|" + std::to_string(s.thread_seq) + "|" +
               labels_text(p.label_sets[s.label_set]) + "|" + std::to_string(s.vm_state));
  }
  return out;
}
std::multiset<std::string> allocations_of(const Profile& p) {
  std::multiset<std::string> out;
  for (const AllocationSample& a : p.aggregated_allocations()) {
    out.insert(stack_text(p, a.stack) + "|" + std::to_string(a.count) + "|" + std::to_string(a.retained) + "|" + p.class_names[a.type] +
               "|" + std::to_string(a.thread_seq) + "|" + labels_text(p.label_sets[a.label_set]));
  }
  return out;
}

bool load(const std::string& bytes, Profile& p, std::string& error) { return load_pprof_profile(bytes.data(), bytes.size(), p, error); }

// A protobuf written by hand, for files our writer would never make.
struct Proto {
  std::string b;
  Proto& varint(uint64_t v) {
    while (v >= 0x80) {
      b += static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    b += static_cast<char>(v);
    return *this;
  }
  Proto& num(int field, uint64_t v) { return varint(static_cast<uint64_t>(field) << 3).varint(v); }
  Proto& bytes(int field, const std::string& s) {
    varint((static_cast<uint64_t>(field) << 3) | 2).varint(s.size());
    b += s;
    return *this;
  }
  Proto& msg(int field, const Proto& m) { return bytes(field, m.b); }
};

}  // namespace

TEST(PprofReader, RoundTripsWhatTheWriterWrote) {
  Profile p = rich_profile();
  infer_vm_states(p);  // the states its %GVL/%GC labels name, as a loaded profile has them
  std::string pb = encode_pprof(p, {"rperf test"});
  for (const std::string& bytes : {pb, gzip_compress(pb)}) {
    Profile q;
    std::string error;
    ASSERT_TRUE(load(bytes, q, error)) << error;
    EXPECT_EQ(samples_of(p), samples_of(q));
    EXPECT_EQ(allocations_of(p), allocations_of(q));
    EXPECT_EQ(q.mode(), "wall");
    EXPECT_EQ(q.frequency(), 1000);
    EXPECT_EQ(q.header.start_time_ns.value_or(0), 123);
    EXPECT_EQ(q.header.duration_ns.value_or(0), 456);
    EXPECT_EQ(q.header.allocation_interval.value_or(0), 32);
    EXPECT_EQ(q.header.allocation_sample_count.value_or(0), 4);  // (96 + 32) / 32
    EXPECT_FALSE(q.header.allocation_interval_guessed);
    EXPECT_TRUE(q.has_lines);
    for (uint32_t i = 0; i < q.frames.size(); i++) {
      EXPECT_EQ(q.frames[i].start_line, q.frames[i].label == "Foo#bar" ? 9 : 0) << q.frames[i].label;
    }
    // The %GVL/%GC labels are VM states again, as after the JSON loader.
    int states = 0;
    for (const Sample& s : q.samples) states += s.vm_state != kRunning;
    EXPECT_EQ(states, 2);
  }
}

TEST(PprofReader, WithoutTheIntervalCommentTheCountsGcdIsGuessed) {
  std::string pb = encode_pprof(rich_profile(), {});
  size_t at = pb.find(kPprofAllocationComment);
  ASSERT_NE(at, std::string::npos);
  pb[at + std::strlen(kPprofAllocationComment) - 3] = 'o';  // "one in" -> "one on"
  Profile q;
  std::string error;
  ASSERT_TRUE(load(pb, q, error)) << error;
  EXPECT_EQ(q.header.allocation_interval.value_or(0), 32);
  ASSERT_TRUE(q.header.allocation_interval_guessed);
  EXPECT_TRUE(*q.header.allocation_interval_guessed);
}

TEST(PprofReader, WrongFilesSayWhat) {
  std::string pb = encode_pprof(rich_profile(), {});
  auto error_of = [](const std::string& bytes) {
    Profile q;
    std::string error;
    EXPECT_FALSE(load(bytes, q, error));
    return error;
  };
  EXPECT_EQ(error_of(pb.substr(0, pb.size() - 1)), "not a readable pprof profile (truncated)");
  std::string gz = gzip_compress(pb);
  EXPECT_EQ(error_of(gz.substr(0, gz.size() / 2)).rfind("corrupt gzip data", 0), 0u);
  EXPECT_NE(error_of(Proto().bytes(6, "x").b).find("no string table"), std::string::npos);
  Proto unknown;
  unknown.msg(2, Proto().num(1, 7)).bytes(6, "");
  EXPECT_NE(error_of(unknown.b).find("unknown location 7"), std::string::npos);
  std::string inuse = pb;
  inuse.replace(inuse.find("alloc_objects"), 13, "alloc_objectz");
  EXPECT_NE(error_of(inuse).find("inuse_objects without alloc_objects"), std::string::npos);
  std::string classless = pb;
  classless.replace(classless.find("object_class"), 12, "object_clasz");
  EXPECT_NE(error_of(classless).find("allocation sample without an object_class label"), std::string::npos);
  EXPECT_NE(error_of(std::string("\x0b", 1)).find("wire type 3"), std::string::npos);
}

// Every truncation and single-byte corruption of a real file either loads or is refused with a
// message: never a crash (the ASan/UBSan build runs this too), never an unbounded allocation.
TEST(PprofReader, TruncatedAndCorruptFilesAreRefusedOrRead) {
  std::string pb = encode_pprof(rich_profile(), {"rperf test"});
  size_t refused = 0, read = 0;
  auto check = [&](const std::string& bytes) {
    Profile q;
    std::string error;
    if (load(bytes, q, error)) {
      read++;
      EXPECT_LE(q.samples.size() + q.allocations.size(), bytes.size());
    } else {
      refused++;
      EXPECT_TRUE(error.rfind("not a readable pprof profile (", 0) == 0 || error.rfind("corrupt gzip data (", 0) == 0) << error;
    }
  };
  for (size_t n = 0; n < pb.size(); n++) check(pb.substr(0, n));
  for (size_t i = 0; i < pb.size(); i++) {
    for (unsigned char mask : {0x01, 0x04, 0x80, 0xff}) {
      std::string bad = pb;
      bad[i] = static_cast<char>(static_cast<unsigned char>(bad[i]) ^ mask);
      check(bad);
    }
  }
  std::string gz = gzip_compress(pb);
  for (size_t n = 0; n < gz.size(); n += 7) check(gz.substr(0, n));
  EXPECT_GT(refused, pb.size());
  EXPECT_GT(read, 0u);
}

// A long name behind many locations (each a few bytes) would be copied into every frame: the
// reader counts what it copies against its budget and refuses the file instead.
TEST(PprofReader, RefusesAFileThatNamesALongStringManyTimes) {
  Proto file;
  const int kLocations = 100000;
  for (int i = 1; i <= kLocations; i++) {
    Proto line;
    line.num(1, 1).num(2, static_cast<uint64_t>(i));
    file.msg(4, Proto().num(1, static_cast<uint64_t>(i)).msg(4, line));
  }
  Proto sample;
  Proto ids;
  for (int i = 1; i <= kLocations; i++) ids.varint(static_cast<uint64_t>(i));
  sample.bytes(1, ids.b).bytes(2, Proto().varint(1).b);
  file.msg(2, sample);
  file.msg(5, Proto().num(1, 1).num(2, 1).num(4, 1));
  file.bytes(6, "").bytes(6, std::string(1 << 20, 'x'));
  Profile q;
  std::string error;
  EXPECT_FALSE(load(file.b, q, error));
  EXPECT_NE(error.find("over the loader's memory budget"), std::string::npos) << error;
}

// Re-encoders number things their own way: ids not from 1, unpacked repeated fields.
TEST(PprofReader, ReadsSparseIdsAndUnpackedFields) {
  Proto file;
  file.msg(1, Proto().num(1, 1).num(2, 2));  // sample_type: cpu/nanoseconds
  file.msg(2, Proto().num(1, 900).num(1, 700).num(2, 42).msg(3, Proto().num(1, 3).num(3, 2)));
  file.msg(4, Proto().num(1, 700).msg(4, Proto().num(1, 50).num(2, 1)));
  file.msg(4, Proto().num(1, 900).msg(4, Proto().num(1, 60).num(2, 5)));
  file.msg(5, Proto().num(1, 50).num(2, 4).num(4, 5).num(5, 1));
  file.msg(5, Proto().num(1, 60).num(2, 6).num(4, 5));
  for (const char* s : {"", "cpu", "nanoseconds", "thread_seq", "main", "m.rb", "leaf"}) file.bytes(6, s);
  file.num(12, 1000000);
  Profile q;
  std::string error;
  ASSERT_TRUE(load(file.b, q, error)) << error;
  ASSERT_EQ(q.samples.size(), 1u);
  EXPECT_EQ(stack_text(q, q.samples[0].stack), "main:1;leaf:5");
  EXPECT_EQ(q.samples[0].weight_ns, 42);
  EXPECT_EQ(q.samples[0].thread_seq, 2u);
  EXPECT_EQ(q.mode(), "cpu");
  EXPECT_EQ(q.frequency(), 1000);
}

TEST(ProfileRows, ChecksEachRowAndSharesEqualLabelSets) {
  Profile p;
  ProfileRows rows(p, false);
  rows.label_set({});
  rows.label_set(labels({{"a", "1", false}}));
  rows.label_set(labels({{"a", "1", false}}));  // equal sets are valid
  uint32_t stack = p.stacks.intern(std::vector<uint32_t>{p.frames.intern("f.rb", "m", 0)});
  ASSERT_TRUE(rows.sample(stack, 10, 1, 2));
  ASSERT_TRUE(rows.sample(stack, 20, 1, 1));
  EXPECT_FALSE(rows.sample(stack, 30, 1, 3));
  EXPECT_EQ(rows.error(), "aggregated_samples[2]: label_set_id 3 has no label set (ids: 0 to 2)");
  EXPECT_FALSE(rows.allocation(stack, 1, 1, -1, rows.class_name("String", 6), 0, false));
  EXPECT_EQ(rows.error(), "allocation_samples[0]: label_set_id -1 has no label set (ids: 0 to 2)");
  rows.start_line("f.rb", 4, "m", 1, 7);
  rows.finish();
  ASSERT_EQ(p.samples.size(), 2u);
  EXPECT_EQ(p.samples[0].label_set, p.samples[1].label_set);
  EXPECT_EQ(p.label_sets.size(), 2u);
  EXPECT_EQ(p.frames[0].start_line, 7);
  EXPECT_TRUE(is_body_key("label_sets"));
  EXPECT_FALSE(is_body_key("mode"));
}
