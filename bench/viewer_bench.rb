# frozen_string_literal: true

# Viewer benchmark (not a test): the JSON body the viewer serves for the synthetic profile
# (100,000 unique stacks of depth 40, no shared prefixes: the worst case for its prefix tree),
# with the default max_samples (20,000: the lighter stacks folded into [pruned]), 50,000, and
# none pruned. Each run in a forked child: median of 3, peak memory added, body size.
require "rperf"
require "rperf/viewer"
require "json"
require_relative "support/synthetic_profile"

data = SyntheticProfile.build
puts "Viewer payload benchmark: #{SyntheticProfile::STACKS} stacks x depth #{SyntheticProfile::DEPTH}, " \
     "#{SyntheticProfile::FRAMES} distinct frames"
puts format("%-26s %9s %9s %10s %12s", "max_samples", "median s", "max s", "body", "peak +RSS")
[20_000, 50_000, 100_000].each do |max_samples|
  runs = Array.new(3) do
    SyntheticProfile.measure { JSON.generate(Rperf::Viewer::Payload.build(data, max_samples: max_samples, max_timeline: 200_000)) }
  end
  size = JSON.generate(Rperf::Viewer::Payload.build(data, max_samples: max_samples, max_timeline: 200_000)).bytesize
  times = runs.map(&:first).sort
  puts format("%-26s %9.2f %9.2f %8.1fMB %10.0fMB", max_samples, times[1], times.last, size / 1e6, runs.map(&:last).max)
end
