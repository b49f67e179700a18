# frozen_string_literal: true

require_relative "web_helper"
require "rperf/viewer"
require_relative "ui_profile"

# Issue 27, the server's side of the viewer's new views: frame categories and per-thread idle
# time in the payload, the hide= and idle=hide filters, endpoint sets, the sandwich, a big
# timeline sent apart.
class ViewerUiPayloadTest < Minitest::Test
  include WebTestHelper
  include UiProfile

  def payload(data = profile) = Rperf::Viewer::Payload.build(data, max_samples: 20_000, max_timeline: 200_000)

  def test_frame_categories
    p = payload
    cats = p[:frames].zip(p[:frame_categories]).to_h { |(name, _), c| [name, p[:categories][c]] }
    assert_equal({ "Object#main" => "app", "Shop#checkout" => "app", "Shop#price" => "app", "Deep#recurse" => "app",
                   "JSON.generate" => "gem", "Puma::Server#handle_servers" => "gem", "Set#add" => "stdlib",
                   "Integer#times" => "native", "IO.select" => "native", "Kernel#sleep" => "native" }, cats)
    # The rule is the native core's (profile/frame_category.hh, its cases in
    # test/cpp/frame_category_test.cc); here what Ruby's own files and a VM state's frame give.
    category = ->(name, path) { Rperf::Native.frame_categories([[name, path]]).first }
    assert_equal "stdlib", category.("Integer#times", "<internal:numeric>")
    assert_equal "stdlib", category.("Set#add", "#{RbConfig::CONFIG['rubylibdir']}/set.rb")
    assert_equal "gem", category.("Minitest.run", Gem.loaded_specs["minitest"].full_gem_path + "/lib/minitest.rb")
    assert_equal "gc", category.("[GC marking]", "<VM>")
    assert_equal "gvl", category.("[GVL blocked]", "<VM>")
    assert_equal "other", category.("[pruned]", "<rperf>")
    assert_equal "other", category.("(no Ruby frames)", "")
    assert_raises(TypeError) { Rperf::Native.frame_categories([1]) }
  end

  # Each thread's total and its idle time, as the model says it (profile/idle_wait.hh): time
  # off the GVL is idle only in a known wait (Puma's acceptor, its pool's wait), not a busy I/O
  # thread's read nor a sleep in the program.
  # The fourth element: the thread's last name (profile/thread_names.hh), nil without one.
  def test_thread_totals
    assert_equal [[1, 100 * MS, 0, nil], [2, 100 * MS, 100 * MS, nil], [3, 60 * MS, 0, nil]], payload[:thread_totals]
    assert_equal [[1, 100 * MS, 0, nil], [2, 100 * MS, 100 * MS, nil], [3, 60 * MS, 0, nil], [4, 50 * MS, 0, nil], [5, 100 * MS, 70 * MS, nil]],
                 payload(idle_profile)[:thread_totals]
    named = profile.merge(thread_names: [[2, "puma srv tp 001", 0], [3, "worker", 0], [3, "worker renamed", 5 * MS]])
    assert_equal [[1, nil], [2, "puma srv tp 001"], [3, "worker renamed"]], payload(named)[:thread_totals].map { |t| [t[0], t[3]] }
  end

  # The rows the model says are idle, marked in the payload: the page only applies the marks.
  def test_idle_rows_marked
    body = payload(idle_profile)
    idle = body[:idle_samples].map { |i| body[:samples][i] }
    leaf = ->(node) { body[:frames][body[:nodes][:frame][node]][0] }
    assert_equal [["IO.select", 100 * MS, 2], ["Thread::Mutex#sleep", 70 * MS, 5]], idle.map { |node, w, seq| [leaf.(node), w, seq] }
    timeline = body[:timeline]
    assert_equal 170, timeline[:idle].size
    assert_equal [[2, 100], [5, 70]], timeline[:idle].map { |i| timeline[:samples][i][2] }.tally.sort
    # The Timeline's bins without the idle samples, for "hide idle threads".
    assert_equal 240 * MS, timeline[:idle_hidden_bins][:kept_ns]
    assert_equal [1, 3, 4, 5], timeline[:idle_hidden_bins][:threads].map(&:first)
    # Pruned stacks keep their idleness: the [pruned] row of the pool's wait is marked too.
    pruned = Rperf::Viewer::Payload.build(idle_profile, max_samples: 1, max_timeline: 100)
    assert_equal 10, pruned[:pruned][:samples]
    marked = pruned[:idle_samples].sum { |i| pruned[:samples][i][1] }
    assert_equal 170 * MS, marked
    assert_equal 410 * MS, pruned[:samples].sum { |s| s[1] }
    assert_equal 170 * MS, pruned[:timeline][:idle].sum { |i| pruned[:timeline][:samples][i][1] }, "coarsened rows keep it"
  end

  # idle=hide: every view built natively without the idle samples; a busy I/O thread stays.
  def test_idle_filter
    data = idle_profile
    assert_equal 240 * MS, kept_ns(data, idle: true)
    # The page's trees and tables of the same rows; the sandwich judges a sample by its whole
    # stack (the server marked its row idle), before it is cut at the method: the pool's wait is
    # idle even as ConditionVariable#wait's callees ([Mutex#sleep]).
    wait = ["Thread::ConditionVariable#wait", "<C method>"]
    views = page_views(data, [*%w[call_tree method_table inverted_tree].map { |view| { view: view, filter: { idle: true } } },
                              { view: "sandwich", fn: wait }, { view: "sandwich", fn: wait, filter: { idle: true } },
                              { view: "sandwich", fn: ["Shop#price", APP], filter: { idle: true } }])
    assert_equal [240 * MS] * 3 + [70 * MS, 0, 90 * MS], views.map { |v| v["total_ns"] }
    assert_equal 240 * MS, page_view(data, "timeline_bins", idle: true)["kept_ns"]
    charts = page_views(data, [5, 4, 2].map { |thread| { view: "stack_chart", filter: { thread: thread, idle: true } } })
    assert_equal [30 * MS, 50 * MS, 0], charts.map { |c| c["total_ns"] }, "IO#read (thread 4) is not idle"
    # With a range too: the timeline's rows, each its part of the range.
    assert_equal 180 * MS, kept_ns(data, idle: true, range: [0, 50 * MS])
    assert_equal 180 * MS, page_view(data, "call_tree", idle: true, range: [0, 50 * MS])["total_ns"]
  end

  # A label filter of several values of one key (an endpoint set), kept by the model.
  def test_endpoint_sets
    data = idle_profile
    build = ->(**filters) { kept_ns(data, **filters) }
    assert_equal 130 * MS, build.(label: ["endpoint", ["GET /a", "GET /c"]])
    assert_equal 150 * MS, build.(label: ["endpoint", ["GET /a", "GET /b"]])
    assert_equal 100 * MS, build.(label: ["endpoint", "GET /a"]), "one value, as before"
    # Not set or GET /c: 30 ms of /c and 230 ms without an endpoint, 90 of them not idle.
    assert_equal 260 * MS, build.(label: ["endpoint", ["GET /c", nil]])
    assert_equal 90 * MS, build.(label: ["endpoint", ["GET /c", nil]], idle: true)
    # The page's Timeline bins of the same filters (the page model's, served or in a file).
    set = { key: "endpoint", values: ["GET /a", "GET /c"] }
    unset_or_c = { key: "endpoint", values: ["GET /c"], unset: true }
    bins = page_views(data, [{ view: "timeline_bins", filter: { label: set } }, { view: "timeline_bins", filter: { idle: true } },
                             { view: "timeline_bins", filter: { label: unset_or_c, idle: true } }])
    assert_equal [130 * MS, 240 * MS, 90 * MS], bins.map { |b| b["kept_ns"] }
  end

  def test_hide_filter
    assert_equal 160 * MS, kept_ns(profile, hide: [2])
    assert_equal 60 * MS, kept_ns(profile, hide: [1, 2])
    assert_equal 260 * MS, kept_ns(profile, hide: [])
  end

  def names(tree) = tree["nodes"].map { |_, m| tree["methods"][m][0] }

  # Callers up from the method, callees down; a recursive method counts once. The page's
  # sandwich (page/page_views), under the page's filters.
  def test_sandwich
    s, deep, io, nothing, hidden = page_views(profile, [
      { view: "sandwich", fn: ["Shop#checkout", APP] },
      { view: "sandwich", fn: ["Deep#recurse", APP], filter: { thread: 3 } },
      { view: "sandwich", fn: ["IO.select", FRAMES[:select][0]] },
      { view: "sandwich", fn: ["Nothing#here", APP] },
      { view: "sandwich", fn: ["Shop#checkout", APP], filter: { thread: 3 } },
    ])
    assert_equal 130 * MS, s["total_ns"]
    assert_equal ["Shop#checkout", APP], s["method"]
    assert_equal ["[root]", "Shop#checkout", "Object#main"], names(s["callers"])
    assert_equal [130 * MS] * 3, s["callers"]["nodes"].map { |n| n[2] }
    callees = s["callees"]["nodes"].to_h { |_, m, total| [s["callees"]["methods"][m][0], total] }
    assert_equal({ "[root]" => 130 * MS, "Shop#checkout" => 130 * MS, "Shop#price" => 60 * MS, "Deep#recurse" => 50 * MS,
                   "JSON.generate" => 20 * MS }, callees)
    assert_equal %w[other app app], s["callers"]["categories"], "[root] is rperf's"

    assert_equal 50 * MS, deep["total_ns"]
    assert_equal ["[root]", "Deep#recurse", "Shop#checkout", "Object#main"], names(deep["callers"])
    assert_equal DEPTH + 1, deep["callees"]["nodes"].size
    # The blocked time of IO.select ends in its state's leaf below it, not among its callers.
    assert_equal ["[root]", "IO.select", "Puma::Server#handle_servers"], names(io["callers"])
    assert_equal ["[root]", "IO.select", "[GVL blocked]"], names(io["callees"])
    assert_equal 0, nothing["total_ns"]
    assert_equal 50 * MS, hidden["total_ns"]
    assert_equal 160 * MS, page_view(profile, "call_tree", hide: [2])["total_ns"]
  end

  # The views the page computes are no routes of the server.
  def test_the_server_builds_no_tree
    viewer = Rperf::Viewer.new(nil)
    viewer.add_snapshot(profile)
    with_puma(viewer) do |port|
      %w[call_tree method_table inverted_tree sandwich].each { |view| assert_equal "404", http_get(port, "/rperf/snapshots/1/#{view}").code, view }
    end
  end

  # Over TIMELINE_INLINE_ROWS, the snapshot's timeline says where its rows are; they come
  # from .../timeline, all of them. A small timeline stays in the snapshot.
  def test_big_timeline_sent_apart
    rows = Rperf::Viewer::TIMELINE_INLINE_ROWS + 1
    stack = [FRAMES[:price], FRAMES[:main]]
    raw = Array.new(rows) { |i| [stack, MS, 1, 0, (i + 1) * MS] }
    big = { mode: :wall, frequency: 1000, sampling_count: rows, duration_ns: rows * MS,
            aggregated_samples: [[stack, rows * MS, 1, 0]], raw_samples: raw, label_sets: [{}] }
    viewer = Rperf::Viewer.new(nil, max_timeline: rows)
    viewer.add_snapshot(big)
    viewer.add_snapshot(profile)
    with_puma(viewer) do |port|
      body = JSON.parse(http_get(port, "/rperf/snapshots/1").body)
      bins = body["timeline"].delete("bins")
      assert_equal({ "quantum_ns" => 0, "source_count" => rows, "idle_hidden_bins" => nil, "deferred" => true, "rows" => rows }, body["timeline"])
      # The Timeline's bins stay in the snapshot: one thread running the whole time.
      assert_equal rows * MS, bins["end_ns"]
      assert_equal [1], bins["threads"].map(&:first)
      running, *others = bins.dig("threads", 0, 1)
      assert_equal [nil, nil, nil], others
      assert_in_delta rows * MS, running.sum, Rperf::Viewer::Payload::BINS
      assert_equal [["Shop#price"]] * Rperf::Viewer::Payload::BINS, bins["top"].map { |ids| ids.map { |i| bins["leaf_names"][i] } }
      # As gzip'd columns (Viewer.timeline_bytes): nodes, weights, threads, label sets, times.
      response = http_get(port, "/rperf/snapshots/1/timeline")
      assert_equal "application/gzip", response["content-type"]
      columns, idle = timeline_of_bytes(response.body)
      assert_equal [], idle, "no idle row"
      assert_equal [rows] * 5, columns.map(&:size)
      assert_equal rows * MS, columns[1].sum
      assert_equal (1..rows).map { |i| i * MS }, columns[4]
      small = JSON.parse(http_get(port, "/rperf/snapshots/2").body)
      assert_equal 260, small.dig("timeline", "samples").size
      assert_equal "404", http_get(port, "/rperf/snapshots/2/timeline").code
      assert_equal "404", http_get(port, "/rperf/snapshots/9/timeline").code
    end
    html = Rperf::Viewer.static_html(big, max_timeline: rows)
    gz = html[%r{<script id="rperf-timeline-1" type="application/gzip\+base64">([^<]*)</script>}, 1]
    assert_equal [rows] * 5, timeline_of_bytes(Base64.strict_decode64(gz))[0].map(&:size)
    refute_includes Rperf::Viewer.static_html(profile), "rperf-timeline-1"
  end

  # Viewer.timeline_bytes read back as the page reads it: [[nodes, weights, threads, label sets,
  # times(, line-level leaves)], idle rows].
  def timeline_of_bytes(gz)
    bytes = Zlib.gunzip(gz)
    n, lines, idle_count = bytes.unpack("V3")
    width = lines == 1 ? 32 : 28
    assert_equal 16 + (n * width) + (idle_count * 4), bytes.bytesize
    f64 = ->(k) { bytes.unpack("E#{n}", offset: 16 + (8 * n * k)).map(&:to_i) }
    u32 = ->(k, type = "V") { bytes.unpack("#{type}#{n}", offset: 16 + (16 * n) + (4 * n * k)) }
    times = f64.(1).each_with_object([]) { |step, sum| sum << ((sum.last || 0) + step) }
    columns = [u32.(0), f64.(0), u32.(1), u32.(2), times]
    columns << u32.(3, "l<") if lines == 1
    [columns, bytes.unpack("V#{idle_count}", offset: 16 + (n * width))]
  end

  # The Timeline's bins, the model's: the payload's of every sample (drawn without the rows),
  # the page model's of the rows under the label and hidden-thread filters: each thread's time
  # per VM state as the profile says it, and each slice's heaviest leaves (equal ones: the first
  # seen first).
  def test_timeline_bins
    bins = Rperf::Viewer::Payload::BINS
    ns = ->(body) { body["threads"].to_h { |seq, states| [seq, states.map { |s| s&.sum }] } }
    all = JSON.parse(JSON.generate(payload(profile).dig(:timeline, :bins)))
    assert_equal [100 * MS, bins], all.values_at("end_ns", "bins")
    assert_equal 260 * MS, all["kept_ns"]
    ns.(all).each_value { |states| states.compact.each { |n| assert_in_delta 0, n % MS, bins / 2 } }
    assert_equal({ 1 => [90, 10, nil, nil], 2 => [nil, 100, nil, nil], 3 => [50, 10, nil, nil] },
                 ns.(all).transform_values { |states| states.map { |n| n && (n.to_f / MS).round } })
    assert_equal %w[Shop#price IO.select Deep#recurse], all["top"][0].map { |i| all["leaf_names"][i] }
    assert_equal %w[Shop#price IO.select], all["top"][-1].map { |i| all["leaf_names"][i] }, "thread 3 ended at 60 ms"

    page_all, blocked = page_views(profile, [{ view: "timeline_bins" }, { view: "timeline_bins", filter: { label: { key: "%GVL", values: ["blocked"] }, hide: [2] } }])
    ns.(all).each do |seq, states| # the payload's bins are whole ns each
      states.zip(ns.(page_all)[seq]) { |a, b| a ? assert_in_delta(a, b, bins / 2, "thread #{seq}") : assert_nil(b) }
    end
    # The same heaviest leaves per slice (equal ones may come in another order: first seen in the rows).
    tops = ->(b) { b["top"].map { |ids| ids.map { |i| b["leaf_names"][i] }.sort } }
    assert_equal tops.(all), tops.(page_all)
    assert_equal 20 * MS, blocked["kept_ns"]
    assert_equal({ 1 => [nil, 10, nil, nil], 3 => [nil, 10, nil, nil] },
                 ns.(blocked).transform_values { |states| states.map { |n| n && (n.to_f / MS).round } })
    assert_equal 100 * MS, blocked["end_ns"], "the whole profile's axis"
    assert_nil payload(profile.except(:raw_samples))[:timeline], "no timeline without raw samples"
  end

  # A recorded raw sample keeps its VM state apart (its 5th of 6 elements) and the user's label
  # set: the stack chart ends its stack in the state's leaf, the payload's timeline row names the
  # label set with the state's label (as the aggregated sample does), the bins count it blocked.
  def test_recorded_vm_state_of_raw_samples
    stack = [FRAMES[:price], FRAMES[:main]]
    data = { mode: :wall, frequency: 1000, sampling_count: 2, duration_ns: 2 * MS,
             aggregated_samples: [[stack, MS, 1, 1], [stack, MS, 1, 2]],
             raw_samples: [[stack, MS, 1, 1, 0, MS], [stack, MS, 1, 1, 1, 2 * MS]],
             label_sets: [{}, { endpoint: "a" }, { endpoint: "a", "%GVL": "blocked" }] }
    chart, blocked = page_views(data, [{ view: "stack_chart", filter: { thread: 1 } },
                                       { view: "stack_chart", filter: { thread: 1, label: { key: "%GVL", values: ["blocked"] } } }])
    assert_equal [-2], chart["f"].select(&:negative?), "one [GVL blocked] leaf"
    # The label filter reads a recorded sample's VM state as its label, as the other views do.
    assert_equal [MS, 1, [0, 1, -2], [MS, MS, MS]], blocked.values_at("total_ns", "samples", "f", "x")
    rows = Rperf::Viewer::Payload.build(data, max_samples: 10, max_timeline: 10).dig(:timeline, :samples)
    assert_equal [1, 2], rows.map { |r| r[3] }
    bins = Rperf::Viewer::Payload.build(data, max_samples: 10, max_timeline: 10).dig(:timeline, :bins)
    running, blocked, *others = bins.dig(:threads, 0, 1)
    assert_equal [nil, nil], others
    [running, blocked].each { |ns| assert_in_delta MS, ns.sum, Rperf::Viewer::Payload::BINS / 2 } # each bin rounded
  end

  # The stack chart's cells, merged by the page model from the timeline's rows (the page only
  # draws them): thread 1 of the profile, in time order; a frame on the stack across samples is
  # one cell, the VM state a leaf.
  def test_stack_chart_cells
    chart, blocked = page_views(profile, [{ view: "stack_chart", filter: { thread: 1 } },
                                          { view: "stack_chart", filter: { thread: 3, label: { key: "%GVL", values: ["blocked"] } } }])
    names = chart["frames"].map(&:first)
    assert_equal ["Object#main", "Shop#checkout", "Shop#price", "JSON.generate", "Set#add", "Integer#times"], names
    assert_equal %w[app app app gem stdlib native], chart["frames"].map(&:last)
    assert_equal [0, 1, 2, 3, 4, 5, -2, 1, 2], chart["f"], "-2: the VM state 1 (GVL blocked)"
    assert_equal [0, 1, 2, 2, 1, 1, 2, 1, 2], chart["d"]
    assert_equal [0, 0, 0, 40, 60, 70, 70, 80, 80].map { |ms| ms * MS }, chart["x"]
    assert_equal [100, 60, 40, 20, 10, 10, 10, 20, 20].map { |ms| ms * MS }, chart["w"]
    assert_equal [0] * 9, chart["gap"]
    assert_equal({ "thread" => 1, "total_ns" => 100 * MS, "samples" => 100, "end_ns" => 100 * MS },
                 chart.slice("thread", "total_ns", "samples", "end_ns"))

    # The label filter: only the blocked samples of thread 3 (Kernel#sleep under main).
    assert_equal [["Object#main", APP, "app"], ["Kernel#sleep", "<C method>", "native"]], blocked["frames"]
    assert_equal [0, 1, -2], blocked["f"]
    assert_equal [50 * MS] * 3, blocked["x"]
    assert_equal [10 * MS] * 3, blocked["w"]
    assert_equal 10 * MS, blocked["total_ns"]

    # A gap no longer than a sample keeps the cell open (its time is the samples'); a longer one
    # closes it. Samples end at 1, 2, 4 and 10 ms.
    stack = [FRAMES[:price], FRAMES[:main]]
    gaps = { mode: :wall, frequency: 1000, aggregated_samples: [[stack, 4 * MS, 1, 0]],
             raw_samples: [1, 2, 4, 10].map { |ms| [stack, MS, 1, 0, ms * MS] }, label_sets: [{}], duration_ns: 10 * MS }
    chart = page_view(gaps, "stack_chart", thread: 1)
    assert_equal [0, 1, 0, 1], chart["d"]
    assert_equal [0, 0, 9, 9].map { |ms| ms * MS }, chart["x"]
    assert_equal [4, 4, 1, 1].map { |ms| ms * MS }, chart["w"]
    assert_equal [MS, MS, 0, 0], chart["gap"]

  end

  # The bottom-up tree (native CallTree, inverted: true): the running functions first.
  def test_inverted_tree
    tree, hidden = page_views(profile, [{ view: "inverted_tree" }, { view: "inverted_tree", filter: { hide: [2] } }])
    assert_equal 260 * MS, tree["total_ns"]
    roots = tree["nodes"].select { |parent, *| parent.zero? }.to_h { |_, m, total| [tree["methods"][m][0], total] }
    assert_equal({ "IO.select" => 100 * MS, "Shop#price" => 60 * MS, "Deep#recurse" => 50 * MS, "JSON.generate" => 20 * MS,
                   "Set#add" => 10 * MS, "Integer#times" => 10 * MS, "Kernel#sleep" => 10 * MS }, roots)
    price = tree["nodes"].index { |parent, m| parent.zero? && tree["methods"][m][0] == "Shop#price" }
    path = []
    node = price
    while node
      path << [tree["methods"][tree["nodes"][node][1]][0], tree["nodes"][node][2]]
      node = tree["nodes"].index { |parent, *| parent == node }
    end
    assert_equal [["Shop#price", 60 * MS], ["Shop#checkout", 60 * MS], ["Object#main", 60 * MS]], path
    assert_equal 160 * MS, hidden["total_ns"]
  end

  # rperf 0.11.1's tagfocus / tagignore, kept by the model's rule.
  def test_tag_filters
    blocked = { focus: nil, ignore: [["%GVL", "blocked"]] }
    assert_equal 140 * MS, kept_ns(profile, tags: blocked)
    assert_equal 120 * MS, kept_ns(profile, tags: { focus: /blocked/, ignore: [] })
    assert_equal 90 * MS, page_view(profile, "stack_chart", thread: 1, ignore: [["%GVL", "blocked"]])["total_ns"]
  end

  # The transforms, on the stacks of every kind of sample (the model's, which the page runs on its
  # tree: test/cpp/page_views_test.cc; in Chromium: viewer_ui_test.rb's test_transforms_*).
  def test_transforms
    apply = ->(list) { Rperf::Storage.native(profile).transformed(list).to_h }
    weight = ->(data) { data[:aggregated_samples].sum { |s| s[1] } }
    checkout = ["Shop#checkout", APP]
    focus = apply.([["focus", *checkout]])
    assert_equal 130 * MS, weight.(focus)
    assert(focus[:aggregated_samples].all? { |stack, *| stack.last == FRAMES[:checkout] }, "the function is the root")
    assert_equal 130, focus[:raw_samples].size
    merged = apply.([["merge", *checkout]])
    assert_equal 260 * MS, weight.(merged)
    refute(merged[:raw_samples].any? { |stack, *| stack.include?(FRAMES[:checkout]) })
    assert_equal 210 * MS, weight.(apply.([["drop", "Deep#recurse", APP]]))
    collapsed = apply.([["recursion"]])
    assert_equal [1], collapsed[:aggregated_samples].map { |stack, *| stack.count(FRAMES[:deep]) }.reject(&:zero?).uniq
    assert_equal 80 * MS, weight.(apply.([["focus", *checkout], ["drop", "Deep#recurse", APP]]))
    # A name that is not valid UTF-8 matches as the page shows it (one U+FFFD per bad byte).
    bad = "render\xE3\x81".b
    odd = { mode: :wall, frequency: 1000, label_sets: [{}],
            aggregated_samples: [[[[APP, bad], [APP, "Object#main"]], 5 * MS, 1, 0], [[[APP, "Object#main"]], 1 * MS, 1, 0]] }
    assert_equal "render\uFFFD\uFFFD", Rperf::Viewer::Payload.utf8(bad)
    assert_equal 5 * MS, weight.(Rperf::Storage.native(odd).transformed([["focus", Rperf::Viewer::Payload.utf8(bad), APP]]).to_h)
    assert_raises(ArgumentError) { Rperf::Storage.native(odd).transformed([["focus"]]) }
    assert_raises(ArgumentError) { Rperf::Storage.native(odd).transformed([[]]) }
    assert_raises(ArgumentError) { Rperf::Storage.native(odd).transformed([["explode", "a", "b"]]) }
  end
end
