// The profile header: typed fields for the known keys, extras for the others, and the order
// keys were set in (what the JSON file and the Ruby Hash list) kept across both.
#include <gtest/gtest.h>

#include <type_traits>

#include "io/encoders.hh"
#include "io/loader.hh"
#include "io/output.hh"
#include "profile/profile_header.hh"
#include "profile/transform.hh"
#include "test_profiles.hh"

using namespace rperf;

namespace {

std::string json_of(const Profile& p) {
  std::string s;
  Output out(&s, OutputOptions());
  encode_json(p, JsonValue::object(), out);
  EXPECT_EQ(out.finish(), 0);
  return s;
}

// Where each key starts in a JSON document ("\"key\":"), npos when absent.
size_t at(const std::string& json, const std::string& key) { return json.find("\"" + key + "\":"); }

std::vector<std::string> keys(const ProfileHeader& h) {
  std::vector<std::string> out;
  for (const JsonValue::Member& m : h.members()) out.push_back(m.first);
  return out;
}

}  // namespace

TEST(ProfileHeaderTest, KnownAndUnknownKeysRoundTripInOrder) {
  ProfileHeader h;
  EXPECT_EQ(h.set("custom", JsonValue::string("x")), nullptr);
  EXPECT_EQ(h.set("mode", JsonValue::symbol("wall")), nullptr);
  EXPECT_EQ(h.set("pid", JsonValue::integer(7)), nullptr);
  EXPECT_EQ(h.set("frequency", JsonValue::integer(250)), nullptr);
  JsonValue gc = JsonValue::object();
  gc.set("minor_count", JsonValue::integer(2));
  EXPECT_EQ(h.set("gc_stats", gc), nullptr);
  EXPECT_EQ(h.set("maxrss_mb", JsonValue()), nullptr);

  ASSERT_TRUE(h.mode);
  EXPECT_EQ(h.mode->text, "wall");
  EXPECT_TRUE(h.mode->symbol);
  EXPECT_EQ(h.frequency.value_or(0), 250);
  ASSERT_TRUE(h.maxrss_mb);
  EXPECT_FALSE(h.maxrss_mb->has_value());  // present, and null
  EXPECT_EQ(h.extras().members().size(), 2u);
  EXPECT_EQ(keys(h), (std::vector<std::string>{"custom", "mode", "pid", "frequency", "gc_stats", "maxrss_mb"}));

  // Through another header by name, as a loader and a writer do: the same keys, values, order.
  ProfileHeader copy;
  for (const JsonValue::Member& m : h.members()) copy.set(m.first, m.second);
  std::vector<JsonValue::Member> a = h.members(), b = copy.members();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); i++) {
    EXPECT_EQ(a[i].first, b[i].first);
    EXPECT_EQ(a[i].second.kind(), b[i].second.kind()) << a[i].first;
  }
  EXPECT_EQ(copy.get("mode")->kind(), JsonValue::Kind::kSymbol);
  EXPECT_EQ(copy.get("gc_stats")->int_or("minor_count", 0), 2);
  EXPECT_TRUE(copy.get("maxrss_mb")->is_null());
  EXPECT_EQ(copy.get("pid")->as_int(), 7);
}

TEST(ProfileHeaderTest, AbsentKeysStayAbsent) {
  ProfileHeader h;
  EXPECT_TRUE(h.members().empty());
  EXPECT_FALSE(h.duration_ns);
  EXPECT_FALSE(h.get("duration_ns"));
  EXPECT_FALSE(h.has("allocation_interval"));
  h.set("duration_ns", JsonValue::integer(0));  // a zero is present
  EXPECT_TRUE(h.duration_ns);
  EXPECT_TRUE(h.has("duration_ns"));
  h.erase("duration_ns");
  EXPECT_FALSE(h.duration_ns);
  EXPECT_TRUE(h.members().empty());
  EXPECT_EQ(h.to_json().members().size(), 0u);
}

TEST(ProfileHeaderTest, TypedFieldsSetDirectlyKeepTheirOrder) {
  ProfileHeader h;
  h.duration_ns = 5;
  h.set("note", JsonValue::string("n"));
  h.frequency = 100;
  h.duration_ns = 6;  // replaced in place, as JsonValue::set does
  EXPECT_EQ(keys(h), (std::vector<std::string>{"duration_ns", "note", "frequency"}));
  h.duration_ns.reset();
  h.duration_ns = 7;  // after a reset: last
  EXPECT_EQ(keys(h), (std::vector<std::string>{"note", "frequency", "duration_ns"}));
  ProfileHeader copy = h;  // a copy keeps the order
  copy.user_ns = 1;
  EXPECT_EQ(keys(copy), (std::vector<std::string>{"note", "frequency", "duration_ns", "user_ns"}));
  ProfileHeader assigned;
  assigned.sys_ns = 2;
  assigned = h;  // so does an assignment, replacing what was there
  EXPECT_FALSE(assigned.sys_ns);
  EXPECT_EQ(keys(assigned), (std::vector<std::string>{"note", "frequency", "duration_ns"}));
  // A field takes values, not another field (whose stamp would bring the other's order).
  static_assert(!std::is_copy_assignable_v<HeaderField<int64_t>>);
  assigned.sys_ns = *copy.user_ns;
  EXPECT_EQ(keys(assigned), (std::vector<std::string>{"note", "frequency", "duration_ns", "sys_ns"}));
}

