# frozen_string_literal: true

# Encoder benchmark (not a test): the synthetic profile written in every format through
# Rperf.save (3 runs each, each in a forked child: median, slowest, peak memory added). The
# last row writes json.gz with zlib instead of ISA-L, for comparison.
require "rperf"
require "tmpdir"
require "etc"
require_relative "support/synthetic_profile"

data = SyntheticProfile.build
puts "Encode benchmark: #{SyntheticProfile::STACKS} stacks x depth #{SyntheticProfile::DEPTH}, " \
     "#{SyntheticProfile::FRAMES} distinct frames; gzip by #{Rperf::Native::DEFLATE_BACKEND}, #{Etc.nprocessors} CPUs"
puts format("%-22s %9s %9s %10s %12s", "format", "median s", "max s", "size", "peak +RSS")
Dir.mktmpdir do |dir|
  rows = %w[json.gz json pb.gz collapsed txt speedscope.json].map do |ext|
    [ext, ->(path) { Rperf.save(path, data) }]
  end
  head = JSON.generate(Rperf::Storage.json_head(data)).chomp("}") + ","
  rows << ["json.gz (zlib)", ->(path) { Rperf::Native.encode(data, :json, true, { head: head, level: 1, path: path, deflate: "zlib" }) }]
  rows.each do |name, write|
    path = File.join(dir, "bench.#{name.split.first}")
    runs = Array.new(3) do
      File.delete(path) if File.exist?(path)
      SyntheticProfile.measure { write.call(path) }
    end
    times = runs.map(&:first).sort
    puts format("%-22s %9.3f %9.3f %8.1fMB %10.1fMB", name, times[1], times[2], File.size(path) / 1e6, runs.map(&:last).max)
  end
end
