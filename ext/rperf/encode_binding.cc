// Ruby binding of the encoders: converts a result Hash (from stop, snapshot or load) into a
// Profile, then runs an encoder into an Output (a file or a string, optionally gzipped). The Profile and the conversion tables are owned by a
// Ruby object, so a TypeError raised half-way through cannot leak them.
#include <fcntl.h>
#include <ruby/ruby.h>
#include <ruby/thread.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <new>
#include <string>
#include <unordered_map>

#include "encode/output.hh"
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

enum class Format { kPprof, kCollapsed, kSpeedscope, kText, kJson };

// Everything the encoder needs once the GVL is released: no Ruby object is touched then.
struct EncodeJob {
  const Profile* profile;
  Format format;
  OutputOptions options;
  std::string head;  // json: the document head from Ruby, `{...,` without its closing brace
  std::string name;  // speedscope / collapsed profile name
  int top = 10;
  int fd = -1;                  // write here, or
  std::string* str = nullptr;   // append here
  int error = 0;
};

void* run_encode_job(void* arg) {
  EncodeJob& job = *static_cast<EncodeJob*>(arg);
  try {
    std::unique_ptr<Output> out(job.fd >= 0 ? new Output(job.fd, job.options) : new Output(job.str, job.options));
    switch (job.format) {
      case Format::kPprof: out->append(encode_pprof(*job.profile)); break;
      case Format::kCollapsed: encode_collapsed(*job.profile, *out); break;
      case Format::kSpeedscope: out->append(encode_speedscope(*job.profile, job.name)); break;
      case Format::kText: out->append(encode_text(*job.profile, job.top)); break;
      case Format::kJson:
        out->append(job.head);
        encode_json_samples(*job.profile, *out);
        out->append('}');
        break;
    }
    job.error = out->finish();
  } catch (const std::bad_alloc&) {
    job.error = ENOMEM;
  }
  return nullptr;
}

Format format_from_symbol(VALUE format) {
  ID f = SYM2ID(format);
  if (f == rb_intern("pprof")) return Format::kPprof;
  if (f == rb_intern("collapsed")) return Format::kCollapsed;
  if (f == rb_intern("speedscope")) return Format::kSpeedscope;
  if (f == rb_intern("text")) return Format::kText;
  if (f == rb_intern("json")) return Format::kJson;
  rb_raise(rb_eArgError, "rperf: unknown encoder %" PRIsVALUE, format);
}

// Native.encode(data, format, gzip, options) -> String, or nil when options[:path] is given:
// the file is then written directly, chunk by chunk. Encoding, compression and writing run
// without the GVL, so the application's other threads keep running meanwhile.
VALUE native_encode(VALUE, VALUE data, VALUE format, VALUE gzip, VALUE options) {
  Check_Type(format, T_SYMBOL);
  Conversion* c = new Conversion();
  VALUE holder = TypedData_Wrap_Struct(rb_cObject, &kConversionType, c);
  convert(*c, data);
  auto option = [&](const char* key) { return NIL_P(options) ? Qnil : fetch(options, key); };
  VALUE comments = option("comments");
  if (!NIL_P(comments)) {
    Check_Type(comments, T_ARRAY);
    for (long i = 0; i < RARRAY_LEN(comments); i++) c->profile.comments.push_back(to_std_string(RARRAY_AREF(comments, i)));
  }
  EncodeJob job;
  job.profile = &c->profile;
  job.format = format_from_symbol(format);
  job.options.gzip = RTEST(gzip);
  VALUE name = option("name"), top = option("top"), level = option("level"), path = option("path");
  if (!NIL_P(level)) job.options.level = NUM2INT(level);
  // deflate: "zlib" forces the fallback library (benchmarks and tests compare the two).
  VALUE deflate = option("deflate");
  if (!NIL_P(deflate) && to_std_string(deflate) == "zlib") job.options.backend = DeflateBackend::kZlib;
  if (!NIL_P(name)) job.name = to_std_string(name);
  else job.name = "rperf";
  if (!NIL_P(top)) job.top = NUM2INT(top);
  if (job.format == Format::kJson) {
    VALUE head = option("head");
    StringValue(head);
    job.head.assign(RSTRING_PTR(head), RSTRING_LEN(head));
  }
  if (NIL_P(path)) {
    job.str = &c->body;
  } else {
    FilePathValue(path);
    job.fd = open(RSTRING_PTR(path), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (job.fd < 0) rb_syserr_fail_str(errno, path);
  }
  rb_thread_call_without_gvl(run_encode_job, &job, nullptr, nullptr);
  if (job.fd >= 0 && close(job.fd) != 0 && job.error == 0) job.error = errno;
  if (job.error) {
    if (NIL_P(path)) rb_syserr_fail(job.error, "rperf: encoding the profile");
    rb_syserr_fail_str(job.error, path);
  }
  VALUE out = NIL_P(path) ? rb_str_new(c->body.data(), static_cast<long>(c->body.size())) : Qnil;
  RB_GC_GUARD(holder);
  return out;
}

}  // namespace

void init_encode_binding(VALUE native) {
  rb_define_singleton_method(native, "encode", RUBY_METHOD_FUNC(native_encode), 4);
  // Which deflate library writes .gz files ("isa-l" or "zlib <version>"), for benchmarks.
  std::string backend = deflate_backend_name(default_deflate_backend());
  rb_define_const(native, "DEFLATE_BACKEND", rb_str_freeze(rb_str_new(backend.data(), static_cast<long>(backend.size()))));
}

}  // namespace rperf
