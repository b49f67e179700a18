# frozen_string_literal: true

module Rperf
  # A method as the call tree and the method table name it: its label, file, and the line it
  # starts at (0 when unknown). Frames that differ only by line are one method.
  MethodRef = Data.define(:name, :path, :line) do
    def to_s
      return name if path.empty?

      line.positive? ? "#{name} (#{path}:#{line})" : "#{name} (#{path})"
    end
  end

  # The call tree of a profile (ruby-prof's model, from sampled stacks): a node per call path,
  # built by the native core. The root is [root]; with `threads: :separate` its children are one
  # [thread N] node per thread. Samples in a GVL/GC state end in a leaf of their own
  # ([GVL blocked], [GVL wait], [GC marking], [GC sweeping]).
  #
  #   tree = Rperf::CallTree.new(Rperf.load("rperf.json.gz"), max_depth: 10)
  #   tree.visit { |node, event| puts "#{'  ' * node.depth}#{node.method.name}" if event == :enter }
  #
  # `filter:` keeps the samples carrying every label given ({endpoint: "/users"}, {"%GVL" => "wait"}).
  # `max_depth:` limits #visit (and the printers), never the totals.
  class CallTree
    THREADS = %i[merge separate].freeze

    attr_reader :max_depth, :native

    # select: the Viewer's filters, applied natively ({thread:, hide: [...], label_sets: [...],
    # range: [from_ns, to_ns], idle: true}: profile/sample_filter.hh; idle: profile/idle_wait.hh). inverted: the bottom-up tree: each stack
    # leaf first, so the roots are the functions that were running and each child a caller of
    # the one above (a VM state is no frame there: its time stays with the function it was in).
    def initialize(data, max_depth: nil, threads: :merge, filter: nil, select: nil, inverted: false)
      raise ArgumentError, "threads: must be :merge or :separate (got #{threads.inspect})" unless THREADS.include?(threads)
      raise ArgumentError, "max_depth: must be nil or an Integer >= 0 (got #{max_depth.inspect})" unless max_depth.nil? || (max_depth.is_a?(Integer) && max_depth >= 0)
      raise ArgumentError, "filter: must be a Hash of labels (got #{filter.class})" unless filter.nil? || filter.is_a?(Hash)

      @max_depth = max_depth
      @native = Native::CallTree.build(Storage.native(data), { threads: threads, filter: filter, select: select, inverted: inverted ? true : false })
      @method_refs = Array.new(@native.method_count) # made when first asked for
    end

    def root = node(0)
    def total_ns = @native.total_ns
    def size = @native.node_count
    def node(id) = Node.new(self, id, @native.node(id))
    def method_ref(id) = @method_refs[id] ||= @native.method_info(id).then { |m| MethodRef.new(m.label, m.path, m.line) }

    # Depth first, heaviest children first: yields (node, :enter) and, after its children,
    # (node, :exit). The root has depth 0; nodes deeper than max_depth are not visited, nor
    # those (with their subtrees) lighter than min_total_ns.
    def visit(max_depth: @max_depth, min_total_ns: 0)
      return enum_for(:visit, max_depth: max_depth, min_total_ns: min_total_ns) unless block_given?

      todo = [[root, :enter]]
      until todo.empty?
        node, event = todo.pop
        yield node, event
        next if event == :exit

        todo << [node, :exit]
        next if max_depth && node.depth >= max_depth

        node.children.reverse_each { |child| todo << [child, :enter] if child.total_ns >= min_total_ns }
      end
      self
    end

    def method_table = @method_table ||= MethodTable.new(self)

    # One call path: the native tree's node `id`, read once.
    class Node
      attr_reader :tree, :id, :total_ns, :self_ns, :depth

      # `info`: the native node's fields (Native::CallTree::NodeInfo).
      def initialize(tree, id, info)
        @tree = tree
        @id = id
        @method_id = info.method_id
        @parent_id = info.parent_id
        @total_ns = info.total_ns
        @self_ns = info.self_ns
        @recursive = info.recursive
        @depth = info.depth
      end

      # The node's method (MethodRef); with arguments, Object#method.
      def method(*args)
        args.empty? ? @tree.method_ref(@method_id) : super
      end

      def name = method.name
      def children = @tree.native.children(@id).map { |c| @tree.node(c) }
      def parent = @parent_id && @tree.node(@parent_id)
      # Its method is also one of its ancestors' (total time is counted at the outermost one).
      def recursive? = @recursive
      def ==(other) = other.is_a?(Node) && other.tree.equal?(@tree) && other.id == @id
      alias eql? ==
      def hash = [@tree.object_id, @id].hash
      def inspect = "#<Rperf::CallTree::Node #{method} total=#{@total_ns} self=#{@self_ns}#{@recursive ? ' recursive' : ''}>"
    end
  end

  # The method view (ruby-prof's MethodInfo): one entry per method across all its call sites,
  # heaviest total first. total_ns counts each sample once however deep the method recurses;
  # callers and callees are the methods that called it or that it called directly, each with
  # the time of the samples in which they did (their share of the method's total). Without
  # recursion the callers' times add up to the total, the callees' to total minus self.
  #
  #   table = Rperf::MethodTable.new(data)
  #   table["validate"].callers.each { |c| puts "#{c.method.name} #{(c.share * 100).round}%" }
  class MethodTable
    include Enumerable

    # A caller or a callee: the other method, the time, and its fraction of the entry's total.
    Arc = Data.define(:method, :total_ns, :share)

    class Entry
      attr_reader :self_ns, :total_ns, :method_id

      def initialize(table, method_id, self_ns, total_ns, recursive)
        @table, @method_id = table, method_id
        @self_ns, @total_ns, @recursive = self_ns, total_ns, recursive
      end

      def method = @method ||= @table.tree.method_ref(@method_id)
      def name = method.name
      def recursive? = @recursive
      def callers = @callers ||= @table.arcs(:callers, @method_id, @total_ns)
      def callees = @callees ||= @table.arcs(:callees, @method_id, @total_ns)
      # The n heaviest of #callers or #callees (kind) and how many there are, making only n
      # Arcs and not the whole table's (a method may have thousands, of which the viewer
      # sends a few; CallTree#heaviest_arcs).
      def heaviest(kind, n)
        index = %i[callers callees].index(kind) or raise ArgumentError, "kind must be :callers or :callees (got #{kind.inspect})"

        arcs = @table.tree.native.heaviest_arcs([@method_id], n).first
        [@table.arcs_of(arcs[index], @total_ns), arcs[index + 2]]
      end

      def inspect = "#<Rperf::MethodTable::Entry #{method} total=#{@total_ns} self=#{@self_ns}>"
    end

    attr_reader :tree

    # `data`: a profile Hash (the keywords as CallTree's) or a CallTree.
    def initialize(data, threads: :merge, filter: nil)
      @tree = data.is_a?(CallTree) ? data : CallTree.new(data, threads: threads, filter: filter)
    end

    # Heaviest total first, then self; then name and path (sorted natively). Made when first
    # asked for: the Viewer's methods tab asks the native table for the few it sends
    # (heaviest_entries) and never makes the tens of thousands of others.
    def entries
      @entries ||= @tree.native.method_entries.map { |e| entry_of(e) }.freeze
    end

    def each(&) = entries.each(&)
    def size = entries.size
    # The entries MethodTable::heaviest picks (at least min_ns, among the max_methods heaviest by
    # total or by self), in the table's order, and the table's size.
    def heaviest_entries(min_ns, max_methods)
      picked, count = @tree.native.heaviest_entries(min_ns, max_methods)
      [picked.map { |e| entry_of(e) }, count]
    end
    def total_ns = @tree.total_ns
    # The heaviest entry of a method named `name` (a label such as "Foo#bar"), or nil.
    def [](name) = entries.find { |e| e.name == name }
    # Entries whose name is `pattern` (a String), or else contains it; or matches a Regexp.
    def matching(pattern)
      return entries.select { |e| pattern.match?(e.name) } if pattern.is_a?(Regexp)

      exact = entries.select { |e| e.name == pattern }
      exact.empty? ? entries.select { |e| e.name.include?(pattern) } : exact
    end

    def arcs(kind, method_id, total_ns) = arcs_of(@tree.native.public_send(kind, method_id), total_ns) # :nodoc:

    private def entry_of(e) = Entry.new(self, e.method_id, e.self_ns, e.total_ns, e.recursive)

    # Arcs of native pairs [method_id, ns, method_id, ns, ...].
    def arcs_of(pairs, total_ns) # :nodoc:
      Array.new(pairs.size / 2) do |i|
        ns = pairs[2 * i + 1]
        Arc.new(@tree.method_ref(pairs[2 * i]), ns, total_ns.positive? ? ns.fdiv(total_ns) : 0.0)
      end.freeze
    end
  end
end
