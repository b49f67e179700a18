# frozen_string_literal: true

# Encoder benchmark (not a test): a synthetic profile of 100,000 unique stacks of depth 40
# over 20,000 distinct frames, written in every format through Rperf.save (3 runs each:
# median and slowest), with the peak memory the write added. The last row writes json.gz
# with zlib instead of ISA-L, for comparison.
require "rperf"
require "tmpdir"
require "etc"

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

def rss_kb(field) = File.read("/proc/self/status")[/^#{field}:\s+(\d+)/, 1].to_i

# Resets the process's peak RSS (Linux >= 4.0) so VmHWM measures one write.
def reset_peak_rss = File.write("/proc/self/clear_refs", "5")

# Runs the write in a forked child, so that no earlier write's freed memory hides this one's.
def measure
  reader, writer = IO.pipe
  pid = fork do
    reader.close
    GC.start
    reset_peak_rss
    base = rss_kb("VmRSS")
    t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    yield
    writer.write(Marshal.dump([Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0, (rss_kb("VmHWM") - base) / 1024.0]))
    exit!(0)
  end
  writer.close
  result = Marshal.load(reader.read)
  Process.wait(pid)
  result
end

puts "Encode benchmark: #{samples.size} stacks x depth 40, #{frames.size} distinct frames; " \
     "gzip by #{Rperf::Native::DEFLATE_BACKEND}, #{Etc.nprocessors} CPUs"
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
      measure { write.call(path) }
    end
    times = runs.map(&:first).sort
    puts format("%-22s %9.3f %9.3f %8.1fMB %10.1fMB", name, times[1], times[2], File.size(path) / 1e6, runs.map(&:last).max)
  end
end
