// Rperf::Native.peak_rss_kb: this process's peak resident set in KB (util/peak_rss), nil where
// /proc is not available.
#include <ruby/ruby.h>

#include "util/peak_rss.hh"

namespace rperf {

namespace {

VALUE native_peak_rss_kb(VALUE) {
  long kb = peak_rss_kb();
  return kb < 0 ? Qnil : LONG2NUM(kb);
}

}  // namespace

void init_process_binding(VALUE native) { rb_define_singleton_method(native, "peak_rss_kb", RUBY_METHOD_FUNC(native_peak_rss_kb), 0); }

}  // namespace rperf
