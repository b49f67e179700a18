# frozen_string_literal: true

# The benchmarks' synthetic profile: 100,000 unique stacks of depth 40 over 20,000 distinct
# frames, three label sets, as Rperf.stop returns it.
module SyntheticProfile
  STACKS = 100_000
  DEPTH = 40
  FRAMES = 20_000

  def self.build
    rng = Random.new(42)
    frames = Array.new(FRAMES) { |i| ["app/models/file#{i % 700}.rb", "Module#{i % 300}::Klass#{i % 97}#method_#{i}", rng.rand(1..900)].freeze }
    samples = Array.new(STACKS) do |i|
      stack = Array.new(DEPTH) { |d| frames[(i * 7919 + d * 104_729 + rng.rand(50)) % frames.size] }
      [stack, rng.rand(1..5_000_000), 1 + i % 8, i % 3]
    end
    {
      mode: :cpu, frequency: 1000, sampling_count: STACKS, duration_ns: 60_000_000_000,
      start_time_ns: Time.now.to_i * 1_000_000_000, aggregated_samples: samples,
      label_sets: [{}, { endpoint: "/users" }, { "%GVL" => "blocked" }],
    }
  end

  def self.rss_kb(field) = File.read("/proc/self/status")[/^#{field}:\s+(\d+)/, 1].to_i

  # Runs the block in a forked child (so no earlier run's freed memory hides this one's):
  # [seconds, CPU seconds (all threads), peak RSS added in MB]. Resetting the peak needs
  # Linux >= 4.0.
  def self.measure
    reader, writer = IO.pipe
    pid = fork do
      reader.close
      GC.start
      File.write("/proc/self/clear_refs", "5")
      base = rss_kb("VmRSS")
      t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      cpu0 = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)
      yield
      writer.write(Marshal.dump([Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0,
                                 Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID) - cpu0,
                                 (rss_kb("VmHWM") - base) / 1024.0]))
      exit!(0)
    end
    writer.close
    result = Marshal.load(reader.read)
    Process.wait(pid)
    result
  end
end
