# frozen_string_literal: true

# Allocation profiling benchmark (not a test): the overhead of allocations: N on an
# allocation-heavy workload (small strings, arrays and hashes at a depth of 30 frames), next to
# time sampling alone, and stackprof's :object mode (one sample every N allocations, its own
# run) when the gem is installed. Interleaved runs, median of 7 (RPERF_BENCH_RUNS), CPU time of
# the process.
# Run: bundle exec ruby -Ilib bench/allocation_bench.rb
require "rperf"
begin
  require "stackprof"
rescue LoadError
  nil
end

def at_depth(depth, &blk) = depth <= 1 ? blk.call : at_depth(depth - 1, &blk)

def workload
  kept = []
  at_depth(30) do
    600_000.times do |i|
      s = "item #{i}"
      a = [s, i]
      h = { key: a }
      kept << h if (i % 100).zero?
    end
  end
  kept.size
end

def cpu_now = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)

allocations_per_run = begin
  before = GC.stat(:total_allocated_objects)
  workload
  GC.stat(:total_allocated_objects) - before
end
configs = {
  "off" => nil,
  "time only (cpu, 1 kHz)" => {},
  "allocations: 4096" => { allocations: 4096 },
  "allocations: 512" => { allocations: 512 },
  "allocations: 64" => { allocations: 64 },
  "allocations: 4096, retained" => { allocations: 4096, retained: true },
  "allocations: 64, retained" => { allocations: 64, retained: true },
}
if defined?(StackProf)
  [4096, 64].each { |n| configs["stackprof :object, #{n}"] = { stackprof: n } }
end
2.times { workload }
times = configs.keys.to_h { |k| [k, []] }
samples = {}
Integer(ENV.fetch("RPERF_BENCH_RUNS", "7")).times do
  configs.each do |name, opts|
    t0 = cpu_now
    if opts&.key?(:stackprof)
      data = StackProf.run(mode: :object, interval: opts[:stackprof], raw: false) { workload }
      samples[name] = data[:samples]
    elsif opts
      data = Rperf.start(**opts) { workload }
      samples[name] = data[:allocation_sample_count]
    else
      workload
    end
    times[name] << cpu_now - t0
  end
end

median = ->(list) { list.sort[list.size / 2] }
base = median.(times["off"])
puts "Allocation-heavy workload: #{allocations_per_run} allocations per run (Ruby #{RUBY_VERSION}, " \
     "#{defined?(RubyVM::YJIT) && RubyVM::YJIT.enabled? ? 'YJIT' : 'interpreter'})"
puts format("%-30s %10s %10s %12s %14s", "configuration", "ms", "overhead", "alloc samples", "ns/allocation")
configs.each_key do |name|
  ms = median.(times[name]) * 1000
  extra_ns = (median.(times[name]) - base) * 1e9 / allocations_per_run
  puts format("%-30s %10.1f %9.1f%% %12s %14.1f", name, ms, (median.(times[name]) / base - 1) * 100,
              samples[name] || "-", extra_ns)
end
