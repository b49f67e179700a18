# frozen_string_literal: true

module PeerBench
  # Medians of a Runner's reports, as one Markdown table with its legend.
  class Table
    COLUMNS = [
      "profiler", "mode",
      "cold 1 kHz ns/sample", "cold 1 kHz YJIT", "hot 10 kHz ns/sample", "hot 10 kHz YJIT",
      "overhead 1 kHz", "overhead 10 kHz", "peak RSS MB", "samples cold / hot"
    ].freeze
    COST_EXPERIMENTS = %i[cold cold_yjit hot hot_yjit].freeze
    BASELINE = "unprofiled"

    def self.median(values)
      sorted = values.compact.sort
      return nil if sorted.empty?

      mid = sorted.size / 2
      sorted.size.odd? ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2.0
    end

    def self.thousands(number)
      return "–" if number.nil?

      digits = number.round.abs.to_s.reverse.scan(/\d{1,3}/).join(",").reverse
      number.round.negative? ? "-#{digits}" : digits
    end

    def initialize(runner, header: [])
      @runner = runner
      @header = header
    end

    def rows
      @runner.config.variants.map do |v|
        name, mode = v.baseline? ? [BASELINE, "–"] : [v.profiler, v.mode.to_s]
        [name, mode, *COST_EXPERIMENTS.map { |e| cost_cell(e, v) },
         overhead_cell(:cold, v), overhead_cell(:cold_10k, v), rss_cell(v), samples_cell(v)]
      end
    end

    # Lines before, the Markdown table of `columns` and `rows`, then the legend's lines.
    def self.markdown(before, columns, rows, legend)
      [*before, "| #{columns.join(" | ")} |", "|#{columns.map { "---" }.join("|")}|",
       *rows.map { |r| "| #{r.join(" | ")} |" }, *legend].join("\n")
    end

    def to_s = self.class.markdown(@header, COLUMNS, rows, legend)

    private

    def reports(exp, variant) = @runner.results.fetch(exp).fetch(variant.label)
    def baseline(exp) = @runner.results.fetch(exp).fetch(BASELINE)
    def med(reports, key) = self.class.median(reports.map { |r| r[key] })

    # "reported (derived)": the profiler's own sampling time per sample where it reports one;
    # in parentheses, the CPU time the workload's thread lost per sample.
    def cost_cell(exp, variant)
      return "–" if variant.baseline?

      runs = reports(exp, variant)
      reported = self.class.median(runs.map { |r| r["sampling_time_ns"] && r["sampling_time_ns"].fdiv([r["samples"], 1].max) })
      samples = med(runs, "samples")
      derived = (med(runs, "work_cpu_s") - med(baseline(exp), "work_cpu_s")) * 1e9 / samples if samples&.positive?
      "#{self.class.thousands(reported)} (#{self.class.thousands(derived)})"
    end

    def overhead_cell(exp, variant)
      base = med(baseline(exp), "whole_s")
      return "#{self.class.thousands(base * 1000)} ms" if variant.baseline?

      format("%+.1f%%", (med(reports(exp, variant), "whole_s") / base - 1) * 100)
    end

    def rss_cell(variant)
      mb = @runner.rss.fetch(variant.label)["peak_rss_kb"] / 1024.0
      return format("%.1f", mb) if variant.baseline?

      format("%.1f (%+.1f)", mb, mb - @runner.rss.fetch(BASELINE)["peak_rss_kb"] / 1024.0)
    end

    def samples_cell(variant)
      return "–" if variant.baseline?

      %i[cold hot].map { |e| self.class.thousands(med(reports(e, variant), "samples")) }.join(" / ")
    end

    def legend
      c = @runner.config
      counts = @runner.counts
      [
        "",
        "- ns/sample: `sampling_time_ns / sampling_count` as the profiler reports it (– where it reports none); " \
        "in parentheses, derived: (thread CPU time of the workload profiled − unprofiled) / samples, " \
        "which also counts signal handling and cache misses in the workload; within noise at 1 kHz.",
        "- cold: `fib(#{Workloads::FIB_N})` under a #{Workloads::CHAIN_DEPTH}-method chain (stacks 45–70 deep, " \
        "new at every sample), units: #{counts[:cold]} (#{counts[:cold_yjit]} under YJIT) ≈ #{c.seconds} s; " \
        "hot: a tight loop 3 frames deep, units: #{counts[:hot]} (#{counts[:hot_yjit]} under YJIT).",
        "- overhead: wall time from start to the returned result of the cold workload, vs unprofiled " \
        "(at 10 kHz: units: #{counts[:cold_10k]}).",
        "- peak RSS: VmHWM of a process that ran #{c.rss_seconds} s at #{RSS_FREQUENCY / 1000} kHz over " \
        "#{Workloads::DISTINCT_SIDE**2} distinct stacks and stopped (one run each; in parentheses, above unprofiled).",
        "- medians of #{c.runs} interleaved runs per cell, each in a fresh process; samples: medians, cold / hot.",
      ]
    end
  end
