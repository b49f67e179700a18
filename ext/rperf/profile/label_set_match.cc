#include "profile/label_set_match.hh"

#include <algorithm>

namespace rperf {

namespace {

// The value `key` holds in `set` (its last pair: a Hash built from the pairs keeps that one), or
// nullptr when the key is not set.
const std::string* value_of(const LabelTexts& set, const std::string& key) {
  for (auto pair = set.rbegin(); pair != set.rend(); ++pair) {
    if (pair->first == key) return &pair->second;
  }
  return nullptr;
}

// A later pair gives this pair's key again: its value is not the set's.
bool overridden(const LabelTexts& set, size_t index) {
  for (size_t later = index + 1; later < set.size(); later++) {
    if (set[later].first == set[index].first) return true;
  }
  return false;
}

std::vector<std::string> sorted_unique(std::vector<std::string> texts) {
  std::sort(texts.begin(), texts.end());
  texts.erase(std::unique(texts.begin(), texts.end()), texts.end());
  return texts;
}

bool contains(const std::vector<std::string>& sorted, const std::string& text) { return std::binary_search(sorted.begin(), sorted.end(), text); }

bool label_keeps(const LabelTexts& set, const LabelSetMatch& match, const std::vector<std::string>& sorted_values) {
  const std::string* value = value_of(set, match.key);
  return value ? contains(sorted_values, *value) : match.unset;
}

bool focus_keeps(const LabelTexts& set, const std::vector<std::string>& sorted_focus) {
  for (size_t i = 0; i < set.size(); i++) {
    if (!overridden(set, i) && contains(sorted_focus, set[i].second)) return true;
  }
  return false;
}

bool ignore_keeps(const LabelTexts& set, const LabelSetMatch& match) {
  for (const auto& [key, ignored] : match.ignore) {
    const std::string* value = value_of(set, key);
    if (ignored ? value && *value == *ignored : !value) return false;
  }
  return true;
}

}  // namespace

std::vector<uint32_t> matching_label_sets(const std::vector<LabelTexts>& sets, const LabelSetMatch& match) {
  // Sorted once: a profile has many label sets, and a regex may match many values.
  const std::vector<std::string> sorted_values = match.by_label ? sorted_unique(match.values) : std::vector<std::string>();
  const std::vector<std::string> sorted_focus = match.by_focus ? sorted_unique(match.focus_values) : std::vector<std::string>();
  std::vector<uint32_t> kept;
  for (size_t id = 0; id < sets.size(); id++) {
    const LabelTexts& set = sets[id];
    if (match.by_label && !label_keeps(set, match, sorted_values)) continue;
    if (match.by_focus && !focus_keeps(set, sorted_focus)) continue;
    if (!ignore_keeps(set, match)) continue;
    kept.push_back(static_cast<uint32_t>(id));
  }
  return kept;
}

std::vector<std::string> label_values(const std::vector<LabelTexts>& sets) {
  std::vector<std::string> values;
  for (const LabelTexts& set : sets) {
    for (size_t i = 0; i < set.size(); i++) {
      if (!overridden(set, i)) values.push_back(set[i].second);
    }
  }
  return sorted_unique(std::move(values));
}

}  // namespace rperf
