// Ruby binding of the profile loader: a json or json.gz file's bytes -> Ruby objects, through
// JsonReader. Strings are interned (frozen, deduplicated) and identical frame arrays are one
// frozen Array, as in the result of Rperf.stop: a 252 MB profile loads in a fraction of
// JSON.parse's time and memory (rake bench: bench/load_bench.rb).
#include <ruby/encoding.h>
#include <ruby/ruby.h>

#include <memory>
#include <string>

#include "encode/gzip.hh"
#include "json_reader.hh"
#include "text_table.hh"

namespace rperf {

namespace {

struct RubyBuilder {
  using Value = VALUE;
  // Source text of small scalar-only arrays (frames: [path, label(, line)]) -> the shared
  // frozen Array.
  TextTable<VALUE> shared_arrays;
  rb_encoding* utf8 = rb_utf8_encoding();

  VALUE null_value() { return Qnil; }
  VALUE true_value() { return Qtrue; }
  VALUE false_value() { return Qfalse; }
  VALUE integer(const char* text, size_t len) {
    if (len <= 18) {  // fits int64 whatever the digits
      bool negative = *text == '-';
      int64_t v = 0;
      for (size_t i = negative ? 1 : 0; i < len; i++) v = v * 10 + (text[i] - '0');
      return LL2NUM(negative ? -v : v);
    }
    std::string digits(text, len);
    return rb_cstr_to_inum(digits.c_str(), 10, 0);
  }
  VALUE real(const char* text, size_t len) {
    std::string s(text, len);
    return DBL2NUM(rb_cstr_to_dbl(s.c_str(), 0));
  }
  VALUE string(const char* s, size_t len) { return rb_enc_interned_str(s, static_cast<long>(len), utf8); }
  VALUE key(const char* s, size_t len) { return rb_str_intern(rb_enc_interned_str(s, static_cast<long>(len), utf8)); }
  VALUE begin_array() { return rb_ary_new(); }
  void push(VALUE& array, VALUE element) { rb_ary_push(array, element); }
  bool find_array(const char* raw, size_t raw_len, VALUE& out) {
    const VALUE* shared = shared_arrays.find(raw, raw_len);
    if (!shared) return false;
    out = *shared;
    return true;
  }
  VALUE end_array(VALUE array, const char* raw, size_t raw_len, size_t count, bool scalars) {
    // Called only after find_array missed, so this text is new (or too long to share).
    if (scalars && count > 0 && count <= 3 && shared_arrays.insert(raw, raw_len, array)) rb_obj_freeze(array);
    return array;
  }
  VALUE begin_object() { return rb_hash_new(); }
  void set(VALUE& object, VALUE key, VALUE value) { rb_hash_aset(object, key, value); }
};

// Owned by a Ruby object, so that an exception raised mid-parse frees it.
struct LoadState {
  std::string inflated;
  RubyBuilder builder;
};

void load_state_mark(void* p) {
  // Pinned (rb_gc_mark, not movable): the map holds these VALUEs outside Ruby's heap.
  static_cast<LoadState*>(p)->builder.shared_arrays.each_value([](VALUE v) { rb_gc_mark(v); });
}
void load_state_free(void* p) { delete static_cast<LoadState*>(p); }
size_t load_state_size(const void*) { return sizeof(LoadState); }
const rb_data_type_t kLoadStateType = {"rperf/load_state", {load_state_mark, load_state_free, load_state_size, nullptr, {nullptr}}, nullptr, nullptr, 0};

VALUE format_error() { return rb_path2class("Rperf::FormatError"); }

// Raises with a message built from C++ strings that are destroyed first (rb_raise unwinds
// with longjmp, which would skip their destructors).
[[noreturn]] void raise_format_error(VALUE message) { rb_exc_raise(rb_exc_new_str(format_error(), message)); }

VALUE gunzip_into(LoadState& state, const char* data, size_t len) {
  std::string error = gunzip(data, len, state.inflated);
  if (error.empty()) return Qnil;
  error = "corrupt gzip data (" + error + ")";
  return rb_str_new(error.data(), static_cast<long>(error.size()));
}

bool gzipped(VALUE bytes) {
  return RSTRING_LEN(bytes) >= 2 && static_cast<unsigned char>(RSTRING_PTR(bytes)[0]) == 0x1f &&
         static_cast<unsigned char>(RSTRING_PTR(bytes)[1]) == 0x8b;
}

// Native.gunzip(bytes) -> String; raises Rperf::FormatError for corrupt or truncated data.
VALUE native_gunzip(VALUE, VALUE bytes) {
  StringValue(bytes);
  LoadState* state = new LoadState();
  VALUE holder = TypedData_Wrap_Struct(rb_cObject, &kLoadStateType, state);
  VALUE error = gunzip_into(*state, RSTRING_PTR(bytes), static_cast<size_t>(RSTRING_LEN(bytes)));
  if (!NIL_P(error)) raise_format_error(error);
  VALUE out = rb_str_new(state->inflated.data(), static_cast<long>(state->inflated.size()));
  RB_GC_GUARD(holder);
  RB_GC_GUARD(bytes);
  return out;
}

// Native.load_json(bytes) -> Object: JSON (gzip-compressed or not) with symbol keys.
// Raises Rperf::FormatError naming what is wrong and where.
VALUE native_load_json(VALUE, VALUE bytes) {
  StringValue(bytes);
  LoadState* state = new LoadState();
  VALUE holder = TypedData_Wrap_Struct(rb_cObject, &kLoadStateType, state);
  const char* text = RSTRING_PTR(bytes);
  size_t len = static_cast<size_t>(RSTRING_LEN(bytes));
  if (gzipped(bytes)) {
    VALUE error = gunzip_into(*state, text, len);
    if (!NIL_P(error)) raise_format_error(error);
    text = state->inflated.data();
    len = state->inflated.size();
  }
  // `bytes` stays on this stack frame (so it is pinned) and no Ruby code runs while parsing.
  VALUE doc = Qnil, error = Qnil;
  {
    JsonReader<RubyBuilder> reader(text, len, state->builder);
    if (!reader.parse(doc)) {
      std::string message = "invalid JSON (" + reader.error() + ")";
      error = rb_str_new(message.data(), static_cast<long>(message.size()));
    }
  }
  if (!NIL_P(error)) raise_format_error(error);
  RB_GC_GUARD(holder);
  RB_GC_GUARD(bytes);
  return doc;
}

}  // namespace

void init_load_binding(VALUE native) {
  rb_define_singleton_method(native, "gunzip", RUBY_METHOD_FUNC(native_gunzip), 1);
  rb_define_singleton_method(native, "load_json", RUBY_METHOD_FUNC(native_load_json), 1);
}

}  // namespace rperf
