# frozen_string_literal: true

# What the rperf first on the load path makes of profile files (e.g. written by the other gem):
#   ruby -I <lib of one gem> test/compat/support/load_probe.rb FILE...
# For each file: Rperf.load's keys, label-set key types, sample sizes and warnings on stderr,
# and Rperf.read_meta's result, as JSON on stdout.
require "stringio"
require_relative "shape"
require "rperf"

module CompatProbe
  module Loads
    module_function

    def with_stderr
      saved = $stderr
      $stderr = StringIO.new
      value = begin
        yield
      rescue StandardError => e
        "#{e.class}: #{e.message.lines.first&.strip}"
      end
      [value, $stderr.string]
    ensure
      $stderr = saved
    end

    def facts(path)
      data, warnings = with_stderr { Rperf.load(path) }
      meta, = with_stderr { Rperf.read_meta(path) }
      return { "load" => data, "stderr" => warnings } if data.is_a?(String)

      {
        "keys" => data.keys.map(&:inspect),
        "mode" => data[:mode].inspect,
        "label_sets" => data[:label_sets] && Shape.each_of(data[:label_sets]),
        "sample_sizes" => data[:aggregated_samples].map(&:size).uniq,
        "frame" => Shape.of(data[:aggregated_samples].first&.first&.first),
        "stderr" => warnings,
        "read_meta" => meta.is_a?(Hash) ? Shape.of(meta) : meta.inspect,
      }
    end
  end
end

CompatProbe::Shape.emit(ARGV.to_h { |path| [File.basename(path), CompatProbe::Loads.facts(path)] })
