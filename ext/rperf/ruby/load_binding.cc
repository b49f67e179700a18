// Ruby binding of the loader: file bytes -> Native::Profile (io/loader.hh does the work without
// Ruby), the meta/summary head of a file, and gunzip for the pprof reader.
#include <ruby/ruby.h>

#include <new>
#include <string>

#include "io/gzip.hh"
#include "io/loader.hh"
#include "ruby/profile_binding.hh"
#include "ruby/values.hh"

namespace rperf {

namespace {

VALUE format_error() { return rb_path2class("Rperf::FormatError"); }

VALUE message_of(const std::string& s) { return rb_str_new(s.data(), static_cast<long>(s.size())); }

// Native::Profile.load_json(bytes) -> Native::Profile. Raises Rperf::FormatError naming what
// is wrong and where.
VALUE profile_s_load_json(VALUE, VALUE bytes) {
  StringValue(bytes);
  ProfileHolder* h = new_profile_holder();
  VALUE obj = wrap_profile(h);
  VALUE error = Qnil;
  {
    std::string message;
    bool ok;
    try {
      ok = load_json_profile(RSTRING_PTR(bytes), static_cast<size_t>(RSTRING_LEN(bytes)), h->profile, message);
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

// Native.gunzip(bytes) -> String; raises Rperf::FormatError for corrupt or truncated data.
VALUE native_gunzip(VALUE, VALUE bytes) {
  StringValue(bytes);
  VALUE out = Qnil, error = Qnil;
  {
    std::string inflated;
    std::string message = gunzip(RSTRING_PTR(bytes), static_cast<size_t>(RSTRING_LEN(bytes)), inflated);
    if (message.empty()) out = rb_str_new(inflated.data(), static_cast<long>(inflated.size()));
    else error = message_of("corrupt gzip data (" + message + ")");
  }
  if (!NIL_P(error)) rb_exc_raise(rb_exc_new_str(format_error(), error));
  RB_GC_GUARD(bytes);
  return out;
}

VALUE native_gzip_p(VALUE, VALUE bytes) {
  StringValue(bytes);
  return is_gzip(RSTRING_PTR(bytes), static_cast<size_t>(RSTRING_LEN(bytes))) ? Qtrue : Qfalse;
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
  rb_define_singleton_method(native, "read_meta", RUBY_METHOD_FUNC(native_read_meta), 1);
  rb_define_singleton_method(native, "gunzip", RUBY_METHOD_FUNC(native_gunzip), 1);
  rb_define_singleton_method(native, "gzip?", RUBY_METHOD_FUNC(native_gzip_p), 1);
  rb_define_singleton_method(native, "parse_json", RUBY_METHOD_FUNC(native_parse_json), 1);
  rb_define_singleton_method(native, "sniff", RUBY_METHOD_FUNC(native_sniff), 1);
}

}  // namespace rperf
