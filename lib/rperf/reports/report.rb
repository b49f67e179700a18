# frozen_string_literal: true

module Rperf
  # Human-readable reports: the text format and the verbose/stat summaries on stderr.
  module Report
    module_function

    def text(data, top: Table::ROWS_LIMIT) = Text.encode(data, top_n: top)

    # Allocation profiling's report: estimated objects allocated and retained, top sites
    # (self and total) and classes. A pprof file that does not name its interval (Rperf.load
    # guessed it from the counts) says so.
    def allocations(data, top: 20)
      guessed = (data.is_a?(Hash) || data.is_a?(Native::Profile)) && Storage.value(data, :allocation_interval_guessed) ? true : false
      Storage.native(data).encode(:allocations, { top: top, interval_guessed: guessed }).force_encoding(Encoding::UTF_8)
    end

    # `verbose: true` / `rperf record -v`, in rperf 0.11's lines: sampling statistics, then the
    # top functions by self (flat) and total (cum) time. `data`: a result Hash or a
    # Native::Profile (a session's end builds no Hash for it).
    def print_verbose(data, io: $stderr)
      count = Storage.value(data, :sampling_count) || 0
      total = Storage.value(data, :sampling_time_ns) || 0
      avg_us = count.positive? ? total / count / 1000.0 : 0.0
      io.puts "[Rperf] mode=#{Storage.value(data, :mode)} frequency=#{Storage.value(data, :frequency)}Hz"
      io.puts "[Rperf] sampling: #{count} calls, #{format('%.2f', total / 1e6)}ms total, #{format('%.1f', avg_us)}us/call avg"
      io.puts "[Rperf] samples recorded: #{count}"
      print_top(data, io: io)
    end

    def print_top(data, io: $stderr)
      return unless Storage.samples?(data)

      totals = Result.flat_and_cumulative(data)
      { "flat" => totals[:flat], "cum" => totals[:cum] }.each do |kind, table|
        top = table.sort_by { |_, w| -w }.first(TOP_N)
        io.puts "[Rperf] top #{top.size} by #{kind}:"
        top.each do |(label, path), weight|
          pct = totals[:total_weight].positive? ? weight * 100.0 / totals[:total_weight] : 0.0
          io.puts format("[Rperf]   %8.1fms %5.1f%%  %s%s", weight / 1e6, pct, label, path.empty? ? "" : " (#{path})")
        end
      end
    end
  end
end
