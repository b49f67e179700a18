# frozen_string_literal: true

module Rperf
  # The printers of the call-tree views (`rperf report --tree|--graph|--callers|--callees`):
  # an indented call tree, and a graph in gprof's and ruby-prof's layout (each method with its
  # callers above and its callees below). Times in milliseconds, percentages of the total.
  module CallTreeReport
    GRAPH_HEADER = format("%8s %8s %11s %11s %7s  %s", "%total", "%self", "total ms", "self ms", "share", "name")
    GRAPH_RULE = "-" * 78
    # --tree's indentation: two columns a level down to INDENT_LEVELS; a deeper node is indented
    # as that level and says its depth ("[37] ..."), so a Rails stack's ~70 middleware frames
    # do not push the app's names past ~120 columns (33 columns of numbers, 48 of indentation).
    INDENT_LEVELS = 24

    module_function

    # The tree down to max_depth (the tree's own by default); nodes below min_percent of the
    # total are left out with their subtrees.
    def tree(tree, io, max_depth: tree.max_depth, min_percent: 0)
      total = tree.total_ns
      io.puts "Call tree: #{ms(total)} ms in total; children heaviest first, * recursive"
      io.puts format("%11s %11s %7s  %s", "total ms", "self ms", "total%", "method")
      tree.visit(max_depth: max_depth, min_total_ns: min_ns(total, min_percent)) do |node, event|
        next unless event == :enter

        line = format("%11.1f %11.1f %6.1f%%  %s%s%s", node.total_ns / 1e6, node.self_ns / 1e6, pct(node.total_ns, total),
                      indent(node.depth), node.method, node.recursive? ? " *" : "")
        io.puts line
      end
    end

    # Every method above min_percent, heaviest total first; `only` (entries) narrows the list,
    # `sections` picks what is printed around each method.
    def graph(table, io, min_percent: 0, only: nil, sections: %i[callers callees])
      total = table.total_ns
      io.puts "Call graph: #{ms(total)} ms in total. Callers above each method, callees below: the time of the"
      io.puts "samples in which they called it (or it called them), and its share of the method's total."
      io.puts GRAPH_HEADER
      floor = min_ns(total, min_percent)
      (only || table.entries).each do |entry|
        next if entry.total_ns < floor

        io.puts GRAPH_RULE
        arc_lines(entry.callers, io, floor) if sections.include?(:callers)
        io.puts format("%7.1f%% %7.1f%% %11.1f %11.1f %7s  %s%s", pct(entry.total_ns, total), pct(entry.self_ns, total),
                       entry.total_ns / 1e6, entry.self_ns / 1e6, "", entry.method, entry.recursive? ? " (recursive)" : "")
        arc_lines(entry.callees, io, floor) if sections.include?(:callees)
      end
    end

    def arc_lines(arcs, io, floor)
      arcs.each do |arc|
        next if arc.total_ns < floor

        io.puts format("%8s %8s %11.1f %11s %6.1f%%      %s", "", "", arc.total_ns / 1e6, "", arc.share * 100, arc.method)
      end
    end

    def indent(depth) = depth <= INDENT_LEVELS ? "  " * depth : "#{'  ' * INDENT_LEVELS}[#{depth}] "

    def pct(ns, total) = total.positive? ? ns * 100.0 / total : 0.0
    def ms(ns) = format("%.1f", ns / 1e6)
    def min_ns(total, percent) = percent.positive? ? total * percent / 100.0 : 0
  end
end
