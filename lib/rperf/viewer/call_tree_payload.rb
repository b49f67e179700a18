# frozen_string_literal: true

require_relative "method_list"
require_relative "sample_filter"

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
    # The filters are SampleFilter's (label, thread, hidden threads, idle samples, time range).
    class CallTreePayload
      MIN_PERCENT = 0.1
      MAX_NODES = 20_000

      def self.build(data, label: nil, thread: nil, range: nil, hide: nil, tags: nil, idle: false, min_percent: MIN_PERCENT, max_nodes: MAX_NODES)
        of(SampleFilter.new(data, label: label, thread: thread, range: range, hide: hide, tags: tags, idle: idle).call_tree,
           min_percent: min_percent, max_nodes: max_nodes)
      end

      # The payload of a tree already built (Payload sends it with its method table).
      def self.of(tree, min_percent: MIN_PERCENT, max_nodes: MAX_NODES) = new(tree).build(min_percent, max_nodes)

      def initialize(tree)
        @tree = tree
      end

      # The calls above min_percent of the total; while more than max_nodes remain, the
      # threshold doubles. When it cannot rise any more (a total of 0: every node weighs 0),
      # the first max_nodes nodes of the walk are sent.
      def build(min_percent, max_nodes)
        total = @tree.total_ns
        nodes = methods = nil
        loop do
          min_ns = (total * min_percent / 100.0).ceil
          nodes, methods = walk(@tree, min_ns, max_nodes)
          break if nodes

          if (total * min_percent * 2 / 100.0).ceil <= min_ns
            nodes, methods = walk(@tree, min_ns, max_nodes, truncate: true)
            break
          end
          min_percent *= 2 # too many nodes above the threshold: raise it until they fit
        end
        { total_ns: total, min_percent: min_percent, node_count: @tree.size, methods: methods, nodes: nodes }
      end

      private

      # Depth first, heaviest first, down to min_ns; nil when that is more than max_nodes
      # (truncate: the first max_nodes nodes, parents before their children).
      def walk(tree, min_ns, max_nodes, truncate: false)
        nodes = []
        methods = MethodList.new
        index_at_depth = []
        tree.visit(min_total_ns: min_ns) do |node, event|
          next unless event == :enter
          if nodes.size >= max_nodes
            break if truncate

            return nil
          end

          index_at_depth[node.depth] = nodes.size
          parent = node.depth.zero? ? -1 : index_at_depth[node.depth - 1]
          nodes << [parent, methods.index(node.method), node.total_ns, node.self_ns, node.recursive? ? 1 : 0]
        end
        [nodes, methods.to_a]
      end
    end
  end
end
