# frozen_string_literal: true

module Rperf
  class Viewer
    # One profile in the compact shape the viewer page reads (GET <path>/snapshots/<id>), every
    # part of it the model's (Native::Profile#stack_tree: Ruby walks no stack), bounded by
    # max_samples and max_timeline:
    #
    #   frames: [[name, path], ...] (method level), frame_lines, frame_categories (into categories)
    #   thread_totals: [[thread_seq, total_ns, idle_ns (profile/idle_wait.hh), name(, Ractor id)], ...]
    #   nodes: {parent: [...], frame: [...]}: a prefix tree of stacks, root side first (-1: a root)
    #   samples: [[leaf node, weight_ns, thread_seq, label_set_id(, line node)], ...]
    #   idle_samples: the indexes of the rows the model says are idle ("hide idle threads")
    #   label_sets: [{"key" => "value"}, ...] (string_labels)
    #   timeline: nil, or the raw samples (aggregate: false) in time order, merged per time slot
    #     beyond max_timeline: {samples: [[... as samples, time_ns(, line node)], ...], idle:,
    #     quantum_ns:, source_count:, bins:, idle_hidden_bins:} (the Timeline tab's bins of every
    #     sample, and of those not idle: the tab opens without a big timeline's rows)
    #   line_tree: nil, or {parent:, frame:, line:}: each kept stack at line level (lines: true)
    #   pruned: {samples:, weight_ns:}: the lightest stacks, one "[pruned]" frame
    #   allocations: nil, or {interval:, classes:, allocated:, retained: (nil: not measured),
    #     samples: [[node, objects, thread_seq, label_set_id, class, retained], ...], pruned:}
    module Payload
      # The profile cannot be shown (a hand-built Hash Native::Profile refuses).
      class Unavailable < StandardError; end

      CATEGORIES = Native::FRAME_CATEGORIES
      BINS = 600 # the Timeline tab's (views/timeline_bins.hh)

      # The model of a profile Hash (one built by hand converted once).
      def self.model(data)
        Native::Profile.of_view(data) || Storage.native(data)
      rescue TypeError, Rperf::Error => e
        raise Unavailable, "cannot show the profile: #{e.message}"
      end

      def self.build(data, max_samples:, max_timeline:)
        native = model(data)
        tree = native.stack_tree(max_samples, max_timeline)
        duration = native.attribute(:duration_ns)
        bins = ->(opts) { native.timeline_bins(BINS, duration.is_a?(Integer) ? duration : 0, opts) }
        timeline = tree[:timeline]&.then { |t| t.merge(bins: bins.({}), idle_hidden_bins: t[:idle].empty? ? nil : bins.({ idle: true })) }
        {
          total_weight_ns: tree[:total_weight_ns], frames: tree[:frames], frame_lines: tree[:frame_lines],
          frame_categories: Native.frame_categories(tree[:frames]).map { |c| CATEGORIES.index(c) }, categories: CATEGORIES,
          thread_totals: native.thread_totals, nodes: { parent: tree[:parents], frame: tree[:node_frames] },
          samples: tree[:rows], idle_samples: tree[:idle_rows], label_sets: native.label_sets.map { |set| string_labels(set) },
          pruned: tree[:pruned], timeline: timeline, line_tree: tree[:line_tree],
          allocations: tree[:allocations] && { interval: native.attribute(:allocation_interval), **tree[:allocations] },
        }
      end

      # User data (names, paths, labels) made valid UTF-8 as the model makes it (util/utf8.hh: one
      # U+FFFD per invalid byte, where String#scrub gives one per run), so names match as the
      # model compares them.
      def self.utf8(str)
        str = str.to_s
        return str if str.encoding == Encoding::UTF_8 && str.valid_encoding?

        str.dup.force_encoding(Encoding::UTF_8).scrub { |bytes| "\uFFFD" * bytes.bytesize }
      end

      # A label set as the page and the model's label filters spell it (profile/label_set_match.hh):
      # keys and values as their to_s, valid UTF-8 (:a and "a": the last value).
      def self.string_labels(set)
        set.is_a?(Hash) ? set.to_h { |k, v| [utf8(k.to_s), utf8(v.to_s)] } : {}
      end
    end

    # The text of a file of the profile, for the Source tab (GET <path>/snapshots/<id>/source?path=PATH):
    # {path:, lines: [text, ...]}. Only a frame path of this very profile is read (exact,
    # absolute, a regular file of at most MAX_BYTES): no other file can be asked for (issue 27).
    module SourcePayload
      MAX_BYTES = 4 * 1024 * 1024

      # The file cannot be shown: not one of the profile's, not readable, too big.
      class Refused < StandardError; end

      def self.build(data, query)
        path = URI.decode_www_form(query.to_s).to_h["path"].to_s
        raise Refused, "the source needs path=" if path.empty?
        raise Refused, "#{path.inspect} is not a file of this profile" unless Storage.native(data).frame_path?(path)
        raise Refused, "#{path} is not an absolute path" unless path.start_with?("/")

        stat = File.stat(path)
        raise Refused, "#{path} is not a regular file" unless stat.file?
        raise Refused, "#{path} is over #{MAX_BYTES} bytes" if stat.size > MAX_BYTES

        { path: Payload.utf8(path), lines: Payload.utf8(File.binread(path, MAX_BYTES)).lines(chomp: true) }
      rescue SystemCallError => e
        raise Refused, "cannot read #{path}: #{e.message}"
      rescue ArgumentError => e # URI's, for a malformed query
        raise Refused, "cannot read the query #{query.to_s[0, 100].inspect}: #{e.message}"
      end
    end
  end
end
