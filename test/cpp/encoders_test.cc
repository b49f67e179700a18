#include <algorithm>
#include <gtest/gtest.h>
#include <zlib.h>

#include "io/encoders.hh"
#include "io/gzip.hh"
#include "io/output.hh"
#include "test_profiles.hh"

using namespace rperf;
using namespace rperf::fixtures;

namespace {
Profile sample_profile() {
  return make_profile({{"a.rb", "<main>", 1}, {"a.rb", "Foo#bar", 10}, {"a.rb", "Foo#bar", 12}, {"<C method>", "Integer#times", 0},
                       {"b.rb", "semi;colon\nname", 3}},
                      {{{1, 0}, 100, 1, 0}, {{2, 0}, 50, 1, 2}, {{3, 1, 0}, 25, 2, 1}, {{4, 0}, 7, 1, 0}},
                      {{}, {{"%GVL", "blocked"}}, {{"endpoint", "/x"}}});
}

std::string gunzip(const std::string& in) {
  z_stream zs{};
  inflateInit2(&zs, 15 + 16);
  std::string out(64 << 20, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(&out[0]);
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(inflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  inflateEnd(&zs);
  return out;
}
template <typename Encode>
std::string render(Encode encode, OutputOptions options = OutputOptions()) {
  std::string s;
  Output out(&s, options);
  encode(out);
  EXPECT_EQ(out.finish(), 0);
  return s;
}
}  // namespace

TEST(Gzip, RoundTripsThroughZlib) {
  std::string data(100000, 'x');
  for (size_t i = 0; i < data.size(); i += 7) data[i] = static_cast<char>(i);
  std::string gz = gzip_compress(data);
  ASSERT_GE(gz.size(), 18u);
  EXPECT_EQ(static_cast<unsigned char>(gz[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(gz[1]), 0x8b);
  EXPECT_EQ(gunzip(gz), data);
}

TEST(Gzip, LargeInputsCompressInParallelIntoOneValidMember) {
  std::string data;
  for (int i = 0; data.size() < (20u << 20); i++) data += "[\"app/models/user.rb\",\"User#name_" + std::to_string(i % 5000) + "\"],";
  std::string gz = gzip_compress(data, 1);
  ASSERT_FALSE(gz.empty());
  EXPECT_EQ(gunzip(gz), data);
  EXPECT_LT(gz.size(), data.size() / 5);
}

// The inflating thread hands over its chunks in order whatever sizes the reader asks for, and
// its stream's verdict (done, or what is wrong) once read() has returned 0.
TEST(Gzip, InflateAheadReadsTheWholeMemberInOrderAndReportsDamage) {
  std::string data;
  for (int i = 0; data.size() < (3u << 20); i++) data += "[\"a.rb\",\"m" + std::to_string(i) + "\"],";
  const std::string gz = gzip_compress(data, 1);
  for (size_t step : {size_t{1} << 20, size_t{4093}, size_t{256} << 10}) {
    InflateAhead ahead(gz.data(), gz.size());
    std::string out;
    std::string buf(step, '\0');
    for (size_t n; (n = ahead.read(&buf[0], step)) > 0;) out.append(buf, 0, n);
    EXPECT_EQ(out.size(), data.size()) << step;
    EXPECT_TRUE(out == data) << step;
    EXPECT_TRUE(ahead.done());
    EXPECT_EQ(ahead.error(), "");
    EXPECT_EQ(ahead.read(&buf[0], step), 0u);
  }
  InflateAhead cut(gz.data(), gz.size() / 2);
  std::string buf(1 << 16, '\0');
  size_t total = 0;
  for (size_t n; (n = cut.read(&buf[0], buf.size())) > 0;) total += n;
  EXPECT_LT(total, data.size());
  EXPECT_FALSE(cut.done());
  EXPECT_EQ(cut.error(), "truncated");
}

// A reader that stops early (a parse error) ends the thread at destruction, mid-stream.
TEST(Gzip, InflateAheadStopsItsThreadWhenTheReaderLeavesEarly) {
  std::string data(8u << 20, 'y');
  const std::string gz = gzip_compress(data, 1);
  for (int i = 0; i < 20; i++) {
    InflateAhead ahead(gz.data(), gz.size());
    char buf[100];
    EXPECT_EQ(ahead.read(buf, sizeof buf), sizeof buf);
  }
  InflateAhead never_read(gz.data(), gz.size());
}

TEST(Pprof, StartsWithSampleTypeAndHasEmptyFirstString) {
  std::string pb = encode_pprof(sample_profile(), {"a comment"});
  ASSERT_FALSE(pb.empty());
  EXPECT_EQ(pb[0], (1 << 3) | 2);  // field 1 (sample_type), length-delimited
  EXPECT_NE(pb.find(std::string("\x32\x00", 2)), std::string::npos);  // string_table[0] = ""
  EXPECT_NE(pb.find("Foo#bar"), std::string::npos);
  EXPECT_NE(pb.find("thread_seq"), std::string::npos);
}

TEST(Collapsed, EscapesAndMergesStacks) {
  std::string c = render([](Output& out) { encode_collapsed(sample_profile(), out); });
  EXPECT_NE(c.find("<main>;Foo#bar 150\n"), std::string::npos);  // two lines of Foo#bar: one frame name
  EXPECT_NE(c.find("<main>;semi,colon name 7\n"), std::string::npos);
  EXPECT_NE(c.find("<main>;Foo#bar;Integer#times 25\n"), std::string::npos);
}

TEST(Text, CumulativeCountsAFunctionOncePerSample) {
  Profile p = make_profile({{"a.rb", "fib", 1}, {"a.rb", "fib", 2}, {"a.rb", "<main>", 1}}, {{{0, 1, 0, 2}, 100, 1, 0}});
  std::string t = encode_text(p, 10);
  EXPECT_NE(t.find("100.0%  fib (a.rb)"), std::string::npos) << t;
  EXPECT_EQ(t.find("200.0%"), std::string::npos) << t;
}

TEST(Text, FollowsRperf011Layout) {
  Profile p = make_profile({{"a.rb", "slow", 1}, {"a.rb", "<main>", 1}}, {{{0, 1}, 1234567891, 1, 0}});
  std::string t = encode_text(p, 50);
  EXPECT_EQ(t.find("Total: 1234.6ms ("), 0u) << t;
  EXPECT_NE(t.find("\n\n Flat:\n         1,234.6 ms 100.0%  slow (a.rb)\n\n Cumulative:\n"), std::string::npos) << t;
  std::string bare = encode_text(p, 50, false);
  EXPECT_EQ(bare.find(" Flat:\n"), 0u) << bare;
  EXPECT_EQ(encode_text(make_profile({}, {}), 50), "No samples recorded.\n");
}

TEST(Json, KeysInRperf011OrderThenOurs) {
  Profile p = sample_profile();
  for (const char* key : {"max_depth", "duration_ns", "start_time_ns", "frequency", "mode"}) {
    p.header.set(key, JsonValue::integer(1));
  }
  std::string body = render([&](Output& out) { encode_json(p, JsonValue::object(), out); });
  std::vector<size_t> at;
  for (const char* key : {"\"mode\"", "\"frequency\"", "\"unique_frames\"", "\"unique_stacks\"", "\"start_time_ns\"",
                          "\"duration_ns\"", "\"aggregated_samples\"", "\"label_sets\"", "\"max_depth\""}) {
    at.push_back(body.find(key));
    ASSERT_NE(at.back(), std::string::npos) << key << " in " << body;
  }
  EXPECT_TRUE(std::is_sorted(at.begin(), at.end())) << body;
  EXPECT_NE(body.find("\"unique_frames\":5,\"unique_stacks\":4"), std::string::npos) << body;
}

TEST(Json, EscapesStringsAndReplacesInvalidUtf8) {
  std::string out;
  append_json_string(out, std::string("a\"b\\c\n\x01\xff\xc3\xa9", 10));
  EXPECT_EQ(out, "\"a\\\"b\\\\c\\n\\u0001\xef\xbf\xbd\xc3\xa9\"");
  std::string body = render([](Output& out) { encode_json(sample_profile(), JsonValue::object(), out); });
  EXPECT_EQ(body.rfind("{\"meta\":null,\"summary\":{", 0), 0u) << body;
  EXPECT_NE(body.find("\"aggregated_samples\":[[[[\"a.rb\",\"Foo#bar\",10],[\"a.rb\",\"<main>\",1]],100,1,0]"), std::string::npos) << body;
  EXPECT_NE(body.find("\"label_sets\":[{},{\"%GVL\":\"blocked\"},{\"endpoint\":\"/x\"}]"), std::string::npos);
}

TEST(Speedscope, OneSampledProfilePerThreadRootFirst) {
  std::string s = encode_speedscope(sample_profile(), "t");
  EXPECT_NE(s.find("\"name\":\"t thread 1\""), std::string::npos);
  EXPECT_NE(s.find("\"name\":\"t thread 2\""), std::string::npos);
  EXPECT_NE(s.find("\"samples\":[[0,1],[0,2],[0,4]]"), std::string::npos) << s;
  EXPECT_NE(s.find("\"weights\":[100,50,7]"), std::string::npos);
}

// The text reports' one digit grouping: counts and milliseconds, signs and fractions alike.
TEST(TextReport, GroupsTheWholePartByThousands) {
  EXPECT_EQ("0", grouped_thousands("0"));
  EXPECT_EQ("999", grouped_thousands("999"));
  EXPECT_EQ("1,000", grouped_thousands("1000"));
  EXPECT_EQ("-123,456", grouped_thousands("-123456"));
  EXPECT_EQ("1,234,567.9", grouped_thousands("1234567.9"));
  EXPECT_EQ("-100.0", grouped_thousands("-100.0"));
  EXPECT_EQ("-9,223,372,036,854,775,808", grouped_thousands(std::to_string(INT64_MIN)));
}
