// The Viewer's label and tag filters (profile/label_set_match.hh), each result worked out by hand
// from Viewer::SampleFilter's rule as rperf's Ruby had it.
#include "profile/label_set_match.hh"

#include <gtest/gtest.h>

namespace rperf {
namespace {

using Ids = std::vector<uint32_t>;

// 0 is the empty set; 5 has the key with an empty value, which is not "unset".
const std::vector<LabelTexts> kSets = {
    {},
    {{"endpoint", "/a"}},
    {{"endpoint", "/b"}},
    {{"endpoint", "/a"}, {"job", "x"}},
    {{"job", "x"}},
    {{"endpoint", ""}},
};

LabelSetMatch label(const std::string& key, std::vector<std::string> values, bool unset = false) {
  LabelSetMatch m;
  m.by_label = true;
  m.key = key;
  m.values = std::move(values);
  m.unset = unset;
  return m;
}

LabelSetMatch focus(std::vector<std::string> values) {
  LabelSetMatch m;
  m.by_focus = true;
  m.focus_values = std::move(values);
  return m;
}

LabelSetMatch ignore(std::vector<std::pair<std::string, std::optional<std::string>>> pairs) {
  LabelSetMatch m;
  m.ignore = std::move(pairs);
  return m;
}

TEST(LabelSetMatch, NoFilterKeepsEverySetTheEmptyOneToo) { EXPECT_EQ(matching_label_sets(kSets, LabelSetMatch()), (Ids{0, 1, 2, 3, 4, 5})); }

TEST(LabelSetMatch, NoSetsNothingKept) { EXPECT_EQ(matching_label_sets({}, label("endpoint", {}, true)), Ids{}); }

TEST(LabelSetMatch, LabelWithOneValue) { EXPECT_EQ(matching_label_sets(kSets, label("endpoint", {"/a"})), (Ids{1, 3})); }

TEST(LabelSetMatch, LabelWithValues) { EXPECT_EQ(matching_label_sets(kSets, label("endpoint", {"/b", "/a"})), (Ids{1, 2, 3})); }

TEST(LabelSetMatch, LabelKeyWithAnotherValueIsNotKept) {
  EXPECT_EQ(matching_label_sets(kSets, label("endpoint", {"/c"})), Ids{});
  EXPECT_EQ(matching_label_sets(kSets, label("endpoint", {"/c"}, true)), (Ids{0, 4}));
}

TEST(LabelSetMatch, LabelUnsetKeepsSetsWithoutTheKey) { EXPECT_EQ(matching_label_sets(kSets, label("endpoint", {}, true)), (Ids{0, 4})); }

TEST(LabelSetMatch, LabelValueOrUnset) { EXPECT_EQ(matching_label_sets(kSets, label("endpoint", {"/a"}, true)), (Ids{0, 1, 3, 4})); }

TEST(LabelSetMatch, LabelEmptyValueIsAValueNotUnset) {
  EXPECT_EQ(matching_label_sets(kSets, label("endpoint", {""})), Ids{5});
  EXPECT_EQ(matching_label_sets(kSets, label("job", {""})), Ids{});
}

TEST(LabelSetMatch, LabelOfAKeyNoSetHas) {
  EXPECT_EQ(matching_label_sets(kSets, label("tenant", {"/a"})), Ids{});
  EXPECT_EQ(matching_label_sets(kSets, label("tenant", {}, true)), (Ids{0, 1, 2, 3, 4, 5}));
}

TEST(LabelSetMatch, LabelKeysAndValuesAreNotMixedUp) {
  // "/a" is a value, never a key; "job" a key, never a value.
  EXPECT_EQ(matching_label_sets(kSets, label("/a", {"endpoint"})), Ids{});
  EXPECT_EQ(matching_label_sets(kSets, label("endpoint", {"job"})), Ids{});
}

TEST(LabelSetMatch, FocusKeepsSetsWithAnyMatchedValue) {
  EXPECT_EQ(matching_label_sets(kSets, focus({"x"})), (Ids{3, 4}));
  EXPECT_EQ(matching_label_sets(kSets, focus({"x", "/a"})), (Ids{1, 3, 4}));
  EXPECT_EQ(matching_label_sets(kSets, focus({""})), Ids{5});
}

TEST(LabelSetMatch, FocusMatchingNothingKeepsNothing) {
  EXPECT_EQ(matching_label_sets(kSets, focus({})), Ids{});
  EXPECT_EQ(matching_label_sets(kSets, focus({"endpoint"})), Ids{});  // a key is no value
}

TEST(LabelSetMatch, IgnoreAPairDropsSetsWithIt) { EXPECT_EQ(matching_label_sets(kSets, ignore({{"endpoint", "/a"}})), (Ids{0, 2, 4, 5})); }

TEST(LabelSetMatch, IgnoreAKeyWithoutValueDropsSetsWithoutTheKey) {
  EXPECT_EQ(matching_label_sets(kSets, ignore({{"endpoint", std::nullopt}})), (Ids{1, 2, 3, 5}));
  EXPECT_EQ(matching_label_sets(kSets, ignore({{"tenant", std::nullopt}})), Ids{});
}

TEST(LabelSetMatch, IgnoreSeveralPairsDropsSetsWithAnyOfThem) {
  EXPECT_EQ(matching_label_sets(kSets, ignore({{"job", "x"}, {"endpoint", "/b"}})), (Ids{0, 1, 5}));
  EXPECT_EQ(matching_label_sets(kSets, ignore({{"job", "y"}})), (Ids{0, 1, 2, 3, 4, 5}));
}

TEST(LabelSetMatch, AllPartsAtOnce) {
  LabelSetMatch m = label("endpoint", {"/a"}, true);  // 0, 1, 3, 4
  m.by_focus = true;
  m.focus_values = {"x"};  // 3, 4
  EXPECT_EQ(matching_label_sets(kSets, m), (Ids{3, 4}));
  m.ignore = {{"endpoint", "/a"}};  // drops 1, 3
  EXPECT_EQ(matching_label_sets(kSets, m), Ids{4});
  m.ignore = {{"endpoint", std::nullopt}};  // drops 0, 4
  EXPECT_EQ(matching_label_sets(kSets, m), Ids{3});
}

TEST(LabelSetMatch, AKeyGivenTwiceHoldsItsLastValue) {
  const std::vector<LabelTexts> sets = {{{"k", "1"}, {"k", "2"}}};
  EXPECT_EQ(matching_label_sets(sets, label("k", {"1"})), Ids{});
  EXPECT_EQ(matching_label_sets(sets, label("k", {"2"})), Ids{0});
  EXPECT_EQ(matching_label_sets(sets, focus({"1"})), Ids{});
  EXPECT_EQ(matching_label_sets(sets, ignore({{"k", "1"}})), Ids{0});
  EXPECT_EQ(label_values(sets), std::vector<std::string>{"2"});
}

TEST(LabelSetMatch, LabelValuesSortedEachOnce) {
  EXPECT_EQ(label_values(kSets), (std::vector<std::string>{"", "/a", "/b", "x"}));
  EXPECT_EQ(label_values({}), std::vector<std::string>{});
  EXPECT_EQ(label_values({{}}), std::vector<std::string>{});
}

}  // namespace
}  // namespace rperf
