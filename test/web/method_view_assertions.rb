# frozen_string_literal: true

require "rperf/viewer"

# What the viewer's methods tab (read by test/consumers/viewer_check.js) must show of a
# Rperf::MethodTable: the served page's and the static file's (viewer and `rperf report --html`).
module MethodViewAssertions
  # The page's method table limits (page/page_views.hh, ViewLimits).
  METHODS_MIN_PERCENT = 0.1
  METHODS_MAX_ARCS = 20

  def min_ns(table) = (table.total_ns * METHODS_MIN_PERCENT / 100.0).ceil

  # [name, self_ns, total_ns] of the entries the methods tab lists of `table` (Rperf::MethodTable),
  # heaviest total first, down to the payload's threshold.
  def method_rows(table)
    table.entries.select { |e| e.total_ns >= min_ns(table) }.map { |e| [e.name, e.self_ns, e.total_ns] }
  end

  def shown_rows(view) = view["rows"].map { |r| r.values_at("name", "self", "total") }

  # A method's graph as the page shows it: [kind, name, ns, share %] of each caller above the
  # method, then [focus, total, self], then each callee; the notes of arcs left out.
  def shown_graph(graph)
    graph["rows"].filter_map do |r|
      case r["cls"]
      when "focus" then ["focus", r["total"], r["self"]]
      when "section" then r["text"] if r["text"].include?("not shown")
      else [r["kind"], r["name"], r["ns"], r["share"].to_f]
      end
    end
  end

  # The graph of `table`'s method `name` shows its callers and callees (MethodTable's arcs, those
  # the payload keeps) with their shares, to the tenth of a percent, and how many are left out.
  def assert_graph(table, name, graph, message = nil)
    entry = table[name]
    arcs = lambda do |kind, list|
      kept = list.select { |a| a.total_ns >= min_ns(table) }.first(METHODS_MAX_ARCS)
      rows = kept.map { |a| [kind, a.method.name, a.total_ns, a.share * 100] }
      list.size > kept.size ? rows << "#{list.size - kept.size} lighter #{kind}s not shown" : rows
    end
    expected = arcs.("caller", entry.callers) + [["focus", entry.total_ns, entry.self_ns]] + arcs.("callee", entry.callees)
    shown = shown_graph(graph)
    assert_equal expected.map { |r| r.is_a?(Array) ? r.first(3) : r }, shown.map { |r| r.is_a?(Array) ? r.first(3) : r }, message
    expected.zip(shown).each { |e, s| assert_in_delta e[3], s[3], 0.051, message if e.is_a?(Array) && e[3] }
  end
end
