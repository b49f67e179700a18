# frozen_string_literal: true

# Sampling engine benchmark (not a test): per-sample cost by stack depth, and the overhead of
# profiling a CPU-bound workload at 1 kHz (interleaved runs, median). Run: rake bench
require "rperf"

def at_depth(depth, &blk) = depth <= 1 ? blk.call : at_depth(depth - 1, &blk)

def spin(seconds)
  t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  x = 0
  x += 1 while Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0 < seconds
  x
end

puts "Per-sample cost (sampling_time_ns / sampling_count), 10 kHz for 0.4 s per cell"
puts format("%-8s %14s %14s", "depth", "cpu mode ns", "wall mode ns")
[1, 10, 100, 500].each do |depth|
  cells = %i[cpu wall].map do |mode|
    data = Rperf.start(mode: mode, frequency: 10_000) { at_depth(depth) { spin(0.4) } }
    data[:sampling_time_ns] / [data[:sampling_count], 1].max
  end
  puts format("%-8d %14d %14d", depth, *cells)
end

def workload
  a = 0
  4_000_000.times { |i| a += (i * i) % 7 }
  h = {}
  500_000.times { |i| h[i] = i.to_s }
  a + h.size
end

puts "\nOverhead at 1 kHz on a CPU-bound workload (interleaved runs, median of 9)"
clock = -> { Process.clock_gettime(Process::CLOCK_MONOTONIC) }
3.times { workload }
results = { off: [], cpu: [], wall: [] }
9.times do
  results.each_key do |kind|
    t0 = clock.()
    if kind == :off
      workload
    else
      Rperf.start(mode: kind, frequency: 1000) { workload }
    end
    results[kind] << clock.() - t0
  end
end
median = ->(xs) { xs.sort[xs.size / 2] }
base = median.(results[:off])
puts format("%-10s %10s %10s", "run", "median ms", "overhead")
results.each do |kind, times|
  m = median.(times)
  puts format("%-10s %10.2f %9.2f%%", kind, m * 1000, (m / base - 1) * 100)
end