end

module PeerBench
  # The allocation rows (Runner#run_allocations): one per profiler setting, with its legend;
  # then each profiler's top allocation sites per N.
  class AllocationTable
    COLUMNS = [
      "profiler", "setting", "CPU overhead", "vs stackprof, paired", "sampled allocations", "CPU ns per allocation added",
      "allocations estimated / true (error)"
    ].freeze
    SITE_COLUMNS = ["N", "ours", "stackprof", "vernier", "same order"].freeze
    BASELINE = Table::BASELINE

    def initialize(runner)
      @runner = runner
    end

    def rows
      @runner.config.alloc_variants.map do |v|
        [v.baseline? ? BASELINE : v.profiler, v.setting, overhead_cell(v), paired_cell(v), sampled_cell(v), added_cell(v),
         estimate_cell(v)]
      end
    end

    # Per N, each profiler's 3 heaviest sites with their share of its sampled objects (the
    # median share over the runs), and whether the three rank them alike.
    def site_rows
      ALLOC_INTERVALS.map do |n|
        tops = %w[ours stackprof vernier].to_h do |profiler|
          variant = @runner.config.alloc_variants.find { |v| v.profiler == profiler && v.interval == n && !v.retained }
          [profiler, variant && median_top(reports(variant))]
        end
        orders = tops.values.compact.map { |top| top.map(&:first) }
        [n.to_s, *tops.values.map { |top| top ? top.map { |site, share| format("%s %.0f%%", site, share * 100) }.join(", ") : "–" },
         orders.uniq.size == 1 ? "yes" : "no"]
      end
    end

    def to_s
      [Table.markdown(["Allocation profiling on an allocation-heavy workload (interpreter):", ""], COLUMNS, rows, legend),
       Table.markdown(["", "Top allocation sites (share of each profiler's sampled objects, median of the runs; " \
                           "expected #{Workloads::ALLOC_SITES.zip([4, 2, 1]).map { |site, k| "#{site} #{(k * 100.0 / 7).round}%" }.join(", ")}):", ""],
                      SITE_COLUMNS, site_rows, [])].join("\n")
    end

    private

    def reports(variant) = @runner.alloc_results.fetch(variant.label)
    def baseline = @runner.alloc_results.fetch(BASELINE)
    def med(reports, key) = Table.median(reports.map { |r| r[key] })
    def true_allocations = med(baseline, "allocated")

    def median_top(runs)
      shares = Hash.new { |h, k| h[k] = [] }
      runs.each { |r| (r["top_sites"] || []).each { |site, share| shares[site] << share } }
      shares.transform_values { |v| Table.median(v + [0.0] * (runs.size - v.size)) }.max_by(3) { |_, share| share }
    end

    # Process CPU time (every thread: the profilers' own threads too) from start to the
    # returned result, against unprofiled.
    def overhead_cell(variant)
      base = med(baseline, "whole_cpu_s")
      return "#{Table.thousands(base * 1000)} ms" if variant.baseline?

      format("%+.1f%%", (med(reports(variant), "whole_cpu_s") / base - 1) * 100)
    end

    # Ours against stackprof's :object mode at the same N, run by run (the two ran minutes apart
    # at most, in the same round: this VM's speed drifts by 20% over minutes, which medians taken
    # apart carry and a ratio within a round cancels); the median of the rounds' ratios.
    def paired_cell(variant)
      peer = @runner.config.alloc_variants.find { |v| v.profiler == "stackprof" && v.interval == variant.interval }
      return "–" unless variant.profiler == "ours" && variant.interval && peer

      ratios = reports(variant).zip(reports(peer)).map { |ours, theirs| ours["whole_cpu_s"] / theirs["whole_cpu_s"] - 1 }
      format("%+.1f%%", Table.median(ratios) * 100)
    end

    def sampled_cell(variant)
      return "–" if variant.baseline? || variant.interval.nil?

      Table.thousands(med(reports(variant), "allocation_samples"))
    end

    # The process CPU time added, spread over the workload's allocations (unprofiled count).
    def added_cell(variant)
      return "–" if variant.baseline?

      format("%.1f", (med(reports(variant), "whole_cpu_s") - med(baseline, "whole_cpu_s")) * 1e9 / true_allocations)
    end

    # Ours only: the profile's estimate (sampled allocations x N, start to stop) against
    # GC.stat(:total_allocated_objects) over the workload in the same process; the error is the
    # median of the runs' own errors.
    def estimate_cell(variant)
      return "– / #{Table.thousands(true_allocations)}" if variant.baseline?
      return "–" unless variant.profiler == "ours" && variant.interval

      runs = reports(variant)
      error = Table.median(runs.map { |r| r["estimated_allocations"].fdiv(r["allocated"]) - 1 })
      format("%s / %s (%+.1f%%)", Table.thousands(med(runs, "estimated_allocations")),
             Table.thousands(med(runs, "allocated")), error * 100)
    end

    def spread
      ALLOC_INTERVALS.map { |n| format("%.1f%% at %d", Math.sqrt(n.fdiv(true_allocations)) * 100, n) }.join(", ")
    end

    def legend
      c = @runner.config
      [
        "",
        "- workload: #{Workloads::ALLOC_ITERATIONS} × (`\"item \#{i}\"`: 2 strings; 4 arrays; a 1-entry hash) per unit " \
        "from 3 methods #{Workloads::ALLOC_DEPTH} frames deep, one record in " \
        "#{Workloads::KEEP_EVERY} kept in a ring of #{Workloads::KEPT_SLOTS}; units: #{@runner.counts[:alloc]} " \
        "(#{Table.thousands(true_allocations)} allocations, GC.stat) ≈ #{c.seconds} s.",
        "- ours samples time besides (cpu, #{ALLOC_FREQUENCY / 1000} kHz), vernier too (wall, #{ALLOC_FREQUENCY / 1000} kHz, " \
        "its only mode); stackprof's :object mode samples allocations only. The time-only rows are the " \
        "time sampling's share; ours' \"(time 1 Hz)\" rows sample time once a second, stackprof's terms. Ours samples with random (geometric) gaps of mean N; with `retained: true` it also " \
        "follows the sampled objects' frees (a FREEOBJ hook: Ruby calls it for every freed object); stackprof's " \
        ":object mode and vernier's allocation_interval take every Nth allocation and do not track frees.",
        "- CPU overhead: process CPU time (all threads) from start to the returned result vs unprofiled; CPU ns " \
        "per allocation added: (profiled − unprofiled) CPU time / allocations.",
        "- sampled allocations: as each profiler reports them (ours: `allocation_sample_count`, stackprof: " \
        "`samples`, vernier: the threads' allocation samples); estimated: the sum of ours' `allocation_samples` " \
        "counts vs the objects the workload allocated in the same process (error: median of the runs' own; " \
        "its expected spread, sqrt(N / allocations): #{spread}).",
        "- medians of #{c.runs} interleaved runs per cell, each in a fresh process.",
      ]
    end
  end
end
