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

    # allocations: compare estimated objects allocated (profiles recorded with --alloc).
    def initialize(base, target, allocations: false)
      totals = allocations ? Result.method(:allocation_flat_and_cumulative) : Result.method(:flat_and_cumulative)
      @allocations = allocations
      @base = totals.(base)
      @target = totals.(target)
    end

    def rows
      keys = (@base[:cum].keys | @target[:cum].keys)
      keys.map do |key|
        Row.new(key[0], key[1], @base[:flat][key], @target[:flat][key], @base[:cum][key], @target[:cum][key])
      end.sort_by { |r| [-r.delta_flat.abs, -r.delta_cum.abs, r.label] }
    end

    def render(limit: 20)
      return render_allocations(limit) if @allocations

      ms = ->(ns) { format("%.1f", ns / 1e6) }
      signed = ->(ns) { format("%+.1f", ns / 1e6) }
      render_rows(limit, ms, signed, format("base total: %sms   target total: %sms   change: %sms",
                                            ms.(@base[:total_weight]), ms.(@target[:total_weight]),
                                            signed.(@target[:total_weight] - @base[:total_weight])), "ms")
    end

    private

    def render_allocations(limit)
      count = ->(n) { n.to_s }
      signed = ->(n) { format("%+d", n) }
      render_rows(limit, count, signed, format("base allocations: %d   target allocations: %d   change: %+d (estimated objects)",
                                               @base[:total_weight], @target[:total_weight],
                                               @target[:total_weight] - @base[:total_weight]), "obj")
    end

    def render_rows(limit, amount, signed, head, unit)
      out = [head, format("%12s %12s %12s %12s  %s", "flat +-#{unit}", "cum +-#{unit}", "base cum", "target cum", "function")]
      selected = limit ? rows.first(limit) : rows
      selected.each do |r|
        loc = r.path.empty? ? "" : " (#{r.path})"
        out << format("%12s %12s %12s %12s  %s%s", signed.(r.delta_flat), signed.(r.delta_cum), amount.(r.base_cum),
                      amount.(r.target_cum), r.label, loc)
      end
      out.join("\n")
    end
  end
end
