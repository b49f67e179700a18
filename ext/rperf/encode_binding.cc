// Ruby binding of the encoders: converts a result Hash (from stop, snapshot or load) into a
// Profile, runs an encoder, and gzips. The Profile and the conversion tables are owned by a
// Ruby object, so a TypeError raised half-way through cannot leak them.
#include <fcntl.h>
#include <ruby/ruby.h>
#include <unistd.h>

#include <cerrno>

#include <string>
#include <unordered_map>

#include "encode/profile.hh"

namespace rperf {

namespace {

struct Conversion {
  Profile profile;
  std::string body;  // the encoded file
  std::unordered_map<VALUE, uint32_t> frame_by_object;
  std::unordered_map<std::string, uint32_t> frame_by_content;
};

void conversion_free(void* p) { delete static_cast<Conversion*>(p); }
size_t conversion_size(const void*) { return sizeof(Conversion); }
const rb_data_type_t kConversionType = {"rperf/conversion", {nullptr, conversion_free, conversion_size, nullptr, {nullptr}}, nullptr, nullptr, 0};

std::string to_std_string(VALUE v) {
  VALUE s = rb_obj_as_string(v);
  return std::string(RSTRING_PTR(s), RSTRING_LEN(s));
}

VALUE fetch(VALUE hash, const char* key) { return rb_hash_aref(hash, ID2SYM(rb_intern(key))); }

uint32_t convert_frame(Conversion& c, VALUE frame) {
  auto it = c.frame_by_object.find(frame);
  if (it != c.frame_by_object.end()) return it->second;
  if (!RB_TYPE_P(frame, T_ARRAY) || RARRAY_LEN(frame) < 2) rb_raise(rb_eTypeError, "rperf: a frame must be [path, label] or [path, label, line]");
  ProfileFrame f;
  f.path = to_std_string(RARRAY_AREF(frame, 0));
  f.label = to_std_string(RARRAY_AREF(frame, 1));
  if (RARRAY_LEN(frame) >= 3) {
    VALUE line = RARRAY_AREF(frame, 2);
    f.line = RB_INTEGER_TYPE_P(line) ? NUM2INT(line) : 0;
    c.profile.has_lines = true;
  }
  std::string key = f.path + '\0' + f.label + '\0' + std::to_string(f.line);
  auto [cit, inserted] = c.frame_by_content.emplace(key, static_cast<uint32_t>(c.profile.frames.size()));
  if (inserted) c.profile.frames.push_back(std::move(f));
  c.frame_by_object.emplace(frame, cit->second);
  return cit->second;
}

void convert(Conversion& c, VALUE data) {
  Check_Type(data, T_HASH);
  Profile& p = c.profile;
  VALUE mode = fetch(data, "mode");
  if (!NIL_P(mode)) p.mode = to_std_string(mode);
  VALUE v;
  if (!NIL_P(v = fetch(data, "frequency"))) p.frequency = NUM2INT(v);
  if (!NIL_P(v = fetch(data, "start_time_ns"))) p.start_time_ns = NUM2LL(v);
  if (!NIL_P(v = fetch(data, "duration_ns"))) p.duration_ns = NUM2LL(v);
  if (!NIL_P(v = fetch(data, "sampling_count"))) p.sampling_count = NUM2LL(v);

  VALUE label_sets = fetch(data, "label_sets");
  if (!NIL_P(label_sets)) {
    Check_Type(label_sets, T_ARRAY);
    for (long i = 0; i < RARRAY_LEN(label_sets); i++) {
      VALUE h = RARRAY_AREF(label_sets, i);
      Check_Type(h, T_HASH);
      VALUE pairs = rb_funcall(h, rb_intern("to_a"), 0);
      LabelSet set;
      for (long k = 0; k < RARRAY_LEN(pairs); k++) {
        VALUE kv = RARRAY_AREF(pairs, k);
        set.emplace_back(to_std_string(RARRAY_AREF(kv, 0)), to_std_string(RARRAY_AREF(kv, 1)));
      }
      p.label_sets.push_back(std::move(set));
    }
  }

  VALUE samples = fetch(data, "aggregated_samples");
  Check_Type(samples, T_ARRAY);
  std::unordered_map<std::string, int32_t> start_lines;  // label \0 path -> first line
  VALUE starts = fetch(data, "function_start_lines");
  if (RB_TYPE_P(starts, T_ARRAY)) {
    for (long i = 0; i < RARRAY_LEN(starts); i++) {
      VALUE e = RARRAY_AREF(starts, i);
      if (!RB_TYPE_P(e, T_ARRAY) || RARRAY_LEN(e) < 3 || !RB_INTEGER_TYPE_P(RARRAY_AREF(e, 2))) continue;
      start_lines[to_std_string(RARRAY_AREF(e, 1)) + '\0' + to_std_string(RARRAY_AREF(e, 0))] = NUM2INT(RARRAY_AREF(e, 2));
    }
  }
  p.samples.reserve(RARRAY_LEN(samples));
  for (long i = 0; i < RARRAY_LEN(samples); i++) {
    VALUE s = RARRAY_AREF(samples, i);
    if (!RB_TYPE_P(s, T_ARRAY) || RARRAY_LEN(s) < 2) rb_raise(rb_eTypeError, "rperf: a sample must be [frames, weight, thread_seq, label_set_id]");
    VALUE frames = RARRAY_AREF(s, 0);
    Check_Type(frames, T_ARRAY);
    ProfileSample ps;
    ps.frames.reserve(RARRAY_LEN(frames));
    for (long k = 0; k < RARRAY_LEN(frames); k++) ps.frames.push_back(convert_frame(c, RARRAY_AREF(frames, k)));
    ps.weight_ns = NUM2LL(RARRAY_AREF(s, 1));
    if (RARRAY_LEN(s) > 2 && !NIL_P(RARRAY_AREF(s, 2))) ps.thread_seq = NUM2UINT(RARRAY_AREF(s, 2));
    if (RARRAY_LEN(s) > 3 && !NIL_P(RARRAY_AREF(s, 3))) {
      ps.label_set = NUM2UINT(RARRAY_AREF(s, 3));
      if (ps.label_set >= p.label_sets.size()) rb_raise(rb_eArgError, "rperf: label_set_id %u has no label set", ps.label_set);
    }
    p.samples.push_back(std::move(ps));
  }
  if (!start_lines.empty()) {
    for (ProfileFrame& f : p.frames) {
      auto it = start_lines.find(f.label + '\0' + f.path);
      if (it != start_lines.end()) f.start_line = it->second;
    }
  }
}

// Native.encode(data, format, gzip, options) -> String (binary)
// Writes all of `data` to `path`; returns 0 or an errno value.
int write_file(const char* path, const std::string& data) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      close(fd);
      return e;
    }
    done += static_cast<size_t>(n);
  }
  return close(fd) == 0 ? 0 : errno;
}

