# frozen_string_literal: true

module Rperf
  # Compares two profiles by function: flat (self) and cumulative (total) weight in each and the
  # change, ranked by the model (views/totals_diff.hh, Native::Profile#diff_totals: the largest
  # absolute change of flat time, then of cumulative time, then label and path; the Viewer's
  # Diff table ranks the same way).
  class Diff
    Row = Struct.new(:label, :path, :base_flat, :target_flat, :base_cum, :target_cum) do
      def delta_flat = target_flat - base_flat
      def delta_cum = target_cum - base_cum
    end

    # allocations: compare estimated objects allocated (profiles recorded with --alloc).
    def initialize(base, target, allocations: false)
      @allocations = allocations
      @base = Storage.native(base)
      @target = Storage.native(target)
      @totals = allocations ? [@base.allocation_count, @target.allocation_count] : [@base.total_weight, @target.total_weight]
    end

    def rows
      @rows ||= @base.diff_totals(@target, @allocations).map { |row| Row.new(*row) }
    end

    def render(limit: 20)
      return render_allocations(limit) if @allocations

      ms = ->(ns) { format("%.1f", ns / 1e6) }
      signed = ->(ns) { format("%+.1f", ns / 1e6) }
      render_rows(limit, ms, signed, format("base total: %sms   target total: %sms   change: %sms",
                                            ms.(@totals[0]), ms.(@totals[1]), signed.(@totals[1] - @totals[0])), "ms")
    end

    private

    def render_allocations(limit)
      count = ->(n) { n.to_s }
      signed = ->(n) { format("%+d", n) }
      render_rows(limit, count, signed, format("base allocations: %d   target allocations: %d   change: %+d (estimated objects)",
                                               @totals[0], @totals[1], @totals[1] - @totals[0]), "obj")
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
