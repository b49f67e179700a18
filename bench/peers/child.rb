# frozen_string_literal: true

# One measurement in a fresh process: `ruby [--yjit] -I<profiler lib> child.rb '<json spec>'`.
# Prints one JSON line on stdout. Spec keys:
#   task:      "calibrate" (seconds per unit, unprofiled, measured for `seconds`), "fixed" (a
#              fixed number of units), or "rss" (distinct stacks for `seconds`, then the peak RSS)
#   profiler:  ours | rperf | stackprof | vernier | none;  mode: cpu | wall;  frequency: Hz
#   unit:      cold | hot | alloc (calibrate, fixed);  count: units (fixed);  whole_cycles: (rss)
#   allocations: nil, or also sample one allocation in N (fixed);  retained: ours' retained: true
require "json"
require_relative "workloads"
require_relative "profilers"

module PeerBench
  module Child
    module_function

    def monotonic = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    def thread_cpu = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID)
    def process_cpu = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)

    def peak_rss_kb
      File.foreach("/proc/self/status") { |l| return l.split[1].to_i if l.start_with?("VmHWM:") }
      nil
    end

    def run(spec)
      case spec.fetch("task")
      when "calibrate" then calibrate(spec.fetch("unit"), spec.fetch("seconds", 0.3))
      when "fixed" then fixed(spec)
      when "rss" then rss(spec)
      when "yjit" then yjit(spec)
      else raise ArgumentError, "unknown task #{spec["task"].inspect}"
      end
    end

    def calibrate(unit, seconds)
      method = Workloads::UNITS.fetch(unit)
      2.times { Workloads.public_send(method) }
      units = 0
      t0 = monotonic
      while monotonic - t0 < seconds
        Workloads.public_send(method)
        units += 1
      end
      { seconds_per_unit: (monotonic - t0) / units }
    end

    # The same work for every profiler: warm-up (YJIT compiles here), then start, the units, stop.
    def fixed(spec)
      profiler, version = load_profiler(spec)
      method = Workloads::UNITS.fetch(spec.fetch("unit"))
      count = spec.fetch("count")
      [count / 10, 1].max.times { Workloads.public_send(method) }
      GC.start
      whole0 = monotonic
      process0 = process_cpu
      profiler.start(spec.fetch("mode").to_sym, spec.fetch("frequency"), spec["allocations"], spec["capture"]&.to_sym,
                     retained: spec["retained"] || false)
      work0 = monotonic
      cpu0 = thread_cpu
      objects0 = GC.stat(:total_allocated_objects)
      count.times { Workloads.public_send(method) }
      objects1 = GC.stat(:total_allocated_objects)
      cpu1 = thread_cpu
      work1 = monotonic
      report = profiler.stop
      process1 = process_cpu
      whole1 = monotonic
      # The allocation sites are read from the result after the measured interval.
      sites = profiler.top_sites if spec["allocations"]
      report.merge(version: version, feature: @feature, whole_s: whole1 - whole0, work_s: work1 - work0, work_cpu_s: cpu1 - cpu0,
                   whole_cpu_s: process1 - process0, allocated: objects1 - objects0, top_sites: sites)
    end

    # As `fixed`, and the share of instructions YJIT ran between start and stop (when run with
    # --yjit-stats; without it, only the CPU time: the stats counters slow YJIT code down).
    def yjit(spec)
      profiler, version = load_profiler(spec)
      method = Workloads::UNITS.fetch(spec.fetch("unit"))
      count = spec.fetch("count")
      [count / 5, 3].max.times { Workloads.public_send(method) }
      GC.start
      profiler.start(spec.fetch("mode").to_sym, spec.fetch("frequency"), nil, spec["capture"]&.to_sym)
      stats = RubyVM::YJIT.stats_enabled?
      s0 = RubyVM::YJIT.runtime_stats if stats
      cpu0 = thread_cpu
      count.times { Workloads.public_send(method) }
      cpu1 = thread_cpu
      s1 = RubyVM::YJIT.runtime_stats if stats
      report = profiler.stop.merge(version: version, feature: @feature, work_cpu_s: cpu1 - cpu0)
      return report unless stats

      yjit = s1[:yjit_insns_count] - s0[:yjit_insns_count]
      vm = s1[:vm_insns_count] - s0[:vm_insns_count]
      report.merge(yjit_share: yjit.fdiv(yjit + vm), side_exits: s1[:side_exit_count] - s0[:side_exit_count])
    end

    def rss(spec)
      profiler, version = load_profiler(spec)
      GC.start
      profiler.start(spec.fetch("mode").to_sym, spec.fetch("frequency"))
      deadline = monotonic + spec.fetch("seconds")
      visits = Workloads.distinct_stacks_until(deadline, whole_cycles: spec.fetch("whole_cycles", true))
      report = profiler.stop
      report.merge(version: version, feature: @feature, visits: visits, peak_rss_kb: peak_rss_kb)
    end

    def load_profiler(spec)
      profiler = Profilers.fetch(spec.fetch("profiler"))
      version = profiler.load
      # Which file `require "rperf"` found: the parent checks it is the one it asked for.
      @feature = $LOADED_FEATURES.find { |f| f.end_with?("/rperf.rb") }
      [profiler, version]
    end
  end
end

puts JSON.generate(PeerBench::Child.run(JSON.parse(ARGV.fetch(0))))
