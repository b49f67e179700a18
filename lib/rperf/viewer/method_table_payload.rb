# frozen_string_literal: true

require_relative "sample_filter"

module Rperf
  class Viewer
    # The methods tab's data: Rperf::MethodTable (the native method view, the numbers of
    # `rperf report --graph`) of the samples the viewer's filters keep (SampleFilter):
    #
    #   total_ns:     the total of the samples kept (MethodTable#total_ns)
    #   methods:      [[name, path, line], ...]
    #   entries:      [[method, self_ns, total_ns, recursive (0/1), callers, callees,
    #                 caller_count, callee_count], ...] in MethodTable's order (heaviest total
    #                 first). callers/callees: [[method, ns], ...], heaviest first, ns being the
    #                 time of the samples in which that call happened (Arc#total_ns; its share
    #                 is ns / the entry's total_ns). The counts are all the entry's arcs.
    #                 GVL/GC time is in entries of its own ([GVL blocked], [GC marking], ...).
    #   min_percent:  methods and arcs lighter than this share of the total are not sent
    #   max_methods:  nor more than this many heaviest by total, and as many by self
    #   max_arcs:     nor more than this many callers (and callees) per method
    #   method_count: the methods of the whole table
    class MethodTablePayload
      MIN_PERCENT = 0.1
      MAX_METHODS = 2_000
      MAX_ARCS = 20

      def self.build(data, label: nil, thread: nil, range: nil, hide: nil, tags: nil, idle: false, **limits)
        of(SampleFilter.new(data, label: label, thread: thread, range: range, hide: hide, tags: tags, idle: idle).call_tree.method_table, **limits)
      end

      # The payload of a table already built (Payload sends it with the call tree).
      def self.of(table, min_percent: MIN_PERCENT, max_methods: MAX_METHODS, max_arcs: MAX_ARCS)
        new(table, max_arcs).build(min_percent, max_methods)
      end

      def initialize(table, max_arcs)
        @table = table
        @max_arcs = max_arcs
      end

      # The methods above min_percent of the total, at most the max_methods heaviest by total
      # and the max_methods heaviest by self (so the page's both orders are right as far as
      # they go), in MethodTable's order, with their heaviest arcs: picked and named by the
      # model (MethodTable::view).
      def build(min_percent, max_methods)
        total = @table.total_ns
        min_ns = (total * min_percent / 100.0).ceil
        view = @table.tree.native.method_table_view(min_ns, max_methods, @max_arcs)
        { total_ns: total, min_percent: min_percent, max_methods: max_methods, max_arcs: @max_arcs,
          method_count: view[:method_count], methods: view[:methods], entries: view[:entries] }
      end
    end
  end
end
