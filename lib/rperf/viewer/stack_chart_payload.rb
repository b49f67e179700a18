# frozen_string_literal: true

require_relative "payload"
require_relative "sample_filter"

module Rperf
  class Viewer
    # The stack chart of one thread (the page's Stack chart tab), merged by the model
    # (Native::Profile#stack_charts, profile/stack_chart.hh) so the page only draws it (issue 27:
    # merging 125,000 rows in the page took seconds). From the profile's raw samples
    # (aggregate: false) in time order, each a column of its stack over [time - weight, time]: a
    # frame that stays at its depth across samples with no gap longer than a sample is one cell.
    # A sample's VM state (GVL blocked or wait, GC) is a leaf cell.
    #
    #   thread:, total_ns:, samples: (rows merged), end_ns: (the last sample's time of any
    #   thread, or the duration: every thread on the same axis)
    #   frames: [[name, path, category], ...]   the cells' frames (method level, Native.frame_categories)
    #   cells, in the order they open, one entry per cell in each column:
    #     dx:  the cell's start minus the previous cell's (the first: minus 0)
    #     w:   its width (ns), from its first sample's start to its last's end
    #     d:   its depth (0: the root frame); its parent is the last cell before it one above
    #     f:   its frame, or -1 - VM state (1 GVL blocked, 2 GVL wait, 3 GC: VM_STATES)
    #     gap: w minus its samples' weight (time it stayed open across short gaps)
    class StackChartPayload
      VM_STATES = %w[running blocked wait gc].freeze

      # The cells of one thread (the label, tag and idle filters apply: an idle sample left out
      # is a gap; time ranges and hidden threads are the page's zoom and thread list).
      def self.build(data, thread: nil, label: nil, tags: nil, idle: false, **_filters)
        raise SampleFilter::BadFilter, "the stack chart needs thread=" if thread.nil?

        unless raw?(data)
          raise SampleFilter::Unavailable, "the stack chart needs raw samples (a profile recorded with aggregate: false)"
        end

        charts = SampleFilter.new(data, label: label, thread: thread, tags: tags, idle: idle).stack_charts
        cells = charts[:threads].find { |seq, _| seq == thread }&.last
        payload(thread, cells, charts[:end_ns])
      end

      # {thread_seq => cells} of every thread, no filter (a file's page holds these), or with
      # idle: without the idle samples, of the threads that have some and other samples (a
      # file's page holds these too, for "hide idle threads"); none for a Hash the model refuses.
      def self.threads(data, idle: false)
        return {} unless raw?(data)

        charts = SampleFilter.new(data, idle: idle).stack_charts
        charts[:threads].to_h { |seq, cells| [seq, payload(seq, cells, charts[:end_ns])] }
      rescue SampleFilter::Unavailable
        {}
      end

      def self.raw?(data)
        data.is_a?(Native::Profile) ? data.raw? : data[:raw_samples].is_a?(Array)
      end

      # The model's cells of a thread (nil: none kept) in the page's shape, its frames with their
      # categories.
      def self.payload(thread, cells, end_ns)
        cells ||= { total_ns: 0, samples: 0, frames: [], dx: [], w: [], d: [], f: [], gap: [] }
        { thread: thread, total_ns: cells[:total_ns], samples: cells[:samples], end_ns: end_ns,
          frames: cells[:frames].zip(Native.frame_categories(cells[:frames])).map { |(name, path), category| [name, path, category] },
          dx: cells[:dx], w: cells[:w], d: cells[:d], f: cells[:f], gap: cells[:gap] }
      end
      private_class_method :raw?, :payload
    end
  end
end
