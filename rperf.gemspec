# frozen_string_literal: true

require_relative "lib/rperf/version"

Gem::Specification.new do |spec|
  spec.name = "rperf"
  spec.version = Rperf::VERSION
  spec.summary = "A sampling profiler for Ruby with a C++ core: cpu and wall time, GVL and GC attribution"
  spec.description = "rperf samples Ruby threads with a signal timer and postponed jobs, attributes " \
                     "time to CPU, GVL blocking/waiting and GC phases, and writes pprof, json, " \
                     "collapsed, text and speedscope profiles."
  spec.authors = ["rperf developers"]
  spec.license = "MIT"
  spec.required_ruby_version = ">= 3.3"
  # The C++ sources live in layer subdirectories of ext/rperf (extconf.rb compiles every .cc
  # there); the viewer's assets are its own code (no third-party script), page_model.wasm
  # among them: ext/rperf/page built by script/build-page-model (emscripten), committed and shipped built. Built .so files in a
  # checkout (lib/rperf/<series>/) are not shipped: the gem builds its own. docs/cli.md and
  # docs/reference.md are the manual `rperf help` prints.
  spec.files = Dir.chdir(__dir__) do
    Dir["lib/**/*.rb", "lib/rperf/viewer/assets/**/*", "ext/rperf/**/*.{cc,hh,rb}", "exe/*", "README.md", "docs/cli.md", "docs/reference.md"]
      .select { |f| File.file?(f) }.sort
  end
  spec.bindir = "exe"
  spec.executables = ["rperf"]
  spec.require_paths = ["lib"]
  spec.extensions = ["ext/rperf/extconf.rb"]
end
