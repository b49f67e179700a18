// Ruby binding of the encoders: Native::Profile#encode(format, options) runs an encoder into an
// Output (a file or a String, optionally gzipped) without the GVL, so the application's other
// threads keep running while a profile is saved. A file is written through io/atomic_file
// (a temporary name beside the target's real path, fsync, rename): a failure (full disk,
// crash) leaves the previous file. Native.write_file does the same for any String.
#include <ruby/ruby.h>
#include <ruby/thread.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <new>
#include <string>

#include "io/atomic_file.hh"
#include "io/encoders.hh"
#include "io/output.hh"
#include "ruby/profile_binding.hh"
#include "ruby/values.hh"

namespace rperf {

namespace {

enum class Format { kPprof, kCollapsed, kSpeedscope, kText, kJson, kCallgrind, kAllocations, kFirefox };

// Everything the encoder needs once the GVL is released: no Ruby object is touched then.
struct EncodeJob {
  const Profile* profile = nullptr;
  Format format = Format::kJson;
  OutputOptions options;
  std::string name = "rperf";  // speedscope profile name
  FirefoxOptions firefox;      // firefox: product (the name option), root_pid
  std::vector<std::string> comments;  // pprof
  JsonValue trailer;                  // json: members written after the body (rperf_version, pid, ppid)
  int top = 10;
  bool header = true;  // text: the Total/Samples lines
  bool allocations = false;  // collapsed: the allocation samples instead of the time samples
  bool interval_guessed = false;  // allocations: the file did not name the allocation interval
  AtomicFile* file = nullptr;  // write here (and commit), or
  std::string* str = nullptr;  // append here
  int error = 0;
  bool ran = false;
};

void* run_encode_job(void* arg) {
  EncodeJob& job = *static_cast<EncodeJob*>(arg);
  job.ran = true;
  FileSizeLimitAsError limit_as_error;  // `ulimit -f`: EFBIG, said as the file's error
  try {
    std::unique_ptr<Output> out(job.file ? new Output(job.file->fd(), job.options) : new Output(job.str, job.options));
    switch (job.format) {
      case Format::kPprof: out->append(encode_pprof(*job.profile, job.comments)); break;
      case Format::kCollapsed: encode_collapsed(*job.profile, *out, job.allocations); break;
      case Format::kSpeedscope: out->append(encode_speedscope(*job.profile, job.name)); break;
      case Format::kText: out->append(encode_text(*job.profile, job.top, job.header)); break;
      case Format::kJson: encode_json(*job.profile, job.trailer, *out); break;
      case Format::kCallgrind: encode_callgrind(*job.profile, *out); break;
      case Format::kAllocations: out->append(encode_allocation_text(*job.profile, job.top, job.interval_guessed)); break;
      case Format::kFirefox: encode_firefox(*job.profile, job.firefox, *out); break;
    }
    job.error = out->finish();
    out.reset();
    if (job.file) {
      if (job.error) job.file->abandon();
      else job.error = job.file->commit();  // fsync and rename: without the GVL too
    }
  } catch (const std::bad_alloc&) {
    job.error = ENOMEM;
  }
  return nullptr;
}

// Runs `fn` without the GVL and never raises: rb_thread_call_without_gvl checks interrupts
// when it returns, so a Ctrl-C or Thread#raise during a write would longjmp over the C++ objects
// of the caller (and, before the commit moved into the job, lose the file: a second Ctrl-C
// during the final write). The _gvl2 variant does not, but skips `fn` when an interrupt is
// already pending: then it runs here, with the GVL. The caller delivers pending interrupts
// (rb_thread_check_ints) once its C++ objects are gone.
void call_without_gvl(void* (*fn)(void*), void* job, const bool& ran) {
  rb_thread_call_without_gvl2(fn, job, nullptr, nullptr);
  if (!ran) fn(job);
}

// Every encoder by name, in the order users see the profile formats; `file`: a profile file
// format (Rperf.save's format:, RPERF_FORMAT, `--format`); the allocation report is a printer
// only. The one list of formats: Native::PROFILE_FORMATS is made from it.
struct FormatName {
  const char* name;
  Format format;
  bool file;
};
constexpr FormatName kFormats[] = {
    {"json", Format::kJson, true},           {"pprof", Format::kPprof, true},
    {"collapsed", Format::kCollapsed, true}, {"text", Format::kText, true},
    {"speedscope", Format::kSpeedscope, true}, {"callgrind", Format::kCallgrind, true},
    {"firefox", Format::kFirefox, true},     {"allocations", Format::kAllocations, false},
};

bool format_from_symbol(VALUE format, Format& out) {
  if (!SYMBOL_P(format)) return false;
  ID f = SYM2ID(format);
  for (const FormatName& n : kFormats) {
    if (f == rb_intern(n.name)) {
      out = n.format;
      return true;
    }
  }
  return false;
}

VALUE option(VALUE options, const char* key) { return NIL_P(options) ? Qnil : rb_hash_lookup(options, sym(key)); }

// Native::Profile#encode(format, options) -> String, or nil when options[:path] is given.
// options: path, gzip, level, deflate ("zlib" forces zlib), name, top, header, comments, trailer,
// allocations (collapsed: the allocation view), interval_guessed (allocations: say so),
// pid (firefox: the pid of the process whose samples have no %pid label).
VALUE profile_encode(VALUE self, VALUE format, VALUE options) {
  ProfileHolder* h = holder_of(self);
  if (!NIL_P(options)) Check_Type(options, T_HASH);
  Format f;
  if (!format_from_symbol(format, f)) rb_raise(rb_eArgError, "rperf: unknown encoder %" PRIsVALUE, format);
  VALUE path = option(options, "path"), name = option(options, "name"), top = option(options, "top");
  VALUE level = option(options, "level"), deflate = option(options, "deflate"), comments = option(options, "comments");
  VALUE trailer = option(options, "trailer"), pid = option(options, "pid");
  if (!NIL_P(trailer)) Check_Type(trailer, T_HASH);
  if (!NIL_P(path)) FilePathValue(path);
  if (!NIL_P(name)) StringValue(name);
  if (!NIL_P(pid)) StringValue(pid);
  if (!NIL_P(comments)) Check_Type(comments, T_ARRAY);
  int top_n = NIL_P(top) ? 10 : NUM2INT(top);
  int level_n = NIL_P(level) ? -2 : NUM2INT(level);
  for (long i = 0; !NIL_P(comments) && i < RARRAY_LEN(comments); i++) Check_Type(RARRAY_AREF(comments, i), T_STRING);

  // From here on nothing raises until the C++ objects below are gone.
  int error = 0;
  VALUE body = Qnil;
  {
    EncodeJob job;
    AtomicFile file;
    std::string out_str;
    job.profile = &h->profile;
    job.format = f;
    job.top = top_n;
    job.header = option(options, "header") != Qfalse;
    job.allocations = RTEST(option(options, "allocations"));
    job.interval_guessed = RTEST(option(options, "interval_guessed"));
    job.options.gzip = RTEST(option(options, "gzip"));
    if (level_n != -2) job.options.level = level_n;
    if (RB_TYPE_P(deflate, T_STRING) && std::string(RSTRING_PTR(deflate), RSTRING_LEN(deflate)) == "zlib") job.options.backend = DeflateBackend::kZlib;
    if (!NIL_P(name)) job.name.assign(RSTRING_PTR(name), static_cast<size_t>(RSTRING_LEN(name)));
    if (f == Format::kFirefox) {
      if (!NIL_P(name)) job.firefox.product = job.name;
      if (!NIL_P(pid)) job.firefox.root_pid.assign(RSTRING_PTR(pid), static_cast<size_t>(RSTRING_LEN(pid)));
    }
    if (!NIL_P(trailer)) ruby_to_json(trailer, job.trailer);
    for (long i = 0; !NIL_P(comments) && i < RARRAY_LEN(comments); i++) {
      VALUE c = RARRAY_AREF(comments, i);
      job.comments.emplace_back(RSTRING_PTR(c), static_cast<size_t>(RSTRING_LEN(c)));
    }
    std::string target = NIL_P(path) ? std::string() : std::string(RSTRING_PTR(path), static_cast<size_t>(RSTRING_LEN(path)));
    if (NIL_P(path)) {
      job.str = &out_str;
    } else if ((error = file.open(target)) == 0) {
      job.file = &file;
    }
    if (!error) {
      call_without_gvl(run_encode_job, &job, job.ran);
      error = job.error;
    }
    if (!error && NIL_P(path)) body = rb_str_new(out_str.data(), static_cast<long>(out_str.size()));
  }
  rb_thread_check_ints();  // a Ctrl-C during the write: raised now, the file written, nothing leaked
  if (error) {
    if (NIL_P(path)) rb_syserr_fail(error, "rperf: encoding the profile");
    rb_syserr_fail_str(error, path);
  }
  RB_GC_GUARD(self);
  return body;
}

struct WriteJob {
  std::string path;
  std::string data;
  int error = 0;
  bool ran = false;
};

void* run_write_job(void* arg) {
  WriteJob& job = *static_cast<WriteJob*>(arg);
  job.ran = true;
  job.error = write_file_atomically(job.path, job.data.data(), job.data.size());
  return nullptr;
}

// Native.write_file(path, string) -> path: the String as the file's new content, atomically
// (io/atomic_file.hh), without the GVL. Raises the SystemCallError of what failed; the previous
// file is then intact.
VALUE native_write_file(VALUE, VALUE path, VALUE data) {
  FilePathValue(path);
  StringValue(data);
  int error = 0;
  {
    WriteJob job;
    bool copied = false;
    try {
      job.path.assign(RSTRING_PTR(path), static_cast<size_t>(RSTRING_LEN(path)));
      job.data.assign(RSTRING_PTR(data), static_cast<size_t>(RSTRING_LEN(data)));  // the String may change meanwhile
      copied = true;
    } catch (const std::bad_alloc&) {
      error = ENOMEM;
    }
    if (copied) {
      call_without_gvl(run_write_job, &job, job.ran);
      error = job.error;
    }
  }
  rb_thread_check_ints();  // a Ctrl-C during the write: raised now, the file written, nothing leaked
  if (error) rb_syserr_fail_str(error, path);
  RB_GC_GUARD(data);
  return path;
}

}  // namespace

void init_encode_binding(VALUE native) {
  VALUE formats = rb_ary_new();
  for (const FormatName& n : kFormats) {
    if (n.file) rb_ary_push(formats, ID2SYM(rb_intern(n.name)));
  }
  rb_define_const(native, "PROFILE_FORMATS", rb_ary_freeze(formats));
  rb_define_method(profile_class(), "encode", RUBY_METHOD_FUNC(profile_encode), 2);
  rb_define_singleton_method(native, "write_file", RUBY_METHOD_FUNC(native_write_file), 2);
  // Which deflate library writes .gz files ("isa-l" or "zlib <version>"), for benchmarks.
  std::string backend = deflate_backend_name(default_deflate_backend());
  rb_define_const(native, "DEFLATE_BACKEND", rb_str_freeze(rb_str_new(backend.data(), static_cast<long>(backend.size()))));
}

}  // namespace rperf
