# frozen_string_literal: true

require_relative "payload"

module Rperf
  class Viewer
    # The call-tree tab's data: Rperf::CallTree (the native call tree, the same totals as
    # `rperf report --tree`) of the samples the viewer's filters keep, in a compact shape:
    #
    #   total_ns:    the root's total (CallTree#total_ns)
    #   methods:     [[name, path, line], ...]
    #   nodes:       [[parent, method, total_ns, self_ns, recursive (0/1)], ...], depth first,
    #                heaviest child first; node 0 is [root] (parent -1). GVL/GC time ends in
    #                leaves of its own ([GVL blocked], [GVL wait], [GC marking], [GC sweeping]).
    #   min_percent: calls lighter than this share of the total are not sent (with their
    #                subtrees); a node's total minus its self and its children's is their time
    #   node_count:  the nodes of the whole tree
    #
    # Filters (each optional): label: [key, value] (value nil: samples without that key),
    # thread: a thread_seq, range: [t0_ns, t1_ns] (from raw samples, clipped as the timeline's).
    class CallTreePayload
      MIN_PERCENT = 0.1
      MAX_NODES = 20_000

      # The filters cannot apply to this profile (a time range without raw samples).
      class BadFilter < ArgumentError; end
      # The profile cannot be made a call tree (a hand-built Hash Native::Profile refuses).
      class Unavailable < StandardError; end

      def self.build(data, label: nil, thread: nil, range: nil, min_percent: MIN_PERCENT, max_nodes: MAX_NODES)
        new(data, label, thread, range).build(min_percent, max_nodes)
      end

      def initialize(data, label, thread, range)
        if range && !data[:raw_samples].is_a?(Array)
          raise BadFilter, "a time range (from/to) needs the profile's raw samples, and this profile has none " \
                           "(it was recorded with aggregate: true)"
        end

        @data = data
        @label = label
        @thread = thread
        @range = range
      end

      # The calls above min_percent of the total; while more than max_nodes remain, the
      # threshold doubles. When it cannot rise any more (a total of 0: every node weighs 0),
      # the first max_nodes nodes of the walk are sent.
      def build(min_percent, max_nodes)
        tree = call_tree
        total = tree.total_ns
        nodes = methods = nil
        loop do
          min_ns = (total * min_percent / 100.0).ceil
          nodes, methods = walk(tree, min_ns, max_nodes)
          break if nodes

          if (total * min_percent * 2 / 100.0).ceil <= min_ns
            nodes, methods = walk(tree, min_ns, max_nodes, truncate: true)
            break
          end
          min_percent *= 2 # too many nodes above the threshold: raise it until they fit
        end
        { total_ns: total, min_percent: min_percent, node_count: tree.size, methods: methods, nodes: nodes }
      end

      private

      # A plain label filter is the native one; the others select the samples here and build
      # the tree of that subset (the same native code). The page only knows labels as valid
      # UTF-8 (Payload): a key or value it had to repair is compared here, repaired the same way.
      def call_tree
        return tree_of(@data) unless @label || @thread || @range
        if @label && !@thread && !@range && @label[1] && intact?(@label[0]) && intact?(@label[1])
          return tree_of(@data, filter: { @label[0] => @label[1] })
        end

        tree_of(subset)
      end

      # Native::Profile.from_hash refuses a Hash that is not a profile (add_snapshot of one
      # built by hand): the tree is unavailable, the other views may still work.
      def tree_of(data, **options)
        CallTree.new(data, **options)
      rescue TypeError, Rperf::Error => e
        raise Unavailable, "cannot build the call tree: #{e.message}"
      end

      # Not repaired by the page: the native filter compares it byte for byte.
      def intact?(str) = str.valid_encoding? && !str.include?("\uFFFD")

      def subset
        rows = @range ? clipped_raw_samples : @data[:aggregated_samples]
        sets = @data[:label_sets] || [{}]
        rows = rows.select do |_, _, seq, lsi|
          (@thread.nil? || seq == @thread) && (@label.nil? || label_matches?(sets[lsi]))
        end
        @data.except(:raw_samples, :allocation_samples, :raw_allocation_samples)
             .merge(aggregated_samples: rows.map { |s| s.first(4) })
      end

      def label_matches?(set)
        pair = set&.find { |k, _| utf8(k) == @label[0] }
        @label[1].nil? ? pair.nil? : !pair.nil? && utf8(pair[1]) == @label[1]
      end

      # A raw sample covers [time - weight, time]: its part inside the range.
      def clipped_raw_samples
        t0, t1 = @range
        @data[:raw_samples].filter_map do |sample|
          stack, weight, seq, lsi = sample
          time = sample.last.to_i
          overlap = [time, t1].min - [time - weight, t0].max
          [stack, [weight, overlap].min, seq, lsi] if overlap.positive?
        end
      end

      # Depth first, heaviest first, down to min_ns; nil when that is more than max_nodes
      # (truncate: the first max_nodes nodes, parents before their children).
      def walk(tree, min_ns, max_nodes, truncate: false)
        nodes = []
        methods = []
        method_index = {}
        index_at_depth = []
        tree.visit(min_total_ns: min_ns) do |node, event|
          next unless event == :enter
          if nodes.size >= max_nodes
            break if truncate

            return nil
          end

          ref = node.method
          m = (method_index[ref] ||= (methods << [utf8(ref.name), utf8(ref.path), ref.line]).size - 1)
          index_at_depth[node.depth] = nodes.size
          parent = node.depth.zero? ? -1 : index_at_depth[node.depth - 1]
          nodes << [parent, m, node.total_ns, node.self_ns, node.recursive? ? 1 : 0]
        end
        [nodes, methods]
      end

      def utf8(str) = Payload.utf8(str)
    end
  end
end
