// Ruby binding of the loader: file bytes -> Native::Profile (io/loader.hh does the work without
// Ruby), and the meta/summary head of a file.
#include <ruby/ruby.h>

#include <new>
#include <string>

#include "io/loader.hh"
#include "ruby/profile_binding.hh"
#include "ruby/values.hh"

namespace rperf {

namespace {

VALUE format_error() { return rb_path2class("Rperf::FormatError"); }

VALUE message_of(const std::string& s) { return rb_str_new(s.data(), static_cast<long>(s.size())); }

// A file's bytes -> Native::Profile by `load` (io/loader.hh). Raises Rperf::FormatError naming
// what is wrong and where.
template <typename Load>
VALUE load_profile(VALUE bytes, Load&& load) {
  StringValue(bytes);
  ProfileHolder* h = new_profile_holder();
  VALUE obj = wrap_profile(h);
  VALUE error = Qnil;
  {
    std::string message;
    bool ok;
    try {
      ok = load(RSTRING_PTR(bytes), static_cast<size_t>(RSTRING_LEN(bytes)), h->profile, message);
    } catch (const std::bad_alloc&) {
      ok = false;
      message = "out of memory while loading";
    }
    if (!ok) error = message_of(message);
  }
  if (!NIL_P(error)) rb_exc_raise(rb_exc_new_str(format_error(), error));
  RB_GC_GUARD(bytes);
  return obj;
}

// Native::Profile.load_json(bytes) -> Native::Profile (JSON, gzipped or not).
VALUE profile_s_load_json(VALUE, VALUE bytes) { return load_profile(bytes, load_json_profile); }

// Native::Profile.load_pprof(bytes) -> Native::Profile (a pprof protobuf, gzipped or not).
VALUE profile_s_load_pprof(VALUE, VALUE bytes) { return load_profile(bytes, load_pprof_profile); }

// Native.read_meta(head_bytes) -> {meta:, summary:} or nil (not an rperf JSON head).
VALUE native_read_meta(VALUE, VALUE bytes) {
  StringValue(bytes);
  VALUE out = Qnil;
  JsonValue* meta = new JsonValue();
  JsonValue* summary = new JsonValue();
  bool ok = false;
  try {
    ok = read_json_head(RSTRING_PTR(bytes), static_cast<size_t>(RSTRING_LEN(bytes)), *meta, *summary);
  } catch (const std::bad_alloc&) {
    ok = false;
  }
  if (ok) {
    out = rb_hash_new();
    rb_hash_aset(out, sym("meta"), json_to_ruby(*meta));
    rb_hash_aset(out, sym("summary"), json_to_ruby(*summary));
  }
  delete meta;
  delete summary;
  RB_GC_GUARD(bytes);
  return out;
}

// Native.parse_json(text) -> the document, objects with Symbol keys (the loader's reader, for
// tests against Ruby's JSON). Raises Rperf::FormatError.
VALUE native_parse_json(VALUE, VALUE bytes) {
  StringValue(bytes);
  JsonValue* doc = new JsonValue();
  VALUE out = Qnil, error = Qnil;
  {
    std::string message;
    bool ok;
    try {
      ok = parse_json(RSTRING_PTR(bytes), static_cast<size_t>(RSTRING_LEN(bytes)), *doc, message);
    } catch (const std::bad_alloc&) {
      ok = false;
      message = "out of memory";
    }
    if (ok) out = json_to_ruby(*doc);
    else error = message_of(message);
  }
  delete doc;
  if (!NIL_P(error)) rb_exc_raise(rb_exc_new_str(format_error(), error));
  RB_GC_GUARD(bytes);
  return out;
}

// Native.sniff(bytes) -> :json, :pprof or nil.
VALUE native_sniff(VALUE, VALUE bytes) {
  StringValue(bytes);
  FileKind kind = sniff_file_kind(RSTRING_PTR(bytes), static_cast<size_t>(RSTRING_LEN(bytes)));
  RB_GC_GUARD(bytes);
  return kind == FileKind::kJson ? sym("json") : kind == FileKind::kPprof ? sym("pprof") : Qnil;
}

}  // namespace

void init_load_binding(VALUE native) {
  rb_define_singleton_method(profile_class(), "load_json", RUBY_METHOD_FUNC(profile_s_load_json), 1);
  rb_define_singleton_method(profile_class(), "load_pprof", RUBY_METHOD_FUNC(profile_s_load_pprof), 1);
  rb_define_singleton_method(native, "read_meta", RUBY_METHOD_FUNC(native_read_meta), 1);
  rb_define_singleton_method(native, "parse_json", RUBY_METHOD_FUNC(native_parse_json), 1);
  rb_define_singleton_method(native, "sniff", RUBY_METHOD_FUNC(native_sniff), 1);
}

}  // namespace rperf
