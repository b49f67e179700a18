// Ruby binding of the Viewer's label-set rule (profile/label_set_match.hh), for
// Viewer::SampleFilter: Native.label_values(sets) and Native.matching_label_sets(sets, label:,
// focus_values:, ignore:). Every argument is checked and copied into Ruby Arrays first (each
// TypeError or ArgumentError raised while no C++ object is alive), then read into C++ without
// calling Ruby.
#include <ruby/ruby.h>

#include <new>
#include <string>
#include <vector>

#include "profile/label_set_match.hh"
#include "ruby/profile_binding.hh"
#include "ruby/values.hh"

namespace rperf {

namespace {

// One call's C++ side, owned by a Ruby object: a NoMemoryError raised while it is filled or read
// leaks nothing.
struct LabelSetQuery {
  std::vector<LabelTexts> sets;
  LabelSetMatch match;
  std::vector<uint32_t> kept;
  std::vector<std::string> values;
};
void label_set_query_free(void* p) { delete static_cast<LabelSetQuery*>(p); }
const rb_data_type_t kLabelSetQueryType = {"rperf/label_set_query", {nullptr, label_set_query_free, nullptr, nullptr, {nullptr}}, nullptr, nullptr, 0};

// The owner is made before the query, so that its allocation failing cannot leak the query.
LabelSetQuery* new_query(VALUE& owner) {
  owner = TypedData_Wrap_Struct(0, &kLabelSetQueryType, nullptr);
  LabelSetQuery* q = nullptr;
  try {
    q = new LabelSetQuery();
  } catch (const std::bad_alloc&) {
  }
  if (!q) rb_memerror();
  DATA_PTR(owner) = q;
  return q;
}

int push_pair(VALUE key, VALUE value, VALUE flat) {
  rb_ary_push(flat, key);
  rb_ary_push(flat, value);
  return ST_CONTINUE;
}

void check_string(VALUE v, const char* what) {
  if (!RB_TYPE_P(v, T_STRING)) rb_raise(rb_eTypeError, "rperf: %s must be a String, got %s", what, rb_obj_classname(v));
}

void check_array(VALUE v, const char* what) {
  if (!RB_TYPE_P(v, T_ARRAY)) rb_raise(rb_eTypeError, "rperf: %s must be an Array, got %s", what, rb_obj_classname(v));
}

// `sets`, an Array of Hashes of String => String, as an Array of [key, value, key, value, ...]
// (a copy: the caller's Hashes cannot change under the C++ reading).
VALUE checked_sets(VALUE sets) {
  if (!RB_TYPE_P(sets, T_ARRAY)) rb_raise(rb_eTypeError, "rperf: label sets must be an Array of Hashes, got %s", rb_obj_classname(sets));
  VALUE out = rb_ary_new_capa(RARRAY_LEN(sets));
  for (long i = 0; i < RARRAY_LEN(sets); i++) {
    VALUE set = RARRAY_AREF(sets, i);
    if (!RB_TYPE_P(set, T_HASH)) rb_raise(rb_eTypeError, "rperf: label set %ld must be a Hash, got %s", i, rb_obj_classname(set));
    VALUE flat = rb_ary_new_capa(2 * static_cast<long>(RHASH_SIZE(set)));
    rb_hash_foreach(set, push_pair, flat);  // runs no Ruby code
    for (long k = 0; k < RARRAY_LEN(flat); k++) {
      VALUE text = RARRAY_AREF(flat, k);
      if (!RB_TYPE_P(text, T_STRING)) {
        rb_raise(rb_eTypeError, "rperf: label set %ld's %s must be Strings, got %s", i, k % 2 ? "values" : "keys", rb_obj_classname(text));
      }
    }
    rb_ary_push(out, flat);
  }
  return out;
}

std::string text_of(VALUE str) { return std::string(RSTRING_PTR(str), static_cast<size_t>(RSTRING_LEN(str))); }

// checked_sets' Arrays into `out` (may throw std::bad_alloc; calls no Ruby).
void read_sets(VALUE flat_sets, std::vector<LabelTexts>& out) {
  out.resize(static_cast<size_t>(RARRAY_LEN(flat_sets)));
  for (size_t i = 0; i < out.size(); i++) {
    VALUE flat = RARRAY_AREF(flat_sets, static_cast<long>(i));
    for (long k = 0; k + 1 < RARRAY_LEN(flat); k += 2) out[i].emplace_back(text_of(RARRAY_AREF(flat, k)), text_of(RARRAY_AREF(flat, k + 1)));
  }
}

// label: [key, [value or nil, ...]] (nil: the key not set).
void check_label(VALUE label) {
  check_array(label, "label:");
  if (RARRAY_LEN(label) != 2) rb_raise(rb_eArgError, "rperf: label: must be [key, [value or nil, ...]], got %ld items", RARRAY_LEN(label));
  check_string(RARRAY_AREF(label, 0), "label:'s key");
  VALUE values = RARRAY_AREF(label, 1);
  check_array(values, "label:'s values");
  for (long i = 0; i < RARRAY_LEN(values); i++) {
    VALUE v = RARRAY_AREF(values, i);
    if (!NIL_P(v)) check_string(v, "each of label:'s values (or nil)");
  }
}

void read_label(VALUE label, LabelSetMatch& match) {
  match.by_label = true;
  match.key = text_of(RARRAY_AREF(label, 0));
  VALUE values = RARRAY_AREF(label, 1);
  for (long i = 0; i < RARRAY_LEN(values); i++) {
    VALUE v = RARRAY_AREF(values, i);
    if (NIL_P(v)) match.unset = true;
    else match.values.push_back(text_of(v));
  }
}

void check_strings(VALUE ary, const char* what, const char* each) {
  check_array(ary, what);
  for (long i = 0; i < RARRAY_LEN(ary); i++) check_string(RARRAY_AREF(ary, i), each);
}

void read_strings(VALUE ary, std::vector<std::string>& out) {
  for (long i = 0; i < RARRAY_LEN(ary); i++) out.push_back(text_of(RARRAY_AREF(ary, i)));
}

// ignore: [[key, value or nil], ...] (nil: the key not set).
void check_ignore(VALUE ignore) {
  check_array(ignore, "ignore:");
  for (long i = 0; i < RARRAY_LEN(ignore); i++) {
    VALUE pair = RARRAY_AREF(ignore, i);
    check_array(pair, "each of ignore:'s pairs");
    if (RARRAY_LEN(pair) != 2) rb_raise(rb_eArgError, "rperf: ignore: pair %ld must be [key, value or nil], got %ld items", i, RARRAY_LEN(pair));
    check_string(RARRAY_AREF(pair, 0), "an ignore: pair's key");
    if (!NIL_P(RARRAY_AREF(pair, 1))) check_string(RARRAY_AREF(pair, 1), "an ignore: pair's value (or nil)");
  }
}

void read_ignore(VALUE ignore, LabelSetMatch& match) {
  for (long i = 0; i < RARRAY_LEN(ignore); i++) {
    VALUE pair = RARRAY_AREF(ignore, i);
    VALUE value = RARRAY_AREF(pair, 1);
    match.ignore.emplace_back(text_of(RARRAY_AREF(pair, 0)), NIL_P(value) ? std::nullopt : std::optional<std::string>(text_of(value)));
  }
}

VALUE option_or_nil(VALUE v) { return v == Qundef ? Qnil : v; }

// Native.matching_label_sets(sets, label: nil | [key, [value or nil, ...]], focus_values: nil |
// [value, ...], ignore: nil | [[key, value or nil], ...]) -> the ids (indexes into `sets`,
// ascending) of the sets all the given filters keep. `sets`: [{key => value}, ...] of Strings.
VALUE native_matching_label_sets(int argc, VALUE* argv, VALUE) {
  VALUE sets, options;
  rb_scan_args(argc, argv, "1:", &sets, &options);
  static ID keywords[3];
  if (!keywords[0]) {
    keywords[0] = rb_intern("label");
    keywords[1] = rb_intern("focus_values");
    keywords[2] = rb_intern("ignore");
  }
  VALUE given[3];
  rb_get_kwargs(options, keywords, 0, 3, given);  // ArgumentError for an unknown keyword
  VALUE label = option_or_nil(given[0]), focus = option_or_nil(given[1]), ignore = option_or_nil(given[2]);
  VALUE flat_sets = checked_sets(sets);
  if (!NIL_P(label)) check_label(label);
  if (!NIL_P(focus)) check_strings(focus, "focus_values:", "each of focus_values:");
  if (!NIL_P(ignore)) check_ignore(ignore);
  VALUE owner;
  LabelSetQuery* q = new_query(owner);
  without_cxx_exceptions([&] {
    read_sets(flat_sets, q->sets);
    if (!NIL_P(label)) read_label(label, q->match);
    if (!NIL_P(focus)) {
      q->match.by_focus = true;
      read_strings(focus, q->match.focus_values);
    }
    if (!NIL_P(ignore)) read_ignore(ignore, q->match);
    q->kept = matching_label_sets(q->sets, q->match);
  });
  VALUE out = rb_ary_new_capa(static_cast<long>(q->kept.size()));
  for (uint32_t id : q->kept) rb_ary_push(out, UINT2NUM(id));
  RB_GC_GUARD(owner);
  RB_GC_GUARD(flat_sets);
  return out;
}

// Native.label_values(sets) -> every value of `sets` ([{key => value}, ...] of Strings), sorted,
// each once, as UTF-8 Strings: what SampleFilter tests its tagfocus Regexp on.
VALUE native_label_values(VALUE, VALUE sets) {
  VALUE flat_sets = checked_sets(sets);
  VALUE owner;
  LabelSetQuery* q = new_query(owner);
  without_cxx_exceptions([&] {
    read_sets(flat_sets, q->sets);
    q->values = label_values(q->sets);
  });
  VALUE out = rb_ary_new_capa(static_cast<long>(q->values.size()));
  for (const std::string& v : q->values) rb_ary_push(out, rb_utf8_str_new(v.data(), static_cast<long>(v.size())));
  RB_GC_GUARD(owner);
  RB_GC_GUARD(flat_sets);
  return out;
}

}  // namespace

void init_label_set_match_binding(VALUE native) {
  rb_define_singleton_method(native, "matching_label_sets", RUBY_METHOD_FUNC(native_matching_label_sets), -1);
  rb_define_singleton_method(native, "label_values", RUBY_METHOD_FUNC(native_label_values), 1);
}

}  // namespace rperf
