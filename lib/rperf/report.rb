# frozen_string_literal: true

module Rperf
  # Human-readable reports: the text format and the verbose/stat summaries on stderr.
  module Report
    module_function

    def text(data, top: TOP_N)
      t = Result.flat_and_cumulative(data)
      total_ms = t[:total_weight] / 1e6
      samples = data[:sampling_count] || data[:aggregated_samples].size
      out = +"Total: #{format('%.1f', total_ms)}ms (#{data[:mode]})\n"
      out << "Samples: #{samples}, Frequency: #{data[:frequency]}Hz\n"
      %i[flat cum].each do |kind|
        out << "\n#{kind == :flat ? 'Flat' : 'Cumulative'}:\n"
        rows(t[kind], t[:total_weight], top).each { |line| out << "  #{line}\n" }
      end
      out
    end

    def rows(table, total_weight, top)
      table.sort_by { |key, w| [-w, key] }.first(top).map do |(label, path), weight|
        pct = total_weight.positive? ? weight * 100.0 / total_weight : 0.0
        loc = path.empty? ? "" : " (#{path})"
        format("%10.1fms %5.1f%%  %s%s", weight / 1e6, pct, label, loc)
      end
    end

    def print_verbose(data, io: $stderr)
      count = data[:sampling_count] || 0
      total = data[:sampling_time_ns] || 0
      avg_us = count.positive? ? total / count / 1000.0 : 0.0
      io.puts "[Rperf] mode=#{data[:mode]} frequency=#{data[:frequency]}Hz"
      io.puts "[Rperf] sampling: #{count} calls, #{format('%.2f', total / 1e6)}ms total, #{format('%.1f', avg_us)}us/call avg"
      text(data).each_line { |line| io.puts "[Rperf] #{line}" }
    end

    def print_stat(data, io: $stderr)
      io.puts
      io.puts " Performance stats (rperf, #{data[:mode]} mode):"
      io.puts text(data).gsub(/^/, "  ")
    end
  end
end
