// Which label sets the Viewer's label filter and tag filters keep: the one rule, for the server
// (Rperf::Native.matching_label_sets, asked by Viewer::SampleFilter) and for the page (the same
// code compiled to WebAssembly). Ruby-independent and standard library only; nothing throws but
// a failed allocation. Label sets are compared by their text as the page sees them
// (Viewer::Payload#string_labels: keys and values as valid UTF-8), byte for byte.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rperf {

// A label set as the Viewer spells it: (key, value) texts, valid UTF-8 (Viewer::Payload#string_labels).
// A key given twice holds its last value, as the Hash (or the page's object) built from the pairs.
using LabelTexts = std::vector<std::pair<std::string, std::string>>;

struct LabelSetMatch {
  // The label filter: sets where `key` has one of `values`; with `unset`, sets without `key` too.
  bool by_label = false;
  std::string key;
  std::vector<std::string> values;
  bool unset = false;
  // tagfocus: sets with at least one value among `focus_values` (the label values the host's regular
  // expression matched: Ruby's Regexp on the server, JavaScript's in a page; the regex engine is the
  // host's, the rule is here).
  bool by_focus = false;
  std::vector<std::string> focus_values;
  // tagignore: sets that have none of these pairs; a pair without a value: the key is not set.
  std::vector<std::pair<std::string, std::optional<std::string>>> ignore;
};

// The ids (indexes into `sets`, ascending) of the sets `match` keeps: all its parts at once.
std::vector<uint32_t> matching_label_sets(const std::vector<LabelTexts>& sets, const LabelSetMatch& match);

// Every value of `sets`, sorted, each once: what the host tests its tagfocus regex on.
std::vector<std::string> label_values(const std::vector<LabelTexts>& sets);

}  // namespace rperf
