# frozen_string_literal: true

# Overhead budget benchmark (not a test): asked for 10 kHz with overhead_target: 0.01 on a
# CPU-bound workload, the process's CPU time against an unprofiled run, beside a fixed 10 kHz
# without a budget. Runs are interleaved (the order reversed every other round) and each
# profiled run is compared with the unprofiled run of its own round: on a shared machine the
# same unprofiled run varies by +-20% from minute to minute, and a round's runs see the same
# load. The table has the overhead of the median CPU times, and the median of those per-round
# overheads with their quartiles. For each profiled run: the rate the
# timer ran at (the profile's sampling_hz), the samples taken against that rate times the
# time profiled, and the overhead the profiler measured of itself. Run: rake bench
# (BUDGET_ROUNDS=N for more rounds; BUDGET_LOOP=N iterations per run, default 9M ≈ 1 s: a
# continuous session runs for hours, and a shorter run weighs its start, stop and the rate's
# first windows more).
require "etc"
require "rperf"

LOOP = Integer(ENV.fetch("BUDGET_LOOP", "9000000"))

def workload
  a = 0
  LOOP.times { |i| a += (i * i) % 7 }
  a
end

def cpu_now = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)

RUNS = {
  "unprofiled" => nil,
  # The floor: a session that hardly samples (its start, stop and hooks, and the noise).
  "1 Hz, no budget" => { mode: :wall, frequency: 1 },
  "10 kHz, budget 1%" => { mode: :wall, frequency: 10_000, overhead_target: 0.01 },
  "10 kHz, no budget" => { mode: :wall, frequency: 10_000 },
}.freeze
rounds = Integer(ENV.fetch("BUDGET_ROUNDS", "25"))

2.times { workload }
results = RUNS.keys.to_h { |name| [name, []] }
rounds.times do |round|
  (round.even? ? RUNS.to_a : RUNS.to_a.reverse).each do |name, options|
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
quartiles = ->(xs) { [xs.sort[xs.size / 4], xs.sort[xs.size * 3 / 4]] }
base = results["unprofiled"].map { |r| r[:cpu] }
puts "Overhead budget: a CPU-bound loop, process CPU time per run (#{rounds} interleaved rounds, medians; " \
     "#{Etc.nprocessors} CPUs, load average #{File.exist?('/proc/loadavg') ? File.read('/proc/loadavg').split.first : '?'})"
puts format("%-20s %10s %10s %10s %16s %14s %16s %14s", "run", "CPU ms", "overhead", "paired", "quartiles", "effective Hz",
            "samples/(Hz*s)", "self-measured")
base_median = median.(base)
results.each do |name, rows|
  cpu = median.(rows.map { |r| r[:cpu] })
  overheads = rows.zip(base).map { |r, b| (r[:cpu] / b - 1) * 100 }
  cells = [name, cpu * 1000, (cpu / base_median - 1) * 100, median.(overheads), format("%+.1f..%+.1f%%", *quartiles.(overheads))]
  if rows.first.key?(:hz)
    match = median.(rows.map { |r| r[:samples].fdiv([r[:expected], 1e-9].max) })
    measured = rows.map { |r| r[:measured] }.compact
    puts format("%-20s %10.1f %+9.2f%% %+9.2f%% %16s %14.1f %16.3f %14s", *cells, median.(rows.map { |r| r[:hz] }), match,
                measured.empty? ? "-" : format("%.2f%%", median.(measured) * 100))
  else
    puts format("%-20s %10.1f %+9.2f%% %+9.2f%% %16s %14s %16s %14s", *cells, "-", "-", "-")
  end
end
