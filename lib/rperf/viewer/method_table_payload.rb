# frozen_string_literal: true

require_relative "method_list"
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
      # they go), in MethodTable's order (MethodTable#heaviest_entries).
      def build(min_percent, max_methods)
        total = @table.total_ns
        min_ns = (total * min_percent / 100.0).ceil
        sent, method_count = @table.heaviest_entries(min_ns, max_methods)
        arcs = @table.tree.native.heaviest_arcs(sent.map(&:method_id), @max_arcs)
        methods = MethodList.new
        rows = sent.zip(arcs).map do |e, (callers, callees, caller_count, callee_count)|
          [methods.index(e.method), e.self_ns, e.total_ns, e.recursive? ? 1 : 0,
           arcs(callers, min_ns, methods), arcs(callees, min_ns, methods), caller_count, callee_count]
        end
        { total_ns: total, min_percent: min_percent, max_methods: max_methods, max_arcs: @max_arcs,
          method_count: method_count, methods: methods.to_a, entries: rows }
      end

      private

      # [method_id, ns, ...] heaviest first (CallTree#heaviest_arcs).
      def arcs(pairs, min_ns, methods)
        out = []
        (0...pairs.size).step(2) do |i|
          break if pairs[i + 1] < min_ns

          out << [methods.index(@table.tree.method_ref(pairs[i])), pairs[i + 1]]
        end
        out
      end
    end
  end
end
