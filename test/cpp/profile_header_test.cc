// The profile header: typed fields for the known keys, extras for the others, and the order
// keys were set in (what the JSON file and the Ruby Hash list) kept across both.
#include <gtest/gtest.h>

#include "profile/profile_header.hh"

using namespace rperf;

namespace {

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
