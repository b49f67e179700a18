# frozen_string_literal: true

# Encoder benchmark (not a test): the synthetic profile written in every format through
# Rperf.save (3 runs each, each in a forked child: median, slowest, peak memory added).
#   - "view": the Hash view of a native profile (what Rperf.stop/load return): saved from the
#     native profile it came from;
#   - "foreign": a hand-built Hash with shared frame Arrays (converted, frames found by identity);
#   - "foreign, unshared": every frame a distinct Array of distinct Strings (what JSON.parse
#     gives): converted, frames found by content.
# The last row writes json.gz with zlib instead of ISA-L, for comparison.
require "rperf"
require "tmpdir"
require "etc"
require_relative "support/synthetic_profile"

foreign = SyntheticProfile.build
unshared = foreign.merge(aggregated_samples: foreign[:aggregated_samples].map { |s| [s[0].map { |f| f.map(&:dup) }, *s[1..]] })
view = Rperf::Storage.native(foreign).to_h
puts "Encode benchmark: #{SyntheticProfile::STACKS} stacks x depth #{SyntheticProfile::DEPTH}, " \
     "#{SyntheticProfile::FRAMES} distinct frames; gzip by #{Rperf::Native::DEFLATE_BACKEND}, #{Etc.nprocessors} CPUs"
puts format("%-34s %9s %9s %10s %12s", "format (input)", "median s", "max s", "size", "peak +RSS")
Dir.mktmpdir do |dir|
  rows = %w[json.gz json pb.gz collapsed txt speedscope.json].map { |ext| [ext, ext, ->(path) { Rperf.save(path, view) }] }
  rows << ["json.gz (foreign)", "json.gz", ->(path) { Rperf.save(path, foreign) }]
  rows << ["json.gz (foreign, unshared)", "json.gz", ->(path) { Rperf.save(path, unshared) }]
  rows << ["pb.gz (foreign, unshared)", "pb.gz", ->(path) { Rperf.save(path, unshared) }]
  rows << ["conversion only (foreign, unshared)", "none", ->(_path) { Rperf::Storage.native(unshared) }]
  rows << ["json.gz (view, zlib)", "json.gz", ->(path) { Rperf::Storage.native(view).encode(:json, { gzip: true, level: 1, path: path, deflate: "zlib" }) }]
  rows.each do |name, ext, write|
    path = File.join(dir, "bench.#{ext}")
    runs = Array.new(3) do
      File.delete(path) if File.exist?(path)
      SyntheticProfile.measure { write.call(path) }
    end
    times = runs.map(&:first).sort
    size = File.exist?(path) ? format("%8.1fMB", File.size(path) / 1e6) : format("%10s", "-")
    puts format("%-34s %9.3f %9.3f %s %10.1fMB", name, times[1], times[2], size, runs.map(&:last).max)
  end
end
