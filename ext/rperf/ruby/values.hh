// Conversions between Ruby objects and the model's plain values (JsonValue, labels). None of
// these raise: failures are reported through the return value, so callers can unwind their
// C++ state before raising (a Ruby exception must never longjmp over a C++ destructor).
#pragma once
#include <ruby/ruby.h>

#include <string>
#include <vector>

#include "profile/profile.hh"

namespace rperf {

VALUE sym(const char* name);
VALUE utf8_string(const std::string& s);  // frozen, interned UTF-8 String
// The same made valid text as util/utf8.hh makes it (one U+FFFD per invalid byte): what the
// Viewer's pages get, and match names against.
VALUE text_string(const std::string& s);
VALUE json_to_ruby(const JsonValue& v);   // objects -> Hash with Symbol keys
// nil, true/false, Integer, Float, String, Symbol, Array, Hash (String/Symbol keys); anything
// else is refused (returns false).
bool ruby_to_json(VALUE v, JsonValue& out, int depth = 0);

// A Hash of labels is converted in two steps, so that no C++ object is alive while Ruby code
// runs (and no pointer into a session is held: a value's to_s may stop it):
// 1. label_pairs(hash) makes every Ruby call: a flat Array [key, value, key, value, ...] of the
//    Hash's entries, each value kept when it is nil, true, false, a String, Symbol, Integer
//    (int64), Float, or an Array or Hash of those (copied), else replaced by its to_s. Raises
//    what to_s raises (another thread's Thread#raise or Thread#kill too): no C++ object may be
//    alive in the caller.
// 2. read_label_pairs encodes that Array (profile/label_value.hh) without calling Ruby (it may
//    throw std::bad_alloc). Keys and values keep their types.
VALUE label_pairs(VALUE hash);
// Rperf.label's common case without step 1's Array: a Hash of at most kInlineLabelPairs
// entries whose keys and values are all nil, true, false, Strings, Symbols, Integers (int64) or
// Floats needs no Ruby call, so its entries are read in place (false: use label_pairs).
constexpr long kInlineLabelPairs = 8;
struct InlineLabelPairs {
  VALUE items[2 * kInlineLabelPairs];  // key, value, key, value... (on the stack: seen by the GC)
  long pairs = 0;
};
bool inline_label_pairs(VALUE hash, InlineLabelPairs& out);

// One entry of a Hash of labels: the label, or (remove) the deletion of its key (a nil value).
struct LabelEdit {
  Label label;
  bool remove = false;
};

enum class LabelCheck {
  kOk,
  kInvalidUtf8,  // a key's bytes are not valid UTF-8 (checked only when asked: it could not
                 // become a Symbol; a value's invalid bytes are kept, and replaced in files)
};

// Appends the edits of label_pairs' Array to `out`. On failure `bad` is the offending entry's
// index (its key is pairs[2 * bad]) and `out` is partly filled.
// `nil_removes`: a nil value deletes its key (Rperf.label), else it is a value (a result Hash).
LabelCheck read_label_pairs(VALUE pairs, bool check_keys_utf8, bool nil_removes, std::vector<LabelEdit>& out, long& bad);
// The same of `pairs` entries read in place (items: key, value, key, value...).
LabelCheck read_label_items(const VALUE* items, long pairs, bool check_keys_utf8, bool nil_removes, std::vector<LabelEdit>& out, long& bad);
// Keys replace earlier values (in place), new keys are appended, removals delete a key.
void apply_label_edits(const std::vector<LabelEdit>& edits, LabelSet& set);
// Both steps: merges a Hash of labels into `set` (no UTF-8 check; nil deletes a key). May throw
// std::bad_alloc.
void merge_ruby_labels(VALUE hash, LabelSet& set);
VALUE label_set_to_ruby(const LabelSet& set);  // frozen Hash of the labels as given
// An Integer that fits int64 (Fixnum or Bignum); false otherwise.
bool int64_of(VALUE v, int64_t& out);

}  // namespace rperf
