# frozen_string_literal: true

require "rperf/viewer"

# What the viewer's methods tab (read by test/consumers/viewer_check.js) must show of a
# Rperf::MethodTable: the served page's and the static file's (viewer and `rperf report --html`).
module MethodViewAssertions
  # [name, self_ns, total_ns] of the entries the methods tab lists of `table` (Rperf::MethodTable),
  # heaviest total first, down to the payload's threshold.
  def method_rows(table)
    min_ns = (table.total_ns * Rperf::Viewer::MethodTablePayload::MIN_PERCENT / 100.0).ceil
    table.entries.select { |e| e.total_ns >= min_ns }.map { |e| [e.name, e.self_ns, e.total_ns] }
  end

  def shown_rows(view) = view["rows"].map { |r| r.values_at("name", "self", "total") }

  # A method's graph as the page shows it: [kind, name, ns, share %] of each caller above the
  # method, then [focus, total, self], then each callee.
  def shown_graph(graph)
    graph["rows"].reject { |r| r["cls"] == "section" }.map do |r|
      r["cls"] == "focus" ? ["focus", r["total"], r["self"]] : [r["kind"], r["name"], r["ns"], r["share"].to_f]
    end
  end

  # The graph shows `entry`'s callers and callees (MethodTable's arcs) with their shares, to the
  # tenth of a percent.
  def assert_graph(entry, graph, message = nil)
    arc = ->(kind, a) { [kind, a.method.name, a.total_ns, a.share * 100] }
    expected = entry.callers.map { |a| arc.("caller", a) } + [["focus", entry.total_ns, entry.self_ns]] +
               entry.callees.map { |a| arc.("callee", a) }
    shown = shown_graph(graph)
    assert_equal expected.map { |r| r.first(3) }, shown.map { |r| r.first(3) }, message
    expected.zip(shown).each { |e, s| assert_in_delta e[3], s[3], 0.051, message if e[3] }
  end
end
