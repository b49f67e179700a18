# frozen_string_literal: true

require_relative "call_tree_payload"
require_relative "sample_filter"

module Rperf
  class Viewer
    # The bottom-up (inverted) call tree of the page's Bottom-up tab: Rperf::CallTree (native)
    # of the samples the filters keep, each stack reversed, in CallTreePayload's shape. The
    # roots are the functions that were running (a root's total is its self time), each child a
    # caller of the one above it. A sample's VM state is not a frame here (it would end up
    # at the wrong end of the stack): its time stays with the function it was in.
    class InvertedTreePayload
      def self.build(data, label: nil, thread: nil, range: nil, hide: nil, tags: nil, **limits)
        of(SampleFilter.new(data, label: label, thread: thread, range: range, hide: hide, tags: tags).data, **limits)
      end

      def self.of(data, **limits)
        samples = data[:aggregated_samples].map { |stack, weight, seq| [stack.reverse, weight, seq, 0] }
        base = data.except(:raw_samples, :allocation_samples, :raw_allocation_samples)
        CallTreePayload.of(tree(base.merge(aggregated_samples: samples, label_sets: [{}])), **limits)
      end

      def self.tree(data)
        CallTree.new(data)
      rescue TypeError, Rperf::Error => e
        raise SampleFilter::Unavailable, "cannot build the bottom-up tree: #{e.message}"
      end
      private_class_method :tree
    end
  end
end
