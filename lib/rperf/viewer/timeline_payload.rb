# frozen_string_literal: true

require_relative "sample_filter"

module Rperf
  class Viewer
    # The Timeline tab's bins (Native::Profile#timeline_bins: the model's query,
    # profile/timeline_bins.hh): per thread, the ns each of BINS equal slices of the profile spent
    # running, GVL blocked, GVL wait and in GC, and each slice's heaviest leaf methods (the hover),
    # so the page draws bars and never bins the timeline's rows (500,000 of them took seconds).
    #
    #   end_ns:, bins:, bin_ns:, kept_ns:, threads: [[thread_seq, [running, blocked, wait, gc]], ...]
    #   (each an Array of ns per bin, or nil), leaf_names: [...], top: [[leaf name index, ...], ...]
    #
    # The label, tag, hidden-thread and idle filters apply; the thread filter and the time range do not:
    # every thread is a row of its own and the range is drawn over the whole profile.
    class TimelinePayload
      BINS = 600

      def self.build(data, label: nil, hide: nil, tags: nil, idle: false, **_filters)
        SampleFilter.new(data, label: label, hide: hide, tags: tags, idle: idle).timeline_bins(BINS)
      end
    end
  end
end
