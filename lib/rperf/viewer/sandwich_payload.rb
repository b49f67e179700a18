# frozen_string_literal: true

require_relative "call_tree_payload"
require_relative "sample_filter"

module Rperf
  class Viewer
    # The sandwich of one method (the page's Sandwich tab): the samples the filters keep that
    # have the method on their stack, as two Rperf::CallTree (native, CallTreePayload's shape):
    #
    #   callers: rooted at the method, each child a caller of the one above it, up to the
    #            stack's root: who called it, and how much of its time each path holds
    #   callees: rooted at the method, its calls below it, as in the call tree
    #   total_ns: the method's time (its samples, each once: recursion counts once)
    #   each tree also has categories: [category, ...] per method (Payload.category)
    #
    # Each sample is cut at the method's outermost call, so a recursive method counts once, as
    # MethodTable's total. The callers tree has no VM-state leaves (their time is the method's).
    class SandwichPayload
      def self.build(data, method:, label: nil, thread: nil, range: nil, hide: nil, tags: nil, **limits)
        new(SampleFilter.new(data, label: label, thread: thread, range: range, hide: hide, tags: tags).data, method).build(**limits)
      end

      def initialize(data, method)
        @data = data
        @name, @path = method
      end

      def build(**limits)
        callers = []
        callees = []
        @data[:aggregated_samples].each do |stack, weight, seq, lsi|
          at = stack.rindex { |frame| match?(frame) } # leaf first: the call nearest the root
          next unless at

          callees << [stack[0..at], weight, seq, lsi]
          callers << [stack[at..].reverse, weight, seq, 0]
        end
        base = @data.except(:raw_samples, :allocation_samples, :raw_allocation_samples)
        {
          method: [@name, @path], total_ns: callees.sum { |s| s[1] },
          callers: with_categories(CallTreePayload.of(tree(base.merge(aggregated_samples: callers, label_sets: [{}])), **limits)),
          callees: with_categories(CallTreePayload.of(tree(base.merge(aggregated_samples: callees)), **limits)),
        }
      end

      private

      # Each method's category (Payload.category), for the page's colours.
      def with_categories(tree)
        tree.merge(categories: tree[:methods].map { |name, path| Payload.category(name, path) })
      end

      def match?(frame) = Payload.utf8(frame[1]) == @name && Payload.utf8(frame[0]) == @path

      def tree(data)
        CallTree.new(data)
      rescue TypeError, Rperf::Error => e
        raise SampleFilter::Unavailable, "cannot build the sandwich: #{e.message}"
      end
    end
  end
end
