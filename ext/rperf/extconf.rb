# frozen_string_literal: true

require "mkmf"

if RUBY_VERSION < "3.3"
  abort "rperf needs Ruby >= 3.3 (this is #{RUBY_VERSION}): it uses rb_postponed_job_preregister, " \
        "thread-specific storage and GVL event hooks"
end
if Gem.win_platform? || !have_header("pthread.h") || !have_func("clock_gettime", "time.h")
  abort "rperf needs a POSIX platform (pthreads, clock_gettime)"
end
have_func("timer_create", "time.h") || have_library("rt", "timer_create", "time.h")
have_library("z", "deflateInit2_", "zlib.h") or abort "rperf needs zlib (Debian: zlib1g-dev)"
# Intel ISA-L deflates large .json.gz profiles 3.5x faster than zlib (and smaller): used when
# installed (Debian: libisal-dev), unless built with `-- --without-isal`; zlib otherwise.
if with_config("isal", true) && have_header("isa-l/igzip_lib.h") && have_library("isal", "isal_deflate", "isa-l/igzip_lib.h")
  $defs << "-DRPERF_HAVE_ISAL"
end

$CXXFLAGS = "#{$CXXFLAGS} -std=c++17 -O2 -Wall -Wextra -fvisibility=hidden".strip
# Ruby's ruby/internal/encoding/ctype.h has an unused parameter; include Ruby's headers as
# system headers so -Wextra judges our code only.
$INCFLAGS = $INCFLAGS.gsub(/-I(\$\((?:arch_)?hdrdir\)\S*)/) { "-isystem #{Regexp.last_match(1)}" }
$warnflags = ""
$LDFLAGS << " -pthread"

# The layers live in subdirectories (sampler/, profile/, views/, io/, ruby/, util/); every .cc there is
# compiled. Includes are relative to this directory ("profile/profile.hh").
LAYERS = %w[sampler profile views io ruby util].freeze
$srcs = LAYERS.flat_map { |dir| Dir[File.join(__dir__, dir, "*.cc")].sort.map { |f| "#{dir}/#{File.basename(f)}" } }
basenames = $srcs.map { |s| File.basename(s, ".cc") }
abort "rperf: two sources share a base name" if basenames.uniq.size != basenames.size
LAYERS.each { |dir| $VPATH << "$(srcdir)/#{dir}" }
$INCFLAGS << " -I$(srcdir)"
$objs = basenames.map { |b| "#{b}.o" }

create_makefile("rperf/rperf")