// Native.encode(data, format, gzip, options) -> String (binary), or nil when options[:path]
// is given and the file was written there directly (large profiles skip a Ruby-side copy).
VALUE native_encode(VALUE, VALUE data, VALUE format, VALUE gzip, VALUE options) {
  Conversion* c = new Conversion();
  VALUE holder = TypedData_Wrap_Struct(rb_cObject, &kConversionType, c);
  convert(*c, data);
  auto option = [&](const char* key) { return NIL_P(options) ? Qnil : fetch(options, key); };
  VALUE comments = option("comments");
  if (!NIL_P(comments)) {
    Check_Type(comments, T_ARRAY);
    for (long i = 0; i < RARRAY_LEN(comments); i++) c->profile.comments.push_back(to_std_string(RARRAY_AREF(comments, i)));
  }
  VALUE name = option("name"), top = option("top"), level = option("level"), path = option("path");
  if (!NIL_P(path)) FilePathValue(path);

  ID f = SYM2ID(format);
  std::string& body = c->body;
  if (f == rb_intern("pprof")) body = encode_pprof(c->profile);
  else if (f == rb_intern("collapsed")) body = encode_collapsed(c->profile);
  else if (f == rb_intern("speedscope")) body = encode_speedscope(c->profile, NIL_P(name) ? "rperf" : to_std_string(name));
  else if (f == rb_intern("text")) body = encode_text(c->profile, NIL_P(top) ? 10 : NUM2INT(top));
  else if (f == rb_intern("json")) {
    // The document head (meta, summary, scalar keys) comes from Ruby as `{...` without its
    // closing brace; the sample body is appended here to avoid copying it through Ruby.
    VALUE head = option("head");
    StringValue(head);
    body.assign(RSTRING_PTR(head), RSTRING_LEN(head));
    body += encode_json_samples(c->profile);
    body += '}';
  } else {
    rb_raise(rb_eArgError, "rperf: unknown encoder %" PRIsVALUE, format);
  }
  if (RTEST(gzip)) body = gzip_compress(body, NIL_P(level) ? -1 : NUM2INT(level));
  VALUE out = Qnil;
  if (NIL_P(path)) {
    out = rb_str_new(body.data(), static_cast<long>(body.size()));
  } else if (int err = write_file(RSTRING_PTR(path), body)) {
    rb_syserr_fail_str(err, path);
  }
  RB_GC_GUARD(holder);
  return out;
}

// Native.gzip(string, level) -> String
VALUE native_gzip(VALUE, VALUE str, VALUE level) {
  StringValue(str);
  std::string body = gzip_compress(std::string(RSTRING_PTR(str), RSTRING_LEN(str)), NIL_P(level) ? -1 : NUM2INT(level));
  return rb_str_new(body.data(), static_cast<long>(body.size()));
}

}  // namespace

void init_encode_binding(VALUE native) {
  rb_define_singleton_method(native, "encode", RUBY_METHOD_FUNC(native_encode), 4);
  rb_define_singleton_method(native, "gzip", RUBY_METHOD_FUNC(native_gzip), 2);
}

}  // namespace rperf
