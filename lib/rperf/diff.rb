# frozen_string_literal: true

module Rperf
  # Compares two profiles by function: flat and cumulative weight in each and the change,
  # sorted by the largest absolute change of the function's own (flat) time, then of its
  # cumulative time. Callers of a slowed function change cumulatively as much as it does, so
  # ranking by cumulative change first would put <main> on top of every diff.
  class Diff
    Row = Struct.new(:label, :path, :base_flat, :target_flat, :base_cum, :target_cum) do
      def delta_flat = target_flat - base_flat
      def delta_cum = target_cum - base_cum
    end

    def initialize(base, target)
      @base = Result.flat_and_cumulative(base)
      @target = Result.flat_and_cumulative(target)
    end

    def rows
      keys = (@base[:cum].keys | @target[:cum].keys)
      keys.map do |key|
        Row.new(key[0], key[1], @base[:flat][key], @target[:flat][key], @base[:cum][key], @target[:cum][key])
      end.sort_by { |r| [-r.delta_flat.abs, -r.delta_cum.abs, r.label] }
    end

    def render(limit: 20)
      ms = ->(ns) { format("%.1f", ns / 1e6) }
      signed = ->(ns) { format("%+.1f", ns / 1e6) }
      out = [format("base total: %sms   target total: %sms   change: %sms",
                    ms.(@base[:total_weight]), ms.(@target[:total_weight]), signed.(@target[:total_weight] - @base[:total_weight])),
             format("%12s %12s %12s %12s  %s", "flat +-ms", "cum +-ms", "base cum", "target cum", "function")]
      selected = limit ? rows.first(limit) : rows
      selected.each do |r|
        loc = r.path.empty? ? "" : " (#{r.path})"
        out << format("%12s %12s %12s %12s  %s%s", signed.(r.delta_flat), signed.(r.delta_cum), ms.(r.base_cum),
                      ms.(r.target_cum), r.label, loc)
      end
      out.join("\n")
    end
  end
end
