# frozen_string_literal: true

# Loader benchmark (not a test): the synthetic profile saved as json.gz and json, then read
# back by Rperf.load (C++ gunzip + JSON reader sharing frames) and, for comparison, by
# Zlib.gunzip + JSON.parse (what rperf 0.10's load does); and the same profile as .pb.gz read
# back by the native pprof reader. 3 runs each in a forked child.
require "rperf"
require "tmpdir"
require "zlib"
require_relative "support/synthetic_profile"

data = SyntheticProfile.build
puts "Load benchmark: #{SyntheticProfile::STACKS} stacks x depth #{SyntheticProfile::DEPTH}, " \
     "#{SyntheticProfile::FRAMES} distinct frames"
puts format("%-34s %9s %9s %12s", "reader", "median s", "max s", "peak +RSS")
Dir.mktmpdir do |dir|
  %w[json.gz json pb.gz].each do |ext|
    path = File.join(dir, "bench.#{ext}")
    Rperf.save(path, data)
    readers = { "Rperf.load #{ext}" => -> { Rperf.load(path) } }
    unless ext == "pb.gz" # pprof: the native reader (io/pprof_reader.cc) only
      readers["JSON.parse #{ext}"] = lambda {
        raw = File.binread(path)
        JSON.parse(ext.end_with?(".gz") ? Zlib.gunzip(raw) : raw, symbolize_names: true)
      }
    end
    readers.each do |name, read|
      runs = Array.new(3) { SyntheticProfile.measure(&read) }
      times = runs.map(&:first).sort
      puts format("%-34s %9.3f %9.3f %10.1fMB", name, times[1], times[2], runs.map(&:last).max)
    end
  end
end
