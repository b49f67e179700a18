# frozen_string_literal: true

# Encoder benchmark (not a test): a synthetic profile of 100,000 unique stacks of depth 40
# over 20,000 distinct frames, written in every format through Rperf.save.
require "rperf"
require "tmpdir"

rng = Random.new(42)
frames = Array.new(20_000) { |i| ["app/models/file#{i % 700}.rb", "Module#{i % 300}::Klass#{i % 97}#method_#{i}", rng.rand(1..900)].freeze }
samples = Array.new(100_000) do |i|
  stack = Array.new(40) { |d| frames[(i * 7919 + d * 104_729 + rng.rand(50)) % frames.size] }
  [stack, rng.rand(1..5_000_000), 1 + i % 8, i % 3]
end
data = {
  mode: :cpu, frequency: 1000, sampling_count: 100_000, duration_ns: 60_000_000_000,
  start_time_ns: Time.now.to_i * 1_000_000_000, aggregated_samples: samples,
  label_sets: [{}, { endpoint: "/users" }, { "%GVL" => "blocked" }],
}
puts "Encode benchmark: #{samples.size} stacks x depth 40, #{frames.size} distinct frames"
puts format("%-18s %10s %12s", "format", "seconds", "size")
Dir.mktmpdir do |dir|
  %w[json.gz json pb.gz collapsed txt speedscope.json].each do |ext|
    path = File.join(dir, "bench.#{ext}")
    t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    Rperf.save(path, data)
    elapsed = Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0
    puts format("%-18s %10.3f %10.1fMB", ext, elapsed, File.size(path) / 1e6)
  end
end
