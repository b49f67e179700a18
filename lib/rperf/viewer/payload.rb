# frozen_string_literal: true


module Rperf
  class Viewer
    # One profile in the compact shape the viewer page reads (GET <path>/snapshots/<id>):
    #
    #   frames:     [[name, path], ...]                  unique frames (method level)
    #   frame_lines: [line, ...]                         per frame, its method's line: the page's
    #                                                   call trees and method table (page/page_views)
    #   frame_categories: [category index, ...]          per frame, into CATEGORIES (Native.frame_categories)
    #   categories: CATEGORIES                           the names, for the page's colours and legend
    #   thread_totals: [[thread_seq, total_ns, idle_ns, name], ...] per thread, idle_ns being its idle
    #               time as the model says it (Native::Profile#thread_totals, profile/idle_wait.hh:
    #               off the GVL in a known wait of a server or job runner); the Threads tab's idle
    #               share, and "hide idle threads" takes the threads whose time is all idle away
    #               name: its last Thread#name (profile/thread_names.hh), nil without one: the
    #               Threads tab, Timeline and thread menus spell it "thread 3 (name)"
    #               (another Ractor's thread: a fifth element, its Ractor's id, shown by the tab)
    #   nodes:      {parent: [...], frame: [...]}       a prefix tree of stacks, root side first;
    #                                                   parent -1 = a root frame
    #   samples:    [[node, weight_ns, thread_seq, label_set_id(, line node)], ...]   node = the leaf
    #   idle_samples: [index, ...]                      the samples rows the model says are idle
    #                                                   (Native::Profile#stack_tree): what "hide
    #                                                   idle threads" leaves out of the page's views
    #   label_sets: [{"key" => "value"}, ...]           Symbol and String keys both as strings
    #   timeline:   nil, or {samples: [[node, weight_ns, thread_seq, label_set_id, time_ns(, line node)], ...],
    #               idle: [index, ...], quantum_ns:, source_count:, bins:, idle_hidden_bins:}
    #                                                   from the raw samples (aggregate: false), in
    #                                                   time order, merged per time slot beyond
    #                                                   max_timeline (quantum_ns); idle: the idle
    #                                                   rows; bins: the Timeline tab's of every
    #                                                   sample (BINS of the profile's time, the
    #                                                   model's: the tab opens without a big
    #                                                   timeline's rows), idle_hidden_bins:
    #                                                   of the samples that are not idle (nil when
    #                                                   none is)
    #   line_tree:  nil, or {parent: [...], frame: [...], line: [...]} (a profile recorded with
    #               lines): each kept sample's stack at line level, a prefix tree of (frame, line)
    #               nodes; each time and timeline row ends with its leaf (-1: a folded row). The
    #               Source tab's time per line is the page model's over it (views/source_lines)
    #   pruned:     {samples:, weight_ns:}               the lightest stacks, folded into one
    #                                                   "[pruned]" frame beyond max_samples
    #   allocations: nil, or {interval:, classes: [name, ...], allocated:, retained: (nil: not measured),
    #               samples: [[node, objects, thread_seq, label_set_id, class, retained], ...],
    #               pruned: {samples:, objects:}}     from allocation_samples (allocations: N);
    #               node is the allocating stack's leaf, in the same tree as the time samples
    #
    # Shared prefixes are sent once, so the body grows with the unique frames, not with the
    # stack depth times the samples. The sizes are bounded by max_samples and max_timeline.
    # The tree and every row on it (samples, timeline, allocations) are the model's
    # (profile/stack_tree, Native::Profile#stack_tree): Ruby walks no stack. A Hash the model
    # refuses is no profile to show (Unavailable, with the model's reason).
    class Payload
      # The profile cannot be shown (a hand-built Hash Native::Profile refuses).
      class Unavailable < StandardError; end

      # What a frame is, for the page's colours (profile/frame_category.hh): the program's own
      # code, a gem's, Ruby's standard library, a C function, a VM state's frame, or rperf's own.
      CATEGORIES = Native::FRAME_CATEGORIES
      # The Timeline tab's bins (views/timeline_bins.hh): per thread, the ns each of BINS equal
      # slices of the profile spent running, GVL blocked, GVL wait and in GC, and each slice's
      # heaviest leaf methods. Under its filters and transforms the page bins the rows itself.
      BINS = 600

      def self.build(data, max_samples:, max_timeline:)
        new(max_samples, max_timeline).build(data)
      end

      def initialize(max_samples, max_timeline)
        @max_samples = max_samples
        @max_timeline = max_timeline
      end

      def build(data)
        @native = native_of(data)
        tree = @native.stack_tree(@max_samples, @max_timeline)
        {
          total_weight_ns: tree[:total_weight_ns],
          frames: tree[:frames],
          frame_lines: tree[:frame_lines],
          frame_categories: Native.frame_categories(tree[:frames]).map { |c| CATEGORIES.index(c) },
          categories: CATEGORIES,
          thread_totals: @native.thread_totals,
          nodes: { parent: tree[:parents], frame: tree[:node_frames] },
          samples: tree[:rows],
          idle_samples: tree[:idle_rows],
          label_sets: @native.label_sets.map { |set| Payload.string_labels(set) },
          pruned: tree[:pruned],
          timeline: timeline(tree[:timeline]),
          allocations: tree[:allocations] && { interval: @native.attribute(:allocation_interval), **tree[:allocations] },
          line_tree: tree[:line_tree],
        }
      end

      # Frame names, paths and labels are user data and may hold any bytes: the page gets valid
      # UTF-8, made so as the model makes it (util/utf8.hh: one
      # U+FFFD per invalid byte, where String#scrub alone gives one per invalid run), so the
      # names match as the model compares them (util/utf8.hh is the transforms' spelling too).
      def self.utf8(str)
        str = str.to_s
        return str if str.encoding == Encoding::UTF_8 && str.valid_encoding?

        str.dup.force_encoding(Encoding::UTF_8).scrub { |bytes| "\uFFFD" * bytes.bytesize }
      end

      # A label set as the page spells it: keys and values as their to_s, made valid UTF-8 (a key
      # spelled twice so, as :a and "a": its last value). The one spelling the page's filters and
      # model's label and tag filters match (profile/label_set_match.hh).
      def self.string_labels(set)
        return {} unless set.is_a?(Hash)

        set.to_h { |k, v| [utf8(k.to_s), utf8(v.to_s)] }
      end

      private

      # The model of the profile (a Hash built by hand converted once).
      def native_of(data)
        Native::Profile.of_view(data) || Storage.native(data)
      rescue TypeError, Rperf::Error => e
        raise Unavailable, "cannot show the profile: #{e.message}"
      end

      # The model's rows with the Timeline tab's bins of every sample, and of
      # those that are not idle when some are: the page draws them unless a filter asks for others.
      def timeline(rows)
        return nil unless rows

        rows.merge(bins: timeline_bins, idle_hidden_bins: rows[:idle].empty? ? nil : timeline_bins(idle: true))
      end

      def timeline_bins(idle: false)
        duration = @native.attribute(:duration_ns)
        @native.timeline_bins(BINS, duration.is_a?(Integer) ? duration : 0, idle ? { idle: true } : {})
      end
    end
  end
end
