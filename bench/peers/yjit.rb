# frozen_string_literal: true

require_relative "table"

module PeerBench
  # The YJIT table (issue 26): under `--yjit --yjit-stats=quiet`, the share of instructions YJIT
  # executed while profiled (the rest ran in the interpreter: an interrupt makes YJIT code exit
  # to it); in a second process under plain `--yjit` (the stats counters slow YJIT code, not the
  # interpreter, which skews a CPU comparison), the thread CPU time of the work against
  # unprofiled; three workloads at 1 kHz and 10 kHz, wall mode. Ours on both capture paths;
  # interleaved, medians.
  module Yjit
    Variant = Struct.new(:profiler, :capture) do
      def label
        return "unprofiled" if profiler == "none"
        return "ours capture: :#{capture}" if profiler == "ours"

        { "rperf" => "rperf 0.11.1" }.fetch(profiler, profiler)
      end

      def baseline? = profiler == "none"
      def mode = :wall # vernier's only mode; the same for all
    end

    VARIANTS = [
      Variant.new("ours", :signal), Variant.new("ours", :postponed), Variant.new("rperf"),
      Variant.new("stackprof"), Variant.new("vernier"), Variant.new("none"),
    ].freeze
    WORKLOADS = {
      "loop" => "a `while` loop method called 300× per round",
      "block" => "block-heavy (`times`, `map`, Hash/String)",
      "fib" => "recursive `fib`",
    }.freeze
    FREQUENCIES = [1000, 10_000].freeze

    class Runner
      attr_reader :results, :cpu_results, :counts

      # base: the time table's Runner (its child processes, peers and config).
      def initialize(base, log: $stderr)
        @base = base
        @log = log
        @results = {} # [workload, frequency] => { label => [report, ...] } (with --yjit-stats)
        @cpu_results = {} # the same without --yjit-stats
        @counts = {}
      end

      def variants = VARIANTS.select { |v| v.baseline? || @base.config.profilers.include?(v.profiler) }

      def run
        WORKLOADS.each_key do |unit|
          count = @base.calibrate_unit(unit, yjit: true)
          @counts[unit] = count
          FREQUENCIES.each do |hz|
            per = @results[[unit, hz]] = Hash.new { |h, k| h[k] = [] }
            cpu = @cpu_results[[unit, hz]] = Hash.new { |h, k| h[k] = [] }
            @base.config.runs.times do |i|
              @log.print "\ryjit #{unit} #{hz} Hz: run #{i + 1}/#{@base.config.runs}   "
              variants.each do |v|
                spec = { task: "yjit", profiler: v.profiler, mode: v.mode, frequency: hz, unit: unit, count: count,
                         capture: v.capture }
                per[v.label] << @base.run_child_for(v.profiler, v.label, spec, yjit: true, ruby_args: ["--yjit-stats=quiet"])
                cpu[v.label] << @base.run_child_for(v.profiler, v.label, spec, yjit: true)
              end
            end
          end
        end
        @log.puts
        self
      end
    end

    class Table
      def initialize(runner) = @runner = runner

      def columns
        ["profiler", *FREQUENCIES.flat_map { |hz| WORKLOADS.keys.map { |w| "#{w} #{hz / 1000} kHz" } }]
      end

      def cell(unit, hz, variant)
        reports = @runner.results.fetch([unit, hz]).fetch(variant.label)
        share = PeerBench::Table.median(reports.map { |r| r["yjit_share"] })
        text = share ? format("%.1f%%", 100 * share) : "–"
        return text if variant.baseline?

        per = @runner.cpu_results.fetch([unit, hz])
        base = PeerBench::Table.median(per.fetch("unprofiled").map { |r| r["work_cpu_s"] })
        runs = per.fetch(variant.label)
        cpu = PeerBench::Table.median(runs.map { |r| r["work_cpu_s"] })
        "#{text} (#{format("%+.0f%%", 100 * (cpu / base - 1))}#{per_sample(runs, base)})"
      end

      # The samples a profiler took decide its cost as much as its rate asked for: a timer thread
      # that sleeps a period after each sample (vernier) takes fewer, the fewer the busier the
      # machine. So: samples per CPU-second of the work and the extra CPU per sample, medians.
      def per_sample(runs, base)
        rate = PeerBench::Table.median(runs.map { |r| r["samples"].to_f / r["work_cpu_s"] if r["samples"] })
        cost = PeerBench::Table.median(runs.map { |r| (r["work_cpu_s"] - base) / r["samples"] if r["samples"].to_i.positive? })
        return "" unless rate && cost

        format("; %d/s, %.1f µs", rate.round, cost * 1e6)
      end

      def to_s
        rows = @runner.variants.map do |v|
          [v.label, *FREQUENCIES.flat_map { |hz| WORKLOADS.keys.map { |w| cell(w, hz, v) } }]
        end
        legend = ["", "Share of instructions executed by YJIT while profiled (`--yjit-stats`: yjit_insns_count over " \
                      "it plus vm_insns_count, between start and stop), in parentheses the thread CPU time of the work " \
                      "against unprofiled, from separate processes without --yjit-stats, then the samples taken per " \
                      "CPU-second of the work and the extra CPU per sample; wall mode, medians of #{@runner.instance_variable_get(:@base).config.runs} " \
                      "interleaved fresh processes.",
                  *WORKLOADS.map { |k, d| "#{k}: #{d}." }]
        PeerBench::Table.markdown(["YJIT: share of instructions in YJIT (CPU overhead)", ""], columns, rows, legend)
      end
    end
  end
end
