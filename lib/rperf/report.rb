# frozen_string_literal: true

module Rperf
  # Human-readable reports: the text format and the verbose/stat summaries on stderr.
  module Report
    module_function

    def text(data, top: TOP_N)
      Storage.native(data).encode(:text, { top: top }).force_encoding(Encoding::UTF_8)
    end

    def print_verbose(data, io: $stderr)
      count = data[:sampling_count] || 0
      total = data[:sampling_time_ns] || 0
      avg_us = count.positive? ? total / count / 1000.0 : 0.0
      io.puts "[Rperf] mode=#{data[:mode]} frequency=#{data[:frequency]}Hz"
      io.puts "[Rperf] sampling: #{count} calls, #{format('%.2f', total / 1e6)}ms total, #{format('%.1f', avg_us)}us/call avg"
      text(data).each_line { |line| io.puts "[Rperf] #{line}" }
    end
  end
end
