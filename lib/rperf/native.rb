# frozen_string_literal: true

# The native extension. A checkout holds one build per Ruby series (lib/rperf/3.3/rperf.so,
# lib/rperf/3.4/rperf.so: script/bootstrap), an installed gem the one it was built for.
series_build = File.join(__dir__, RUBY_VERSION[/\A\d+\.\d+/], "rperf.so")
if File.exist?(series_build)
  require series_build
else
  require_relative "rperf"
end
