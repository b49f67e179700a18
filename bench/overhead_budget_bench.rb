# frozen_string_literal: true

# Overhead budget benchmark (not a test): asked for 10 kHz with overhead_target: 0.01 on a
# CPU-bound workload, the process's CPU time against an unprofiled run (interleaved runs,
# medians), beside a fixed 10 kHz without a budget. For each profiled run: the rate the
# timer ran at (the profile's sampling_hz), the samples taken against that rate times the
# time profiled, and the overhead the profiler measured of itself. Run: rake bench
# (BUDGET_ROUNDS=N for more rounds).
require "etc"
require "rperf"

def workload
  a = 0
  12_000_000.times { |i| a += (i * i) % 7 }
  a
end

def cpu_now = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)

RUNS = {
  "unprofiled" => nil,
  "10 kHz, budget 1%" => { mode: :wall, frequency: 10_000, overhead_target: 0.01 },
  "10 kHz, no budget" => { mode: :wall, frequency: 10_000 },
}.freeze
rounds = Integer(ENV.fetch("BUDGET_ROUNDS", "9"))

2.times { workload }
results = RUNS.keys.to_h { |name| [name, []] }
rounds.times do
  RUNS.each do |name, options|
    GC.start
    t0 = cpu_now
    if options
      Rperf.start(**options)
      workload
      profile = Rperf.stop_without_result
    else
      workload
    end
    cpu = cpu_now - t0
    row = { cpu: cpu }
    if profile
      seconds = profile.attribute(:duration_ns) / 1e9
      row.merge!(hz: profile.sampling_hz, samples: profile.attribute(:sampling_count),
                 expected: profile.sampling_hz * seconds, measured: profile.overhead_ratio)
    end
    results[name] << row
  end
end

median = ->(xs) { xs.sort[xs.size / 2] }
base = median.(results["unprofiled"].map { |r| r[:cpu] })
puts "Overhead budget: a CPU-bound loop, process CPU time per run (#{rounds} interleaved rounds, medians; " \
     "#{Etc.nprocessors} CPUs, load average #{File.exist?('/proc/loadavg') ? File.read('/proc/loadavg').split.first : '?'})"
puts format("%-20s %10s %10s %14s %16s %14s", "run", "CPU ms", "overhead", "effective Hz", "samples/(Hz*s)", "self-measured")
results.each do |name, rows|
  cpu = median.(rows.map { |r| r[:cpu] })
  cells = [name, cpu * 1000, (cpu / base - 1) * 100]
  if rows.first.key?(:hz)
    match = median.(rows.map { |r| r[:samples].fdiv([r[:expected], 1e-9].max) })
    measured = rows.map { |r| r[:measured] }.compact
    puts format("%-20s %10.1f %+9.2f%% %14.1f %16.3f %14s", *cells, median.(rows.map { |r| r[:hz] }), match,
                measured.empty? ? "-" : format("%.2f%%", median.(measured) * 100))
  else
    puts format("%-20s %10.1f %+9.2f%% %14s %16s %14s", *cells, "-", "-", "-")
  end
end
