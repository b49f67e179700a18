// Label keys and values kept as given (profile/label_value.hh): the typed encoding, Ruby's
// spellings of each type, the JSON the writer makes of them and reads back, and the label-set
// table's release of unused sets (snapshot(clear: true)).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "io/encoders.hh"
#include "io/loader.hh"
#include "io/output.hh"
#include "profile/label_value.hh"
#include "profile/transform.hh"
#include "test_profiles.hh"

using namespace rperf;
using namespace rperf::fixtures;
namespace lv = rperf::label_value;

namespace {

TEST(LabelValue, EachTypeIsItsOwnValue) {
  // The same text under different types is a different value (Ruby's Hash#eql?: 1 is not 1.0,
  // "a" is not :a), so sets holding them are different sets.
  std::vector<std::string> all = {lv::string("1"), lv::symbol("1"), lv::integer(1), lv::real(1.0), lv::boolean(true),
                                  lv::boolean(false), lv::nil(), lv::array({lv::integer(1)}), lv::hash({{lv::symbol("a"), lv::integer(1)}}),
                                  lv::string(""), lv::array({}), lv::hash({})};
  for (size_t i = 0; i < all.size(); i++) {
    for (size_t j = 0; j < all.size(); j++) EXPECT_EQ(all[i] == all[j], i == j) << i << " " << j;
  }
  LabelSetTable t;
  uint32_t a = t.intern({Label{lv::symbol("k"), lv::integer(1)}});
  EXPECT_NE(t.intern({Label{lv::symbol("k"), lv::real(1.0)}}), a);
  EXPECT_NE(t.intern({Label{lv::string("k"), lv::integer(1)}}), a);
  EXPECT_EQ(t.intern({Label{lv::symbol("k"), lv::integer(1)}}), a);
}

TEST(LabelValue, DecodesWhatItEncodes) {
  EXPECT_EQ(lv::type_of(lv::string("x")), lv::kString);
  EXPECT_EQ(lv::text_of(lv::string("a\0b")), std::string_view("a\0b", 1));
  EXPECT_EQ(lv::text_of(lv::string(std::string("a\0b", 3))), std::string_view("a\0b", 3));
  EXPECT_EQ(lv::type_of(lv::symbol("s")), lv::kSymbol);
  int64_t i = 0;
  EXPECT_TRUE(lv::int64_of(lv::integer(INT64_MIN), i));
  EXPECT_EQ(i, INT64_MIN);
  EXPECT_FALSE(lv::int64_of(lv::integer_text("123456789012345678901234"), i));
  EXPECT_EQ(lv::to_s(lv::integer_text("-123456789012345678901234")), "-123456789012345678901234");
  EXPECT_EQ(lv::real_of(lv::real(-0.0)), 0.0);
  EXPECT_TRUE(std::signbit(lv::real_of(lv::real(-0.0))));
  EXPECT_TRUE(std::isnan(lv::real_of(lv::real(std::nan("")))));
  std::string nested = lv::hash({{lv::symbol("a"), lv::array({lv::nil(), lv::string("x")})}, {lv::integer(2), lv::boolean(false)}});
  std::vector<std::string_view> items = lv::items_of(nested);
  ASSERT_EQ(items.size(), 4u);
  EXPECT_EQ(items[0], lv::symbol("a"));
  EXPECT_EQ(lv::items_of(items[1]).size(), 2u);
  EXPECT_EQ(items[3], lv::boolean(false));
  // A truncated encoding yields the items that are whole, never reads past the end.
  EXPECT_EQ(lv::items_of(std::string_view(nested).substr(0, nested.size() - 1)).size(), 3u);
}

// Ruby's spellings: what pprof's string labels, the viewer and the filters compare.
TEST(LabelValue, ToSAndInspectSpellTheValuesAsRuby) {
  EXPECT_EQ(lv::float_to_s(1.5), "1.5");
  EXPECT_EQ(lv::float_to_s(100.0), "100.0");
  EXPECT_EQ(lv::float_to_s(1e15), "1.0e+15");
  EXPECT_EQ(lv::float_to_s(999999999999999.0), "999999999999999.0");
  EXPECT_EQ(lv::float_to_s(1234567890123456.0), "1.234567890123456e+15");
  EXPECT_EQ(lv::float_to_s(123456789.123456789), "123456789.12345679");
  EXPECT_EQ(lv::float_to_s(0.0001), "0.0001");
  EXPECT_EQ(lv::float_to_s(0.00001), "1.0e-05");
  EXPECT_EQ(lv::float_to_s(2.5e-300), "2.5e-300");
  EXPECT_EQ(lv::float_to_s(-0.0), "-0.0");
  EXPECT_EQ(lv::float_to_s(std::numeric_limits<double>::infinity()), "Infinity");
  EXPECT_EQ(lv::float_to_s(-std::numeric_limits<double>::infinity()), "-Infinity");
  EXPECT_EQ(lv::float_to_s(std::nan("")), "NaN");
  EXPECT_EQ(lv::to_s(lv::boolean(true)), "true");
  EXPECT_EQ(lv::to_s(lv::nil()), "");
  EXPECT_EQ(lv::to_s(lv::symbol("sym")), "sym");
  EXPECT_EQ(lv::to_s(lv::array({lv::integer(1), lv::string("a"), lv::nil(), lv::real(2.0), lv::symbol("b")})), "[1, \"a\", nil, 2.0, :b]");
  EXPECT_EQ(lv::to_s(lv::hash({{lv::symbol("a"), lv::integer(1)}, {lv::symbol("%G"), lv::integer(2)}, {lv::string("b"), lv::array({lv::boolean(true)})},
                               {lv::integer(1), lv::real(2.0)}})),
            "{a: 1, \"%G\": 2, \"b\" => [true], 1 => 2.0}");
  EXPECT_EQ(lv::inspect(lv::string("a\x01\x7f\x1b\n#{x} #a \xc3\xa9\xff")), "\"a\\u0001\\u007F\\e\\n\\#{x} #a \xc3\xa9\\xFF\"");
  EXPECT_EQ(lv::inspect(lv::symbol("%GVL")), ":\"%GVL\"");
  EXPECT_EQ(lv::inspect(lv::symbol("a?")), ":a?");
  EXPECT_EQ(lv::to_s(lv::hash({})), "{}");
}

std::string to_json(const Profile& p) {
  std::string s;
  Output out(&s, OutputOptions());
  encode_json(p, JsonValue::object(), out);
  EXPECT_EQ(out.finish(), 0);
  return s;
}

// The JSON file holds each value as JSON (rperf 0.11's JSON.generate: Symbols as strings, keys by
// their text); loading makes keys Symbols (0.11's symbolize_names) and keeps every other type.
TEST(LabelValue, JsonRoundTripKeepsTheTypes) {
  Profile p = make_profile({{"a.rb", "m", 1}}, {{{0}, 5, 1, 1}});
  LabelSet set = {Label{lv::symbol("cached"), lv::boolean(true)},
                  Label{lv::string("k"), lv::real(1.5)},
                  Label{lv::symbol("sym"), lv::symbol("s")},
                  Label{lv::symbol("list"), lv::array({lv::integer(1), lv::string("a"), lv::nil(), lv::array({lv::string("x"), lv::string("y")})})},
                  Label{lv::symbol("h"), lv::hash({{lv::string("y"), lv::boolean(false)}})},
                  Label{lv::symbol("big"), lv::integer_text("1180591620717411303424")},
                  Label{lv::integer(7), lv::real(std::nan(""))}};
  p.label_sets.intern(set);
  std::string json = to_json(p);
  EXPECT_NE(json.find("{\"cached\":true,\"k\":1.5,\"sym\":\"s\",\"list\":[1,\"a\",null,[\"x\",\"y\"]],\"h\":{\"y\":false},"
                      "\"big\":1180591620717411303424,\"7\":\"NaN\"}"),
            std::string::npos)
      << json;
  Profile q;
  std::string error;
  ASSERT_TRUE(load_json_profile(json.data(), json.size(), q, error)) << error;
  const LabelSet& back = q.label_sets[q.samples[0].label_set];
  ASSERT_EQ(back.size(), 7u);
  EXPECT_EQ(back[0].key, lv::symbol("cached"));
  EXPECT_EQ(back[0].value, lv::boolean(true));
  EXPECT_EQ(back[1].key, lv::symbol("k"));
  EXPECT_EQ(back[1].value, lv::real(1.5));
  EXPECT_EQ(back[2].value, lv::string("s"));
  EXPECT_EQ(back[3].value, set[3].value);  // an array of two strings stays an array, not a frame
  EXPECT_EQ(back[4].value, lv::hash({{lv::symbol("y"), lv::boolean(false)}}));
  EXPECT_EQ(back[5].value, lv::integer_text("1180591620717411303424"));
  EXPECT_EQ(back[6].key, lv::symbol("7"));
  EXPECT_EQ(back[6].value, lv::string("NaN"));
  EXPECT_EQ(to_json(q), json);  // and writes the same file again
}

// raw_samples[i][3] is the user's set, the VM state apart (rperf 0.11); the samples themselves
// carry the state's label (aggregated_samples).
TEST(LabelValue, RawSamplesNameTheUsersSet) {
  Profile p = make_profile({{"a.rb", "io", 1}}, {{{0}, 5, 1, 1, kGvlBlocked, 10}, {{0}, 6, 1, 1, kRunning, 20}},
                           {{}, {{"endpoint", "/x", false}}});
  p.timestamps = true;
  apply_vm_states(p, false);
  EXPECT_NE(p.samples[0].label_set, 1u);
  UserLabelSets user(p);
  EXPECT_EQ(user.of(p.samples[0]), 1u);
  EXPECT_EQ(user.of(p.samples[1]), 1u);
  std::string json = to_json(p);
  EXPECT_NE(json.find("\"raw_samples\":[[[[\"a.rb\",\"io\",1]],5,1,1,1,10],[[[\"a.rb\",\"io\",1]],6,1,1,0,20]]"), std::string::npos) << json;
  Profile q;
  std::string error;
  ASSERT_TRUE(load_json_profile(json.data(), json.size(), q, error)) << error;
  EXPECT_EQ(q.label_sets[q.samples[0].label_set], p.label_sets[p.samples[0].label_set]);  // the state's label is back
  EXPECT_EQ(to_json(q), json);
}

// snapshot(clear: true): sets no sample, thread or pin refers to are freed; the others keep their
// ids; freed ids are reused, so the table stays as large as the sets in use.
TEST(LabelValue, UnusedSetsAreReleasedAndTheirIdsReused) {
  LabelSetTable t;
  std::vector<uint32_t> ids;
  for (int i = 0; i < 100; i++) ids.push_back(t.intern(labels({{"path", "/" + std::to_string(i), false}})));
  t.pin(ids[5]);
  std::vector<bool> live(t.size(), false);
  live[ids[7]] = true;
  t.release_unused(live);
  EXPECT_EQ(t.held(), 3u);  // {}, the live one, the pinned one
  EXPECT_EQ(t.find(labels({{"path", "/7", false}})), ids[7]);
  EXPECT_EQ(t.find(labels({{"path", "/5", false}})), ids[5]);
  EXPECT_EQ(t.find(labels({{"path", "/6", false}})), LabelSetTable::kNotFound);
  EXPECT_TRUE(t.released(ids[6]));
  EXPECT_EQ(t.intern({}), 0u);  // a released set's emptied slot is never found as {}
  uint32_t again = t.intern(labels({{"path", "/6", false}}));
  EXPECT_EQ(again, 1u);  // the lowest freed id
  EXPECT_EQ(t.intern(labels({{"path", "/6", false}})), again);
  t.unpin(ids[5]);
  std::vector<bool> none(t.size(), false);
  t.release_unused(none);
  EXPECT_EQ(t.held(), 1u);
  for (int round = 0; round < 50; round++) {
    for (int i = 0; i < 1000; i++) t.intern(labels({{"path", std::to_string(round) + "/" + std::to_string(i), false}}));
    t.release_unused(std::vector<bool>(t.size(), false));
  }
  EXPECT_LE(t.size(), 1001u);  // bounded by the sets of one round
  EXPECT_EQ(t.held(), 1u);
}

}  // namespace
