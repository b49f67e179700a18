# frozen_string_literal: true

module Rperf
  # Flat tables for scripts and AI tools (`rperf report|diff --format table|table-json`), in
  # rperf 0.11's shapes: one row per method name (paths merged), percentages with 2 decimals,
  # milliseconds with 1, a trailing summary. The per-function totals come from the native model.
  module Table
    ROWS_LIMIT = 50
    SUMMARY_KEYS = %i[total_ms cpu_ms allocated_objects gc_count_minor gc_count_major].freeze
    DIFF_SUMMARY_KEYS = %i[total_ms allocated_objects gc_count_minor gc_count_major].freeze

    module_function

    # [{method:, self_pct:, total_pct:, self_ms:}], by self time; what is beyond `limit` becomes
    # one "(other)" row (no total: cumulative times overlap and cannot be added).
    def report_rows(data, limit: ROWS_LIMIT)
      flat, cum, total = flat_cum_by_name(data)
      ranked = flat.sort_by { |name, w| [-w, name] }
      rows = ranked.first(limit).map do |name, w|
        { method: name, self_pct: pct(w, total), total_pct: pct(cum[name], total), self_ms: ms(w) }
      end
      rest = ranked.drop(limit).sum { |_, w| w }
      rows << { method: "(other)", self_pct: pct(rest, total), total_pct: nil, self_ms: ms(rest) } if ranked.size > limit
      rows
    end

    def report_summary(data)
      summary = Storage.value(data, :summary) || Meta.build_summary(data)
      SUMMARY_KEYS.each_with_object({}) { |k, out| out[k] = summary[k] unless summary[k].nil? }
    end

    def report_tsv(data, limit: ROWS_LIMIT)
      lines = ["method\tself_pct\ttotal_pct\tself_ms"]
      report_rows(data, limit: limit).each { |r| lines << tsv_row(r.values) }
      lines.join("\n") << "\n" << summary_line(report_summary(data)) << thread_lines(data)
    end

    def report_json(data, limit: ROWS_LIMIT)
      require "json"
      summary = report_summary(data)
      threads = thread_rows(data)
      summary[:threads] = threads if threads
      JSON.generate(report_rows(data, limit: limit) + [{ summary: summary }])
    end

    # [{thread_seq:, name:, total_ms:}] per thread when a thread of the profile has a name
    # (Thread#name, the model's last one; nil without one), else nil: a profile of unnamed
    # threads prints as rperf 0.11 printed it.
    def thread_rows(data)
      totals = Storage.native(data).thread_totals # [[thread_seq, total_ns, idle_ns, name], ...]
      return nil if totals.none? { |t| t[3] }

      totals.map { |seq, total_ns, _, name| { thread_seq: seq, name: name, total_ms: ms(total_ns) } }
    end

    # "# thread\t<seq>\t<total_ms>\t<name>" per thread (after "# summary"), when any is named.
    def thread_lines(data)
      (thread_rows(data) || []).map { |t| tsv_row(["# thread", t[:thread_seq], t[:total_ms], t[:name]]) + "\n" }.join
    end

    # [{method:, self_pct_base:, self_pct_head:, delta_pt:}], largest change first.
    def diff_rows(base, head, limit: ROWS_LIMIT)
      base_flat, _, base_total = flat_cum_by_name(base)
      head_flat, _, head_total = flat_cum_by_name(head)
      rows = (base_flat.keys | head_flat.keys).map do |name|
        b = pct(base_flat[name], base_total)
        h = pct(head_flat[name], head_total)
        { method: name, self_pct_base: b, self_pct_head: h, delta_pt: (h - b).round(2) }
      end
      rows.sort_by { |r| [-r[:delta_pt].abs, r[:method]] }.first(limit)
    end

    def diff_summary(base, head)
      b = report_summary(base)
      h = report_summary(head)
      DIFF_SUMMARY_KEYS.each_with_object({}) do |k, out|
        out[:"#{k}_base"] = b[k] if b[k]
        out[:"#{k}_head"] = h[k] if h[k]
        out[:"#{k}_delta"] = (h[k] - b[k]).round(1) if b[k] && h[k]
      end
    end

    def diff_tsv(base, head, limit: ROWS_LIMIT)
      lines = ["method\tself_pct_base\tself_pct_head\tdelta_pt"]
      diff_rows(base, head, limit: limit).each { |r| lines << tsv_row(r.values) }
      lines.join("\n") << "\n" << summary_line(diff_summary(base, head))
    end

    def diff_json(base, head, limit: ROWS_LIMIT)
      require "json"
      JSON.generate(diff_rows(base, head, limit: limit) + [{ summary: diff_summary(base, head) }])
    end

    # Self and total weight per method name (the model's: a sample counts once in a name's
    # total, also when methods of that name in two files are both on its stack), and the
    # profile's total weight.
    def flat_cum_by_name(data)
      profile = Storage.native(data)
      flat = Hash.new(0)
      cum = Hash.new(0)
      profile.function_totals(true).each do |label, _path, self_ns, total_ns|
        flat[label] = self_ns if self_ns.positive?
        cum[label] = total_ns
      end
      [flat, cum, profile.total_weight]
    end

    def pct(weight, total) = total.positive? ? (weight * 100.0 / total).round(2) : 0.0
    def ms(ns) = (ns / 1e6).round(1)

    def summary_line(summary)
      (["# summary"] + summary.map { |k, v| "#{k}=#{v}" }).join("\t") << "\n"
    end

    # TSV cannot escape: a tab or line break in a method name would shift columns.
    def tsv_row(values)
      values.map { |v| v.to_s.tr("\t\n\r", "   ") }.join("\t")
    end
  end
end
