# frozen_string_literal: true

module Rperf
  # Process-level facts added to a result (GC and memory counters), and per-function totals.
  module Result
    module_function

    def gc_delta(base, now)
      return nil unless base

      {
        count: now[:count] - base[:count],
        minor_count: now[:minor_gc_count] - base[:minor_gc_count],
        major_count: now[:major_gc_count] - base[:major_gc_count],
        time_ms: (now[:time] || 0) - (base[:time] || 0),
        allocated_objects: now[:total_allocated_objects] - base[:total_allocated_objects],
        freed_objects: now[:total_freed_objects] - base[:total_freed_objects],
      }
    end

    # Read natively: File's reads release the GVL, and a busy thread then keeps it for a time slice.
    def maxrss_mb
      kb = Native.peak_rss_kb
      kb && (kb / 1024.0).round
    end

    def total_weight(data) = Storage.native(data).total_weight

    # Self (leaf) and total weight per [label, path], from the native model: a function counts
    # once per sample in its total however often it recurses.
    def flat_and_cumulative(data)
      profile = Storage.native(data)
      flat_and_cumulative_of(profile.function_totals, profile.total_weight)
    end

    # The same by estimated objects allocated (a profile recorded with allocations: N).
    def allocation_flat_and_cumulative(data)
      profile = Storage.native(data)
      flat_and_cumulative_of(profile.allocation_totals, profile.allocation_count)
    end

    # rows: [label, path, self, total] per function.
    def flat_and_cumulative_of(rows, total)
      flat = Hash.new(0)
      cum = Hash.new(0)
      rows.each do |label, path, self_value, total_value|
        flat[[label, path]] = self_value if self_value.positive?
        cum[[label, path]] = total_value
      end
      { flat: flat, cum: cum, total_weight: total }
    end
  end
end
