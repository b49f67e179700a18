# frozen_string_literal: true

require_relative "call_tree_payload"
require_relative "sample_filter"

module Rperf
  class Viewer
    # The bottom-up (inverted) call tree of the page's Bottom-up tab: Rperf::CallTree built
    # natively with inverted: true over the samples the filters keep, in CallTreePayload's shape.
    # The roots are the functions that were running (a root's total is its self time), each
    # child a caller of the one above it.
    class InvertedTreePayload
      def self.build(data, label: nil, thread: nil, range: nil, hide: nil, tags: nil, idle: false, **limits)
        of(SampleFilter.new(data, label: label, thread: thread, range: range, hide: hide, tags: tags, idle: idle), **limits)
      end

      # `filter`: a SampleFilter (Payload's, of every sample).
      def self.of(filter, **limits)
        CallTreePayload.of(filter.call_tree(inverted: true), **limits)
      end
    end
  end
end
