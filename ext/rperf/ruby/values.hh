// Conversions between Ruby objects and the model's plain values (JsonValue, labels). None of
// these raise: failures are reported through the return value, so callers can unwind their
// C++ state before raising (a Ruby exception must never longjmp over a C++ destructor).
#pragma once
#include <ruby/ruby.h>

#include <string>

#include "profile/profile.hh"

namespace rperf {

VALUE sym(const char* name);
VALUE utf8_string(const std::string& s);  // frozen, interned UTF-8 String
VALUE json_to_ruby(const JsonValue& v);   // objects -> Hash with Symbol keys
// nil, true/false, Integer, Float, String, Symbol, Array, Hash (String/Symbol keys); anything
// else is refused (returns false).
bool ruby_to_json(VALUE v, JsonValue& out, int depth = 0);
// A label key (Symbol or String) and value (String, Symbol, Integer; other objects by their
// to_s, with exceptions caught). Returns false when the key is not a Symbol or String.
bool ruby_to_label(VALUE key, VALUE value, Label& out);
// Merges a Hash of labels into `set`: keys replace earlier values, nil deletes a key. Returns
// false (set partly merged) when a key is not a Symbol or String.
bool merge_ruby_labels(VALUE hash, LabelSet& set);
VALUE label_set_to_ruby(const LabelSet& set);  // frozen Hash, Symbol keys
// An Integer that fits int64 (Fixnum or Bignum); false otherwise.
bool int64_of(VALUE v, int64_t& out);

}  // namespace rperf
