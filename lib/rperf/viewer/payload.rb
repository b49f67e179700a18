# frozen_string_literal: true

require "rbconfig"
require "set"

module Rperf
  class Viewer
    # One profile in the compact shape the viewer page reads (GET <path>/snapshots/<id>):
    #
    #   frames:     [[name, path], ...]                  unique frames (method level)
    #   frame_categories: [category index, ...]          per frame, into CATEGORIES (Native.frame_categories)
    #   categories: CATEGORIES                           the names, for the page's colours and legend
    #   thread_totals: [[thread_seq, total_ns, idle_ns], ...] per thread, idle_ns being its idle
    #               time as the model says it (Native::Profile#thread_totals, profile/idle_wait.hh:
    #               off the GVL in a known wait of a server or job runner); the Threads tab's idle
    #               share, and "hide idle threads" takes the threads whose time is all idle away
    #   nodes:      {parent: [...], frame: [...]}       a prefix tree of stacks, root side first;
    #                                                   parent -1 = a root frame
    #   samples:    [[node, weight_ns, thread_seq, label_set_id], ...]   node = the leaf
    #   idle_samples: [index, ...]                      the samples rows the model says are idle
    #                                                   (Native::Profile#idle_rows): what "hide
    #                                                   idle threads" leaves out of the page's views
    #   label_sets: [{"key" => "value"}, ...]           Symbol and String keys both as strings
    #   timeline:   nil, or {samples: [[node, weight_ns, thread_seq, label_set_id, time_ns], ...],
    #               idle: [index, ...], quantum_ns:, source_count:, bins:, idle_hidden_bins:}
    #                                                   from raw_samples (aggregate: false), whose
    #                                                   entries end with the time; idle: the idle
    #                                                   rows; bins: the Timeline tab's of every
    #                                                   sample (TimelinePayload), idle_hidden_bins:
    #                                                   of the samples that are not idle (nil when
    #                                                   none is)
    #   pruned:     {samples:, weight_ns:}               the lightest stacks, folded into one
    #                                                   "[pruned]" frame beyond max_samples
    #   call_tree:  Rperf::CallTree of every sample (CallTreePayload); the page asks the server
    #               for the tree of its current filters. nil when the profile cannot be made a
    #               call tree (a hand-built Hash), with call_tree_error: why; the other views work
    #   method_table: Rperf::MethodTable of every sample (MethodTablePayload), the same way:
    #               the page asks for its filters' table; nil with the call tree
    #   inverted_tree: the bottom-up tree of every sample (InvertedTreePayload), the same way
    #   trees_apart: true instead of the three trees when they are served apart (build's trees:)
    #   allocations: nil, or {interval:, classes: [name, ...], allocated:, retained:,
    #               samples: [[node, objects, thread_seq, label_set_id, class, retained], ...],
    #               pruned: {samples:, objects:}}     from allocation_samples (allocations: N);
    #               node is the allocating stack's leaf, in the same tree as the time samples
    #
    # Shared prefixes are sent once, so the body grows with the unique frames, not with the
    # stack depth times the samples. The sizes are bounded by max_samples and max_timeline.
    class Payload
      PRUNED_FRAME = ["[pruned]", "<rperf>"].freeze
      # A sample with an empty stack (a thread sampled before or after running any Ruby code,
      # e.g. around `rperf record`'s program) gets this root frame: every sample is a node of
      # the tree, so the views' totals add up to the profile's.
      NO_FRAMES = ["(no Ruby frames)", ""].freeze
      # What a frame is, for the page's colours (profile/frame_category.hh): the program's own
      # code, a gem's, Ruby's standard library, a C function, a VM state's frame, or rperf's own.
      CATEGORIES = Native::FRAME_CATEGORIES

      # trees: false leaves the three trees out (trees_apart: true): the served Viewer builds each
      # when its tab asks (GET <path>/snapshots/<id>/call_tree etc.), so opening a snapshot does
      # not pay for tabs nobody opens (100k-stack profile: about two thirds of the payload's CPU).
      def self.build(data, max_samples:, max_timeline:, trees: true)
        new(max_samples, max_timeline, trees).build(data)
      end

      def initialize(max_samples, max_timeline, trees = true)
        @max_samples = max_samples
        @max_timeline = max_timeline
        @trees = trees
        @frames = []
        @frame_index = {}                             # [name, path] => index
        @frame_of_object = {}.compare_by_identity     # profiles share their frame Arrays
        @node_index = {}                              # node_key(parent, frame) => index
        @parents = []
        @node_frames = []
      end

      def build(data)
        @native = native_of(data)
        @idle = @native&.idle_rows || { aggregated: [], raw: nil }
        # The model's idle rows are those of its own view: a Hash built by hand that has some
        # becomes that view (one that has none is read as it is).
        idle = !@idle[:aggregated].empty? || !Array(@idle[:raw]).empty?
        data = @native.to_h if idle && !Native::Profile.of_view(data)
        rows = sample_rows(data)
        {
          total_weight_ns: rows[:total_weight_ns],
          frames: @frames,
          frame_categories: Native.frame_categories(@frames).map { |c| CATEGORIES.index(c) },
          categories: CATEGORIES,
          thread_totals: @native ? @native.thread_totals : rows[:thread_totals],
          nodes: { parent: @parents, frame: @node_frames },
          samples: rows[:samples],
          idle_samples: rows[:idle],
          label_sets: (data[:label_sets] || [{}]).map { |set| string_labels(set) },
          pruned: rows[:pruned],
          timeline: timeline(data),
          **(@trees ? tree_views(data) : { trees_apart: true }),
          # After the timeline: it takes a stack missing from the tree for a pruned one.
          allocations: allocations(data),
        }
      end

      # Frame names, paths and labels are user data and may hold any bytes: the page gets valid
      # UTF-8 (CallTreePayload's names too), made so as the model makes it (util/utf8.hh: one
      # U+FFFD per invalid byte, where String#scrub alone gives one per invalid run), so the
      # names the page sends back (transforms) match the model's.
      def self.utf8(str)
        str = str.to_s
        return str if str.encoding == Encoding::UTF_8 && str.valid_encoding?

        str.dup.force_encoding(Encoding::UTF_8).scrub { |bytes| "\uFFFD" * bytes.bytesize }
      end

      private

      # The model of the profile, converted once for the trees and the timeline's bins (a Hash
      # built by hand: 500,000 rows take a while); nil when it refuses the Hash.
      def native_of(data)
        Native::Profile.of_view(data) || Storage.native(data)
      rescue TypeError, Rperf::Error
        nil
      end

      # One native tree for both tabs: the method table is built from its method paths.
      def tree_views(data)
        filter = SampleFilter.new(@native || data)
        tree = filter.call_tree
        { call_tree: CallTreePayload.of(tree), method_table: MethodTablePayload.of(tree.method_table),
          inverted_tree: InvertedTreePayload.of(filter) }
      rescue SampleFilter::Unavailable => e
        { call_tree: nil, method_table: nil, inverted_tree: nil, call_tree_error: e.message }
      end

      # {samples: [[node, weight, thread_seq, label_set_id], ...], idle: [row index, ...], pruned:
      # {samples:, weight_ns:}, total_weight_ns:, thread_totals:}: a profile's own Hash view has
      # them from the model (profile/stack_tree: its prefix tree, the kept rows, the pruned ones
      # folded, idle as it says); a Hash the model refuses is interned here (nothing idle).
      def sample_rows(data)
        profile = Native::Profile.of_view(data)
        return ruby_sample_rows(data[:aggregated_samples] || []) unless profile

        tree = profile.stack_tree(@max_samples)
        seed(tree)
        { samples: tree[:rows], idle: tree[:idle_rows], pruned: tree[:pruned], total_weight_ns: tree[:total_weight_ns] }
      end

      def ruby_sample_rows(samples)
        kept, pruned = split_by_weight(samples)
        body = kept.map { |stack, weight, seq, lsi| [node_for(stack), weight, seq, lsi] }
        merged = Hash.new(0)
        pruned.each { |_, weight, seq, lsi| merged[[seq, lsi]] += weight }
        merged.each { |(seq, lsi), weight| body << [pruned_node, weight, seq, lsi] }
        per = Hash.new { |h, seq| h[seq] = [seq, 0, 0] }
        samples.each { |_, weight, seq| per[seq][1] += weight }
        { samples: body, idle: [], pruned: { samples: pruned.size, weight_ns: pruned.sum { |s| s[1] } },
          total_weight_ns: samples.sum { |s| s[1] }, thread_totals: per.values.sort_by(&:first) }
      end

      # The native tree as this builder's own: the timeline and allocations may add to it.
      def seed(tree)
        @frames = tree[:frames] # valid UTF-8 already, each once: indexed when first needed
        @frame_index = nil
        @parents = tree[:parents]
        @node_frames = tree[:node_frames]
        @node_index = nil # made when first needed (node_index)
        @pruned_node = tree[:pruned_node]
        @no_frames_node = tree[:no_frames_node]
        @raw_nodes = tree[:raw_nodes] # the timeline's nodes, by raw sample
      end

      def node_index
        @node_index ||= @parents.each_index.to_h { |i| [node_key(@parents[i], @node_frames[i]), i] }
      end

      def split_by_weight(samples)
        return [samples, []] if samples.size <= @max_samples

        # Heaviest first, equal weights in their order (as profile/stack_tree sorts them).
        sorted = samples.each_with_index.sort_by { |s, i| [-s[1], i] }.map!(&:first)
        [sorted.first(@max_samples), sorted.drop(@max_samples)]
      end

      def pruned_node
        @pruned_node ||= intern_node(-1, intern_name(*PRUNED_FRAME))
      end

      # Frames come leaf first; the tree is walked from the root.
      def node_for(stack)
        return no_frames_node if stack.empty?

        parent = -1
        stack.reverse_each { |frame| parent = intern_node(parent, intern_frame(frame)) }
        parent
      end

      def no_frames_node
        @no_frames_node ||= intern_node(-1, intern_name(*NO_FRAMES))
      end

      # The node of a stack already in the tree, or nil; adds nothing.
      def find_node(stack)
        return @no_frames_node if stack.empty?

        parent = -1
        stack.reverse_each do |frame|
          index = @frame_of_object[frame] || frame_index[[utf8(frame[1]), utf8(frame[0])]]
          parent = index && node_index[node_key(parent, index)]
          return nil unless parent
        end
        parent
      end

      # Method level: the frames of one method at several lines are one frame here.
      def intern_frame(frame)
        @frame_of_object[frame] ||= intern_name(frame[1], frame[0])
      end

      def frame_index
        @frame_index ||= @frames.each_with_index.to_h { |frame, i| [frame, i] }
      end

      # Frames by their text as the page gets it (valid UTF-8), as the model's tree names them.
      def intern_name(name, path)
        key = [utf8(name), utf8(path)]
        frame_index[key] ||= (@frames << key).size - 1
      end

      # Integer keys hash much faster than [parent, frame] Arrays.
      def node_key(parent, frame) = ((parent + 1) << 32) | frame

      def intern_node(parent, frame)
        node_index[node_key(parent, frame)] ||= begin
          @parents << parent
          @node_frames << frame
          @parents.size - 1
        end
      end

      # Allocation rows as time samples: the heaviest max_samples stacks, the rest folded into
      # the [pruned] node per thread, labels and class, so totals and filters still add up.
      def allocations(data)
        rows = data[:allocation_samples]
        return nil unless rows.is_a?(Array) && !rows.empty?

        classes = []
        class_index = {}
        klass = ->(name) { class_index[name] ||= (classes << utf8(name)).size - 1 }
        kept, pruned = split_by_weight(rows)
        body = kept.map { |stack, count, seq, lsi, name, retained| [node_for(stack), count, seq, lsi, klass.(name.to_s), retained.to_i] }
        merged = {}
        pruned.each do |_, count, seq, lsi, name, retained|
          row = (merged[[seq, lsi, name.to_s]] ||= [pruned_node, 0, seq, lsi, klass.(name.to_s), 0])
          row[1] += count
          row[5] += retained.to_i
        end
        body.concat(merged.values)
        { interval: data[:allocation_interval], classes: classes, samples: body,
          allocated: rows.sum { |r| r[1] }, retained: rows.sum { |r| r[5].to_i },
          pruned: { samples: pruned.size, objects: pruned.sum { |r| r[1] } } }
      end

      def timeline(data)
        raw = data[:raw_samples]
        return nil unless raw.is_a?(Array)

        # [frames, weight, thread_seq, label_set_id, ..., time_ns]: the time comes last.
        nodes = @raw_nodes if @raw_nodes&.size == raw.size
        with_state = vm_state_sets(data[:label_sets] || [{}])
        # An idle row has a 6th element, true, until the rows are in order.
        idle = @idle[:raw] || []
        rows = raw.each_with_index.map do |sample, i|
          stack, weight, seq, lsi = sample
          state = StackChartPayload.recorded_state(sample)
          [nodes ? nodes[i] : raw_node(stack), weight, seq, state ? with_state.(lsi, sample[4].to_i) : lsi, sample.last.to_i]
        end
        idle.each { |i| rows[i] << true }
        rows, quantum = coarsen(rows)
        rows.sort_by! { |r| r[4] }
        idle_rows = idle.empty? ? [] : rows.each_index.select { |i| rows[i].size > 5 }
        idle_rows.each { |i| rows[i].pop }
        { samples: rows, idle: idle_rows, quantum_ns: quantum, source_count: raw.size, bins: timeline_bins,
          idle_hidden_bins: idle.empty? ? nil : timeline_bins(idle: true) }
      end

      # The Timeline tab's bins of every sample (TimelinePayload), or of those that are not idle:
      # the page draws them unless a filter asks for others. nil for a Hash the model refuses
      # (the page bins the rows then).
      def timeline_bins(idle: false)
        return nil unless @native

        SampleFilter.new(@native, idle: idle).timeline_bins(TimelinePayload::BINS)
      rescue SampleFilter::Unavailable
        nil
      end

      # A recorded raw sample's label set is the user's, its VM state apart; the page reads the
      # state from the label set, as the aggregated samples carry it: (user set, state) -> the id
      # of that set with the state's label, when the profile has it (else the user's set).
      def vm_state_sets(sets)
        index = nil
        known = {}
        lambda do |lsi, state|
          known[[lsi, state]] ||= begin
            index ||= sets.each_with_index.to_h { |set, i| [set.is_a?(Hash) ? set.to_h { |k, v| [k.to_s, v.to_s] } : {}, i] }
            key, value = Rperf::VM_STATE_LABELS[state]
            user = sets[lsi.to_i]
            user = user.is_a?(Hash) ? user.to_h { |k, v| [k.to_s, v.to_s] } : {}
            key ? index.fetch(user.merge(key => value), lsi) : lsi
          end
        end
      end

      # Raw stacks are those of the aggregated view: one that is not in the tree was pruned.
      # A profile's raw samples share their stack Arrays (one per distinct stack): each is
      # looked up once (500,000 rows of depth 16: 26 s -> a few, issue 27).
      def raw_node(stack)
        (@raw_node_of ||= {}.compare_by_identity)[stack] ||= find_node(stack) || @pruned_node || node_for(stack)
      end

      # Merges samples of the same stack, thread, labels and idleness that fall in the same time
      # slot, doubling the slot until the rows fit: the timeline stays readable and bounded.
      def coarsen(rows)
        quantum = 0
        while rows.size > @max_timeline
          quantum = quantum.zero? ? 1_000_000 : quantum * 2
          merged = {}
          rows.each do |node, weight, seq, lsi, time, idle|
            slot = time - (time % quantum)
            row = (merged[[node, seq, lsi, idle, slot]] ||= idle ? [node, 0, seq, lsi, time, true] : [node, 0, seq, lsi, time])
            row[1] += weight
            # A row ends at its time and covers its weight before it: a merged row ends where
            # its last sample did (the slot's start put it up to a slot early).
            row[4] = time if time > row[4]
          end
          rows = merged.values
        end
        [rows, quantum]
      end

      def string_labels(set)
        return {} unless set.is_a?(Hash)

        set.to_h { |k, v| [utf8(k.to_s), utf8(v.to_s)] }
      end

      def utf8(str) = Payload.utf8(str)
    end
  end
end