TEST(ProfileHeaderTest, WrongTypesAreNamedAndKeptAsGiven) {
  ProfileHeader h;
  h.set("mode", JsonValue::string("cpu"));  // a String mode is a mode (a Hash from JSON.parse)
  EXPECT_FALSE(h.mode->symbol);
  EXPECT_EQ(h.get("mode")->kind(), JsonValue::Kind::kString);

  EXPECT_STREQ(h.set("frequency", JsonValue::string("fast")), "an Integer");
  EXPECT_STREQ(h.set("duration_ns", JsonValue::real(1.5)), "an Integer");
  EXPECT_STREQ(h.set("gc_stats", JsonValue::integer(3)), "a Hash");
  EXPECT_STREQ(h.set("allocation_interval_guessed", JsonValue::integer(1)), "true or false");
  EXPECT_STREQ(h.set("maxrss_mb", JsonValue::string("big")), "an Integer or nil");
  EXPECT_STREQ(h.set("mode", JsonValue::integer(1)), "a String or Symbol");
  // Not typed, but written back as given, in place.
  EXPECT_FALSE(h.frequency);
  EXPECT_FALSE(h.duration_ns);
  EXPECT_FALSE(h.mode);
  EXPECT_EQ(h.get("frequency")->as_string(), "fast");
  EXPECT_EQ(h.get("duration_ns")->as_double(), 1.5);
  EXPECT_EQ(keys(h), (std::vector<std::string>{"mode", "frequency", "duration_ns", "gc_stats", "allocation_interval_guessed", "maxrss_mb"}));
  // A right value later takes the field, at the key's place.
  EXPECT_EQ(h.set("frequency", JsonValue::integer(10)), nullptr);
  EXPECT_EQ(h.frequency.value_or(0), 10);
  EXPECT_EQ(keys(h), (std::vector<std::string>{"mode", "frequency", "duration_ns", "gc_stats", "allocation_interval_guessed", "maxrss_mb"}));
  EXPECT_EQ(h.extras().get("frequency"), nullptr);
}

TEST(ProfileHeaderTest, KnownNames) {
  EXPECT_TRUE(ProfileHeader::known("sampling_count"));
  EXPECT_TRUE(ProfileHeader::known("allocation_interval"));
  EXPECT_FALSE(ProfileHeader::known("pid"));
  EXPECT_FALSE(ProfileHeader::known("aggregated_samples"));
}

// Through the JSON writer and loader: known keys typed again, unknown and wrongly typed ones
// as written, every key in its place, and the file written again byte for byte.
TEST(ProfileHeaderTest, JsonFileRoundTripsByteForByte) {
  Profile p = fixtures::make_profile({{"a.rb", "f", 1}}, {{{0}, 5}});
  p.header = ProfileHeader();
  p.header.set("mode", JsonValue::symbol("cpu"));
  p.header.set("frequency", JsonValue::string("fast"));  // another type: kept as written
  p.header.set("custom", JsonValue::object());
  p.header.set("max_depth", JsonValue::integer(8));
  p.header.set("note", JsonValue::string("n"));
  p.header.set("allocation_interval_guessed", JsonValue::integer(1));
  p.header.set("duration_ns", JsonValue::integer(40));
  std::string json = json_of(p);
  // rperf 0.11's keys first (mode, frequency, duration_ns), then ours in the order set.
  EXPECT_LT(at(json, "frequency"), at(json, "duration_ns"));
  EXPECT_LT(at(json, "duration_ns"), at(json, "custom"));
  EXPECT_LT(at(json, "custom"), at(json, "max_depth"));
  EXPECT_LT(at(json, "max_depth"), at(json, "note"));
  EXPECT_LT(at(json, "note"), at(json, "allocation_interval_guessed"));
  EXPECT_NE(json.find("\"frequency\":\"fast\""), std::string::npos);
  EXPECT_EQ(at(json, "user_ns"), std::string::npos);  // absent stays absent
  EXPECT_EQ(at(json, "allocation_interval"), std::string::npos);

  Profile q;
  std::string error;
  ASSERT_TRUE(load_json_profile(json.data(), json.size(), q, error)) << error;
  EXPECT_EQ(json_of(q), json);
  EXPECT_EQ(q.mode(), "cpu");
  EXPECT_FALSE(q.header.frequency);
  EXPECT_EQ(q.frequency(), 1000);  // not an Integer: the default, as before
  EXPECT_EQ(q.header.max_depth.value_or(0), 8);
  EXPECT_EQ(q.header.duration_ns.value_or(0), 40);
  EXPECT_FALSE(q.header.allocation_interval_guessed);
  EXPECT_FALSE(q.header.user_ns);
  EXPECT_FALSE(q.has_allocations());
  ASSERT_NE(q.header.extras().get("note"), nullptr);
}

// A merge adds the keys a process lacks after the root's own, as the root's Hash had them.
TEST(ProfileHeaderTest, MergeAppendsNewKeysAndKeepsTheRootsPlaces) {
  Profile root = fixtures::make_profile({{"a.rb", "f", 1}}, {{{0}, 5}});
  root.header = ProfileHeader();
  root.header.mode = HeaderText{"cpu", true};
  root.header.sampling_count = 2;
  root.header.duration_ns = 10;
  root.header.set("note", JsonValue::string("n"));
  Profile child = fixtures::make_profile({{"a.rb", "f", 1}}, {{{0}, 7}});
  child.header = ProfileHeader();
  child.header.duration_ns = 30;
  child.header.user_ns = 4;
  child.header.sampling_count = 3;
  merge_child(root, child, "9");
  EXPECT_EQ(keys(root.header),
            (std::vector<std::string>{"mode", "sampling_count", "duration_ns", "note", "user_ns", "total_duration_ns", "process_count"}));
  EXPECT_EQ(root.header.sampling_count.value_or(0), 5);
  EXPECT_EQ(root.header.duration_ns.value_or(0), 30);
  EXPECT_EQ(root.header.total_duration_ns.value_or(0), 40);
  EXPECT_EQ(root.header.process_count.value_or(0), 2);
  EXPECT_EQ(root.header.user_ns.value_or(0), 4);
}
