# frozen_string_literal: true

require_relative "web_helper"
require "rperf/rack"
require "rperf/viewer"
require_relative "method_view_assertions"
require_relative "big_profile"

# The viewer page in headless Chromium (test/consumers/viewer_check.js), served by a real Puma
# on 127.0.0.1 with snapshots of real requests: every view renders, the label filter and the
# time range change the totals by the right amounts, the diff shows the slower function in
# red, no request leaves 127.0.0.1, and nothing from the profile runs as code.
class ViewerBrowserTest < Minitest::Test
  include RubyIndependentTest
  include WebTestHelper
  include MethodViewAssertions
  include BigProfile

  XSS_FRAME = :"<img src=x onerror=window.__xss=1>"
  XSS_LABEL = "<b>bold</b><script>window.__xss=2</script>"

  # Endpoints whose own code (no C calls) holds the time, so self time lands on them.
  class Shop
    attr_accessor :slow_iterations

    def initialize
      @slow_iterations = 300_000
      @meeting = Thread::Mutex.new
      @met = Thread::ConditionVariable.new
      @arrived = 0
    end

    # Holds a request until another one has arrived (at most 5 s): two concurrent /meet
    # requests are served by two server threads, whatever Puma's pool did before.
    def meet
      @meeting.synchronize do
        @arrived += 1
        @met.broadcast
        deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 5
        while @arrived.odd? && (left = deadline - Process.clock_gettime(Process::CLOCK_MONOTONIC)).positive?
          @met.wait(@meeting, left)
        end
      end
    end

    # Each loop is written out: a shared helper would own the self time.
    def slow_path
      i = 0
      i += 1 while i < @slow_iterations
      i
    end

    def fast_path
      i = 0
      i += 1 while i < 100_000
      i
    end

    define_method(XSS_FRAME) do
      i = 0
      i += 1 while i < 400_000
      i
    end

    attr_reader :kept

    # Allocates 3,000 strings and arrays, keeps 500 of the strings alive.
    def allocate
      items = Array.new(3_000) { |i| ["item #{i}"] }
      (@kept ||= []).concat(items.first(500).map(&:first))
    end

    # allocate reached from a second call path.
    def restock = allocate

    def call(env)
      case env["PATH_INFO"]
      when "/alloc" then allocate
      when "/restock" then restock
      when "/slow" then slow_path
      when "/fast" then fast_path
      when "/io" then sleep(0.01)
      when "/meet" then meet
      when %r{\A/users/} then Rperf.label(note: XSS_LABEL) { send(XSS_FRAME) }
      end
      [200, { "content-type" => "text/plain" }, ["ok\n"]]
    end
  end

  def setup
    skip "chromium is not installed (script/bootstrap consumers)" unless File.executable?(ENV.fetch("CHROMIUM", "/usr/bin/chromium"))
    skip "npm packages are not installed (script/bootstrap consumers)" unless File.directory?(File.join(RperfTestHelper::ROOT, "node_modules/playwright-core"))
  end

  # "12.3 ms" as shown by the page -> ns
  def duration_ns(text)
    value, unit = text.split
    value.to_f * { "s" => 1e9, "ms" => 1e6, "µs" => 1e3, "ns" => 1 }.fetch(unit)
  end

  def drive(port)
    4.times { %w[/slow /fast /io /users/12].each { |path| assert_equal "200", http_get(port, path).code } }
  end

  def test_every_view_renders_real_snapshots_offline
    shop = Shop.new
    viewer = Rperf::Viewer.new(Rperf::RackMiddleware.new(shop))
    result = nil
    before = after = nil
    with_puma(viewer) do |port|
      Rperf.start(mode: :wall, defer: true, aggregate: false)
      drive(port)
      viewer.add_snapshot(before = Rperf.stop)
      shop.slow_iterations *= 4
      Rperf.start(mode: :wall, defer: true)
      drive(port)
      viewer.add_snapshot(after = Rperf.stop)
      plan = { current: 2, base: 1, timelineSnapshot: 1, label: ["endpoint", "GET /slow"], frame: "#{Shop}#slow_path" }
      shots = ENV["RPERF_VIEWER_SCREENSHOTS"]
      out, err, status = Open3.capture3("node", File.join(RperfTestHelper::ROOT, "test/consumers/viewer_check.js"),
                                        "http://127.0.0.1:#{port}/rperf/", JSON.generate(plan), *shots, chdir: RperfTestHelper::ROOT)
      assert status.success?, "viewer_check.js failed:\n#{err}\n#{out}"
      result = JSON.parse(out.lines.last)
    end

    assert_empty result["external"], "requests outside 127.0.0.1"
    assert_empty result["errors"], "errors in the page"
    assert_empty result["dialogs"]
    assert_equal [1, 2], result["snapshots"]
    assert_equal 2, result["sparklineDots"]
    assert_includes result["requests"], "/rperf/assets/viewer.js"

    # Flame graph, icicle, top, tree, threads all drew something real.
    assert_operator result.dig("flame", "rendered"), :>, 10
    assert_includes result.dig("flame", "names"), "#{Shop}#slow_path"
    assert_includes result.dig("flame", "names"), "Rperf::RackMiddleware#call"
    assert_match(/#{Regexp.escape("#{Shop}#slow_path")} — .*ms \(/, result.dig("flame", "details"))
    assert_operator result.dig("icicle", "rendered"), :>, 10
    assert_operator result.dig("top", "self").size, :>=, 3
    assert_includes result.dig("top", "self").map { |row| row[4] }, "#{Shop}#slow_path", "among the 5 heaviest self times"
    totals = result.dig("top", "total").map { |row| duration_ns(row[2]) }
    assert_equal totals.sort.reverse, totals, "sorted by total"
    assert_operator result.dig("tree", "afterExpand"), :>, result.dig("tree", "before")
    assert_operator result.dig("tree", "collapsed"), :<, result.dig("tree", "before")
    # Threads: one row per thread of the snapshot, exactly the threads of its samples.
    assert_equal after[:aggregated_samples].map { |s| s[2] }.uniq.sort.map(&:to_s), result["threads"]

    # Filters: the shown total is exactly the weight of the matching samples.
    total = after[:aggregated_samples].sum { |s| s[1] }
    slow = weight_by_label(after, :endpoint)["GET /slow"]
    blocked = weight_labelled(after, "%GVL": "blocked")
    assert_in_delta total, result.dig("unfiltered", "total"), 1
    assert_in_delta total, result.dig("unfiltered", "shown"), 1
    assert_in_delta slow, result.dig("filtered", "totals", "shown"), 1
    assert_in_delta blocked, result.dig("blocked", "shown"), 1
    assert_operator blocked, :>, 0
    assert_in_delta total, result.dig("reset", "shown"), 1
    filtered_names = result.dig("filtered", "names")
    assert_includes filtered_names, "#{Shop}#slow_path"
    refute_includes filtered_names, "#{Shop}#fast_path"
    assert(result["labelOptions"].any? { |o| o.include?("note = #{XSS_LABEL}") }, "label values are shown as text: #{result['labelOptions'].inspect}")

    # Diff: the endpoint that got 4x slower is red, and first in the table.
    assert_operator result.dig("diff", "rendered"), :>, 10
    # (How red depends on how much of its time is new: on a loaded machine 4x the work is not
    # 4x the wall time, so only the hue is asserted.)
    red, green, blue = result.dig("diff", "fills", "#{Shop}#slow_path").scan(/\d+/).map(&:to_i)
    assert_equal [235, green], [red, blue], "slow_path is red in the diff: #{result.dig('diff', 'fills', "#{Shop}#slow_path")}"
    assert_operator green, :<, 215, "slow_path is red in the diff: #{result.dig('diff', 'fills', "#{Shop}#slow_path")}"
    first = result.dig("diff", "rows", 0)
    assert_equal "up", first["cls"], result.dig("diff", "rows").inspect + result.dig("diff", "summary")
    assert_equal "#{Shop}#slow_path", first["cells"][5]
    assert first["cells"][2].start_with?("+")

    # Timeline: rendered from raw samples; a dragged range narrows every view to it.
    before_total = before[:aggregated_samples].sum { |s| s[1] }
    assert_operator result.dig("timeline", "rendered"), :>, 10
    # Drawn from the model's bins (the payload's; under the label filter the page model's of the
    # rows, as in a file): each VM state's time is its raw samples' weight (each bin's ns rounded once).
    { "all" => nil, "filtered" => "GET /slow" }.each do |view, endpoint|
      assert_equal endpoint ? "rows" : "bins", result.dig("timeline", view, "source"), view
      drawn = result.dig("timeline", view, "threads") # without the idle ones the page hides
      refute_empty drawn
      rounding = drawn.size * Rperf::Viewer::Payload::BINS
      expected = timeline_state_ns(before) { |labels, seq| drawn.include?(seq) && (endpoint.nil? || labels[:endpoint] == endpoint) }
      expected.each { |state, ns| assert_in_delta ns, result.dig("timeline", view, "stateNs", state), rounding, "#{view} #{state}" }
    end
    assert_operator result.dig("timeline", "filtered", "stateNs", "running"), :<, result.dig("timeline", "all", "stateNs", "running")
    refute_nil result.dig("timeline", "range")
    t0, t1 = result.dig("timeline", "stateRange")
    in_range = before[:raw_samples].sum do |sample|
      w = sample[1]
      t = sample.last # raw entries end with their time
      [[t, t1].min - [t - w, t0].max, 0].max.then { |o| [o, w].min }
    end
    assert_in_delta in_range, result.dig("timeline", "totals", "shown"), [1e3, in_range * 1e-6].max
    assert_operator result.dig("timeline", "totals", "shown"), :<, 0.9 * before_total
    assert_operator result.dig("timeline", "flameInRange"), :>, 0
    assert_in_delta before_total, result.dig("timeline", "cleared", "shown"), 1

    # Profile text never became markup or code.
    assert_nil result.dig("xss", "flag")
    assert_equal 0, result.dig("xss", "imgs")
    assert_equal Rperf::Viewer::SCRIPTS.size, result.dig("xss", "scripts"), "the page's own scripts only"
  end

  # Issues 17 and 18 in the browser: the call-tree tab shows Rperf::CallTree's totals under each
  # filter (the page asks the server for the filtered tree), and a profile recorded with
  # allocations: 64 has an Allocations view with the profile's totals, allocated and retained;
  # one without allocation samples says how to record them.
  def test_call_tree_and_allocations_views
    shop = Shop.new
    # Four slow requests of ~30 ms each, not ~8: at load 10 the timer thread waited long enough
    # for a whole short slow_path to end between two ticks, and its time went to the next
    # sample's stack (the request's end), so GET /slow's tree had no slow_path to show.
    shop.slow_iterations *= 4
    viewer = Rperf::Viewer.new(Rperf::RackMiddleware.new(shop))
    data = result = nil
    with_puma(viewer) do |port|
      Rperf.start(mode: :wall, defer: true)
      drive(port)
      viewer.add_snapshot(Rperf.stop)
      Rperf.start(mode: :wall, defer: true, allocations: 64, retained: true)
      drive(port)
      3.times { assert_equal "200", http_get(port, "/alloc").code }
      2.times { assert_equal "200", http_get(port, "/restock").code } # the same allocating code, another path
      # at least two server threads in the profile, for the thread filter
      assert_equal %w[200 200], Array.new(2) { Thread.new { http_get(port, "/meet").code } }.map(&:value)
      viewer.add_snapshot(data = Rperf.stop)
      # Hand-built, with frames Native::Profile refuses: no profile to show, and the page says why.
      viewer.add_snapshot({ mode: :wall, frequency: 1000, aggregated_samples: [[[[1, 2]], 10, 1, 0]], label_sets: [{}] })
      by_thread = data[:aggregated_samples].group_by { |s| s[2] }.transform_values { |ss| ss.sum { |s| s[1] } }
      plan = { alloc: true, current: 2, other: 1, labels: [["endpoint", "GET /slow"], ["%GVL", "blocked"]],
               thread: by_thread.max_by { |_, w| w }[0], allocLabel: ["endpoint", "GET /alloc"],
               broken: 3 }
      out, err, status = Open3.capture3("node", File.join(RperfTestHelper::ROOT, "test/consumers/viewer_check.js"),
                                        "http://127.0.0.1:#{port}/rperf/", JSON.generate(plan), *ENV["RPERF_VIEWER_SCREENSHOTS"],
                                        chdir: RperfTestHelper::ROOT)
      assert status.success?, "viewer_check.js failed:\n#{err}\n#{out}"
      result = JSON.parse(out.lines.last)
      result["plan"] = plan
    end
    assert_empty result["external"], "requests outside 127.0.0.1"
    # Chromium logs the broken snapshot's refusal (422, its route's answer) itself.
    refused = "Failed to load resource: the server responded with a status of 422 (Unprocessable Content)"
    assert_includes result["errors"], refused
    assert_empty result["errors"] - [refused], "errors in the page"

    # Call tree: the root's total is CallTree's, and its rows add up to it, under each filter.
    tree = Rperf::CallTree.new(data)
    assert_equal tree.total_ns, result.dig("tree", "all", "total")
    assert_equal tree.total_ns, result.dig("tree", "all", "top")
    assert_includes result.dig("tree", "all", "names"), "Rperf::RackMiddleware#call"
    assert_match(/calls below 0\.1% of the total are left out/, result.dig("tree", "all", "note"))
    [{ endpoint: "GET /slow" }, { "%GVL" => "blocked" }].each_with_index do |filter, i|
      expected = Rperf::CallTree.new(data, filter: filter).total_ns
      assert_operator expected, :>, 0, filter.inspect
      assert_equal expected, result.dig("tree", "labels", i, "total"), filter.inspect
      assert_equal expected, result.dig("tree", "labels", i, "top"), filter.inspect
    end
    assert_includes result.dig("tree", "labels", 0, "names"), "#{Shop}#slow_path"
    refute_includes result.dig("tree", "labels", 0, "names"), "#{Shop}#fast_path"
    assert_includes result.dig("tree", "labels", 1, "names"), "[GVL blocked]"
    assert_equal 16, result.dig("tree", "cached"), "the page keeps the last 16 filtered views"
    thread = result.dig("plan", :thread)
    per_thread = Rperf::CallTree.new(data, threads: :separate).root.children.find { |n| n.name == "[thread #{thread}]" }
    assert_equal per_thread.total_ns, result.dig("tree", "thread", "total")
    assert_equal per_thread.total_ns, result.dig("tree", "thread", "top")
    assert_operator per_thread.total_ns, :<, tree.total_ns
    assert_equal tree.total_ns, result.dig("tree", "reset", "total")
    refute(result["requests"].any? { |r| r.end_with?("/call_tree") }, "the page computes its trees")

    # Allocations: the profile's totals, the class as the leaf frame, a table by site (the leaf
    # function, whichever path reached it) and class.
    rows = data[:allocation_samples]
    allocated = result["allocated"]
    assert_equal rows.sum { |r| r[1] }, allocated["allocated"]
    assert_equal rows.sum { |r| r[5] }, allocated["retained"]
    assert_operator allocated["retained"], :>, 0
    assert_operator allocated["rendered"], :>, 5
    assert_includes allocated["names"], "String"
    assert_includes allocated["names"], "#{Shop}#allocate"
    first = allocated["rows"].first
    sites = rows.group_by { |r| [r[0].first.first(2), r[4]] }.transform_values { |rs| rs.sum { |r| r[1] } }
    heaviest = sites.values.max
    paths = rows.select { |r| r[0].first.first(2) == sites.key(heaviest)[0] && r[4] == sites.key(heaviest)[1] }.map { |r| r[0].size }.uniq
    assert_operator paths.size, :>, 1, "the heaviest site is reached from two paths"
    assert_equal heaviest.to_s.reverse.scan(/\d{1,3}/).join(",").reverse, first[0], "sorted by objects allocated: #{allocated['rows']}"
    retained = result["retained"]
    assert_equal allocated["retained"], retained["retained"]
    counts = retained["rows"].map { |r| r[2].delete(",").to_i }
    assert_equal counts.sort.reverse, counts, "sorted by objects retained"
    assert_equal "String", retained["rows"].first[4]
    labelled = rows.select { |r| label_value(data[:label_sets][r[3]], :endpoint) == "GET /alloc" }
    assert_equal labelled.sum { |r| r[1] }, result.dig("labelled", "allocated")
    assert_equal labelled.sum { |r| r[5] }, result.dig("labelled", "retained")
    assert_operator result.dig("labelled", "allocated"), :<, allocated["allocated"]

    assert_match(/snapshot #3: cannot show the profile: .*must be Strings/, result.dig("broken", "status"))
    assert_match(/cannot show the profile/, result.dig("broken", "entry"))

    # A profile without allocation samples: how to record them.
    assert_includes result.dig("none", "text"), "rperf record --alloc"
    assert_equal 0, result.dig("none", "rendered")
    assert result.dig("none", "tableHidden")
  end

  # The methods tab in the browser is Rperf::MethodTable's (ruby-prof's method view): a row per
  # method with its self and total, sortable by either; clicking validate shows its two callers
  # (process and save) above it and its callee below, with the table's times and shares; a
  # caller's row opens the caller's graph; under a label and a thread filter the page shows the
  # server's table of those samples.
  def test_methods_view
    checkout = Checkout.new
    data = Rperf.start(mode: :wall) do
      worker = Thread.new { Rperf.label(role: "worker") { checkout.write } }
      Rperf.label(endpoint: "POST /checkout") { checkout.process }
      checkout.write
      worker.join
    end
    worker = data[:aggregated_samples].find { |s| label_value(data[:label_sets][s[3]], :role) }[2]
    viewer = Rperf::Viewer.new(nil)
    viewer.add_snapshot(data)
    plan = { methods: true, method: "#{Checkout}#validate", caller: "#{Checkout}#save", label: ["endpoint", "POST /checkout"], thread: worker }
    result = nil
    with_puma(viewer) do |port|
      out, err, status = Open3.capture3("node", File.join(RperfTestHelper::ROOT, "test/consumers/viewer_check.js"),
                                        "http://127.0.0.1:#{port}/rperf/", JSON.generate(plan), *ENV["RPERF_VIEWER_SCREENSHOTS"],
                                        chdir: RperfTestHelper::ROOT)
      assert status.success?, "viewer_check.js failed:\n#{err}\n#{out}"
      result = JSON.parse(out.lines.last)
    end
    assert_empty result["external"], "requests outside 127.0.0.1"
    assert_empty result["errors"], "errors in the page"
    methods = result["methods"]

    table = Rperf::MethodTable.new(data)
    before = methods["before"]
    assert_equal table.total_ns, before["total"]
    assert_equal method_rows(table), shown_rows(before), "every method, MethodTable's numbers and order"
    assert_includes before["rows"].map { |r| r["name"] }, "[GVL blocked]"
    assert_match(/methods below 0\.1% of the total are left out/, before["note"])
    assert before["hint"]
    assert before.dig("graph", "hidden"), "no method selected yet"
    by_self = methods["bySelf"].map { |r| r["self"] }
    assert_equal by_self.sort.reverse, by_self, "sorted by self"
    assert_equal method_rows(table).sort, methods["bySelf"].map { |r| r.values_at("name", "self", "total") }.sort

    validate = table["#{Checkout}#validate"]
    assert_equal %W[#{Checkout}#save #{Checkout}#process].sort, validate.callers.map { |a| a.method.name }.sort
    selected = methods["selected"]
    assert_equal validate.name, selected.dig("graph", "method")
    refute selected["hint"]
    assert_equal [true], selected["rows"].select { |r| r["name"] == validate.name }.map { |r| r["selected"] }
    assert_graph table, validate.name, selected["graph"], "callers above, callees below, as MethodTable says"
    save = table["#{Checkout}#save"]
    assert_equal save.name, methods.dig("caller", "method")
    assert_graph table, save.name, methods["caller"]

    labelled = Rperf::MethodTable.new(data, filter: { endpoint: "POST /checkout" })
    assert_operator labelled.total_ns, :<, table.total_ns
    assert_equal labelled.total_ns, methods.dig("label", "total")
    assert_equal method_rows(labelled), shown_rows(methods["label"])
    assert_graph labelled, validate.name, methods.dig("label", "graph"), "the selection stays"
    refute(result["requests"].any? { |r| r.end_with?("/method_table") }, "the page computes its tables")

    worker_table = Rperf::MethodTable.new(data.merge(aggregated_samples: data[:aggregated_samples].select { |s| s[2] == worker }))
    assert_equal worker_table.total_ns, methods.dig("thread", "total")
    assert_equal method_rows(worker_table), shown_rows(methods["thread"])
    refute_includes methods.dig("thread", "rows").map { |r| r["name"] }, validate.name, "the worker only writes"
    assert methods.dig("thread", "graph", "hidden")
    assert_equal shown_rows(before), shown_rows(methods["reset"])
  end

  BIG_ROWS = 500_000

  VM_STATES = %w[running blocked wait gc].freeze # the page's STATES (TimelineState)

  # The page's tabs (its buttons' data-tab), in order.
  def page_tabs = File.read(File.join(Rperf::Viewer::ASSET_DIR, "index.html")).scan(/<section id="tab-(\w+)"/).flatten

  # Per VM state, the ns of the model's Timeline bins (Native::Profile#timeline_bins) of the
  # samples with the label (a [key, value], as the page's filter).
  def model_state_ns(data, label: nil)
    states = VM_STATES
    out = states.to_h { |state| [state, 0] }
    native = Rperf::Storage.native(data)
    select = {}
    if label
      sets = native.label_sets.map { |set| Rperf::Viewer::Payload.string_labels(set) }
      select[:label_sets] = Rperf::Native.matching_label_sets(sets, label: [label[0], [label[1]]])
    end
    native.timeline_bins(Rperf::Viewer::Payload::BINS, native.attribute(:duration_ns), select)[:threads].each do |_, per_state|
      per_state.each_with_index { |bins, i| out[states[i]] += bins.sum if bins }
    end
    out
  end

  # Per VM state (the page's STATES), the weight of the raw samples whose labels (and thread) the
  # block keeps. A recorded sample's state is its 5th element (0 running, 1 GVL blocked, 2 GVL
  # wait, 3/4 GC), a hand-built one's its label set's.
  def timeline_state_ns(data)
    sets = data[:label_sets] || [{}]
    states = VM_STATES
    out = states.to_h { |state| [state, 0] }
    data[:raw_samples].each do |sample|
      set = sets[sample[3].to_i] || {}
      next unless yield(set.transform_keys(&:to_sym), sample[2]) if block_given?

      recorded = sample.size == 6 ? sample[4].to_i : 0
      state = recorded.positive? ? [recorded, 3].min : label_state(set)
      out[states[state]] += sample[1]
    end
    out
  end

  # A label set's VM state as an index into VM_STATES: GVL blocked, GVL
  # wait, any GC label, else running.
  def label_state(set)
    labels = set.to_h { |k, v| [k.to_s, v.to_s] }
    return 1 if labels["%GVL"] == "blocked"
    return 2 if labels["%GVL"] == "wait"

    labels.key?("%GC") ? 3 : 0
  end

  # Issue 27: the Timeline threw "Maximum call stack size exceeded" above ~120k timeline rows
  # (Math.max(...rows)). 500k rows: every tab renders without a page error, the timeline has
  # them all, a dragged range narrows the header and the call tree to exactly its samples.
  # An empty snapshot taken after it (an idle interval) is listed, greyed, but not opened.
  def test_half_a_million_timeline_rows
    data = big_profile(BIG_ROWS)
    viewer = Rperf::Viewer.new(nil, max_timeline: BIG_ROWS)
    viewer.add_snapshot(data)
    viewer.add_snapshot({ mode: :wall, frequency: 1000, sampling_count: 0, duration_ns: 60_000_000_000,
                          aggregated_samples: [], label_sets: [{}] })
    result = nil
    with_puma(viewer) do |port|
      out, err, status = Open3.capture3("node", File.join(RperfTestHelper::ROOT, "test/consumers/viewer_check.js"),
                                        "http://127.0.0.1:#{port}/rperf/", JSON.generate(big: true, tabs: ENV["RPERF_BIG_TABS"]&.split(",")), chdir: RperfTestHelper::ROOT)
      assert status.success?, "viewer_check.js failed:\n#{err}\n#{out}"
      result = JSON.parse(out.lines.last)
    end
    assert_empty result["errors"], "errors in the page"
    assert_empty result["external"]
    assert_equal page_tabs.sort, result["tabs"].keys.sort, "every tab switched to" unless ENV["RPERF_BIG_TABS"]
    assert_equal 1, result["opened"], "the newest snapshot with samples, not the empty one after it"
    assert_equal [1, 2], result["rows"].map { |r| r["id"] }
    assert_includes result.dig("rows", 1, "cls"), "empty"
    assert_includes result.dig("rows", 1, "text"), "no samples"
    assert_equal BIG_ROWS, result.dig("timeline", "rows")
    assert_operator result.dig("timeline", "rendered"), :>, 100
    # The Timeline tab drew the model's bins (the rows, loaded by the stack chart the page model
    # merges from them, are not binned again).
    assert_equal "bins", result.dig("timeline", "source")
    assert_equal true, result.dig("timeline", "rowsLoaded")
    timeline_state_ns(data).each do |state, ns|
      assert_in_delta ns, result.dig("timeline", "stateNs", state), 4 * Rperf::Viewer::Payload::BINS, state
    end

    t0, t1 = result.dig("timeline", "stateRange")
    in_range = data[:raw_samples].sum do |_, w, _, _, t|
      [[t, t1].min - [t - w, t0].max, 0].max.then { |o| [o, w].min }
    end
    total = data[:aggregated_samples].sum { |s| s[1] }
    assert_operator in_range, :<, total / 2
    assert_in_delta in_range, result.dig("timeline", "totals", "shown"), 1e3
    assert_in_delta total, result.dig("timeline", "totals", "total"), 1
    assert_in_delta in_range, result["treeInRange"], 4 * 2, "the call tree of the range (from/to rounded to whole ns)"
    assert_operator result["flameInRange"], :>, 3
    # The stack chart of the busiest thread that is not idle (all are busy: the first): its
    # 125,000 samples, one cell per change of stack (the server merged them).
    stack_thread = result.dig("stack", "thread")
    assert_equal 1, stack_thread
    assert_equal data[:raw_samples].sum { |s| s[2] == stack_thread ? s[1] : 0 }, result.dig("stack", "total")
    assert_equal page_view(data, "stack_chart", thread: 1, max_timeline: BIG_ROWS)["x"].size, result.dig("stack", "cells")
    timings = result["tabs"].map { |tab, ms| "#{tab} #{ms} ms" }.join(", ")
    puts "\n#{BIG_ROWS} timeline rows: first render #{result['firstRender']} ms; #{timings}" if ENV["VERBOSE"] || ENV["RPERF_TIMINGS"]
  end

  # Issue 27's crash in the --html file: 500,000 timeline rows in a file written by
  # Viewer.static_html (all of them: max_timeline). Every tab draws with no error in the page or
  # its console; the Timeline draws the file's bins, and under a label filter (no bins in the
  # file) reads the 500,000 rows and bins them with the page model (TimelineBinner in
  # WebAssembly, the server's binning): each VM state's time is exactly the weight of the
  # label's raw samples, as the model's bins say.
  def test_half_a_million_timeline_rows_in_a_file
    data = big_profile(BIG_ROWS, endpoints: true)
    result = size = nil
    Dir.mktmpdir("rperf-big") do |dir|
      path = File.join(dir, "big.html")
      File.write(path, Rperf::Viewer.static_html(data, title: "big", max_timeline: BIG_ROWS))
      size = File.size(path)
      out, err, status = Open3.capture3("node", File.join(RperfTestHelper::ROOT, "test/consumers/viewer_check.js"),
                                        "file://#{path}", JSON.generate(bigFile: true, label: ["endpoint", "GET /a"]), chdir: RperfTestHelper::ROOT)
      assert status.success?, "viewer_check.js failed:\n#{err}\n#{out}"
      result = JSON.parse(out.lines.last)
    end
    assert_empty result["errors"], "errors in the page or its console"
    assert_empty result["external"]
    assert_equal page_tabs.sort, result["tabs"].keys.sort, "every tab switched to"

    # What each tab drew (a file holds no other snapshot, no allocations, no sandwich, no source).
    total = data[:aggregated_samples].sum { |s| s[1] }
    shows = result["shows"]
    assert_operator shows["flame"], :>, 3
    assert_operator shows["icicle"], :>, 3
    assert_equal page_view(data, "stack_chart", thread: 1, max_timeline: BIG_ROWS)["x"].size, shows["stack"], "thread 1's cells"
    # Top is the method table's entries by self time, ties in the table's order (total, then
    # name): the four stacks' leaves, 125 s each (IO#read's time is all off the GVL, the table's
    # [GVL blocked] leaf, as the flame graph draws it), Worker#run first (500 s in total); then
    # main and IO#read with none.
    assert_equal ["Worker#run", "Worker#parse", "Worker#render", "[GVL blocked]", "Object#main", "IO#read"], shows["top"]
    assert_equal total, shows["tree"]
    assert_equal total, shows["inverted"]
    assert_equal total, shows["methods"]
    assert_equal 4, shows["threads"]
    assert_operator shows["timeline"], :>, 100
    assert_match(/\APick a method/, shows["sandwich"])
    assert_match(/\APin a frame/, shows["source"])
    assert_equal "There is no other snapshot to compare with.", shows["diff"]
    assert_match(/no allocation samples/, shows["alloc"])

    # Every sample: the file's bins (each bin's ns rounded once by the model).
    timeline = result["timeline"]
    assert_equal "bins", timeline["source"]
    assert_equal true, timeline["rowsLoaded"], "the stack chart's rows"
    assert_equal [1, 2, 3, 4], timeline["threads"]
    assert_equal model_state_ns(data), timeline["stateNs"]
    timeline_state_ns(data).each do |state, ns|
      assert_in_delta ns, timeline.dig("stateNs", state), 4 * Rperf::Viewer::Payload::BINS, state
    end
    # endpoint = GET /a: the page binned the rows; exactly the label's samples per state, which
    # are the model's bins of that filter.
    filtered = result["filtered"]
    expected = timeline_state_ns(data) { |labels, _| labels[:endpoint] == "GET /a" }
    assert_equal({ "running" => 187_500_000_000, "blocked" => 62_500_000_000, "wait" => 0, "gc" => 0 }, expected)
    assert_equal expected, model_state_ns(data, label: ["endpoint", "GET /a"])
    assert_equal "rows", filtered["source"]
    assert_equal BIG_ROWS, filtered["rows"]
    assert_equal [1, 2, 3, 4], filtered["threads"]
    assert_equal expected, filtered["stateNs"]
    assert_operator filtered["rendered"], :>, 100
    assert_equal({ "shown" => expected.values.sum, "total" => total }, filtered["totals"])

    timings = result["tabs"].map { |tab, ms| "#{tab} #{ms} ms" }.join(", ")
    if ENV["VERBOSE"] || ENV["RPERF_TIMINGS"]
      puts "\n#{BIG_ROWS} timeline rows, --html file of #{(size / 1e6).round(1)} MB: first render #{result['firstRender']} ms; #{timings}; " \
           "Timeline under endpoint = GET /a (rows binned by the page) #{result['filteredMs']} ms"
    end
  end

  # Issue 25: window.RPERF_DATA_SOURCE, as rperf 0.11's page has it. A page of the user's own
  # (our index.html with the assets of a Viewer mounted at /viewer, and a script of theirs before
  # viewer.js) reads its list and snapshot from a store of its own; the snapshot's signed URL
  # answers 403 until the onAuthError hook gives a new one; the store holds rperf 0.11's body
  # shape (Viewer.samples_to_json). The Viewer's own (empty) list is never asked for.
  def test_rperf_data_source_list_snapshot_urls_and_auth_hook
    data = Rperf.start(mode: :cpu) do
      shop = Shop.new
      3.times { shop.slow_path }
      shop.fast_path
    end
    samples, label_sets = Rperf::Viewer.samples_to_json(data[:aggregated_samples], data[:label_sets])
    entry = { id: 7, taken_at: Time.now.utc.iso8601, file: nil, mode: "cpu", duration_ns: data[:duration_ns],
              sampling_count: data[:sampling_count], meta: nil, summary: nil }
    body = JSON.generate(entry.merge(frequency: data[:frequency], samples: samples, label_sets: label_sets))
    source = <<~JS
      window.RPERF_DATA_SOURCE = {
        listUrl: function () { return '/store/list'; },
        snapshotUrl: function (id) { return '/store/snapshot/' + id + '?sig=expired'; },
        onAuthError: async function (url) { window.authErrors = (window.authErrors || 0) + 1; return url.replace('expired', 'fresh'); },
      };
    JS
    page = File.read(File.join(Rperf::Viewer::ASSET_DIR, "index.html"))
                .gsub(/(src|href)="assets\//, '\1="/viewer/assets/')
                .sub('<script src="/viewer/assets/viewer_state.js">', '<script src="/host/source.js"></script>\n<script src="/viewer/assets/viewer_state.js">')
    viewer = Rperf::Viewer.new(nil, path: "/viewer")
    snapshot_queries = []
    host = lambda do |env|
      json = { "content-type" => "application/json" }
      case env["PATH_INFO"]
      when "/host/" then [200, { "content-type" => "text/html" }, [page]]
      when "/host/source.js" then [200, { "content-type" => "text/javascript" }, [source]]
      when "/store/list" then [200, json, [JSON.generate([entry])]]
      when "/store/snapshot/7"
        snapshot_queries << env["QUERY_STRING"]
        env["QUERY_STRING"] == "sig=fresh" ? [200, json, [body]] : [403, { "content-type" => "text/plain" }, ["expired"]]
      else viewer.call(env)
      end
    end
    result = nil
    with_puma(host) do |port|
      out, err, status = Open3.capture3("node", File.join(RperfTestHelper::ROOT, "test/consumers/viewer_check.js"),
                                        "http://127.0.0.1:#{port}/host/", JSON.generate(source: true), chdir: RperfTestHelper::ROOT)
      assert status.success?, "viewer_check.js failed:\n#{err}\n#{out}"
      result = JSON.parse(out.lines.last)
    end
    # Chromium logs the expected 403 itself; nothing else may go wrong.
    assert_equal ["Failed to load resource: the server responded with a status of 403 (Forbidden)"], result["errors"]
    assert_empty result["external"]
    assert_equal %w[sig=expired sig=fresh], snapshot_queries, "one 403, then the URL the hook gave"
    refute_includes result["requests"], "/viewer/snapshots", "the Viewer's own list is not asked for"
    assert_includes result["requests"], "/store/list"
    assert_equal 7, result["opened"]
    assert_equal [7], result["rows"].map { |r| r["id"] }
    total = data[:aggregated_samples].sum { |s| s[1] }
    assert_in_delta total, result.dig("totals", "total"), 1
    assert_includes result.dig("flame", "names"), "#{Shop}#slow_path"
    assert_match(/rperf 0\.11's format/, result["tree"], "no call tree from names only, and it says so")
    refute_includes result.dig("stackTab", "cls"), "unavailable"
    assert_match(/has no timestamps/, result["stack"], "names only: no raw samples")
  end

  # Issue 30 (10): "<!--<script" in a profile's strings made the HTML parser skip the data
  # element's "</script>" (script data double-escaped state): the page stayed at "loading…".
  # The data holds no "<" at all now; the page renders with any string.
  def test_static_html_embeds_any_string
    hostile = ["<!--<script>", "</script><!--", "line\u2028sep\u2029"]
    data = Rperf.start(mode: :wall) do
      hostile.each { |v| Rperf.label(tag: v) { burn_cpu(0.02) } }
    end
    # A tag can be in several sets: GVL waits and GC inside its block add %GVL/%GC to it (under
    # load, "</script><!--" was in three).
    assert_equal hostile.sort, data[:label_sets].filter_map { |set| set[:tag] || set["tag"] }.uniq.sort
    Dir.mktmpdir("rperf-static") do |dir|
      path = File.join(dir, "profile.html")
      html = Rperf::Viewer.static_html(data, title: "<!--<script>")
      File.write(path, html)
      embedded = html[%r{<script id="rperf-data" type="application/json">(.*?)</script>}m, 1]
      refute_includes embedded, "<"
      strings = []
      walk = ->(v) { v.is_a?(Hash) ? v.each { |k, x| walk.(k) || walk.(x) } : v.is_a?(Array) ? v.each(&walk) : (strings << v if v.is_a?(String)) && nil }
      walk.(JSON.parse(embedded))
      hostile.each { |v| assert_includes strings, v, "the page's data holds the string as it is" }
      out, err, status = Open3.capture3("node", File.join(RperfTestHelper::ROOT, "test/consumers/viewer_check.js"),
                                        "file://#{path}", JSON.generate(static: true), chdir: RperfTestHelper::ROOT)
      assert status.success?, "viewer_check.js failed:\n#{err}\n#{out}"
      result = JSON.parse(out.lines.last)
      assert_equal [], result["errors"]
      assert_operator result["flame"], :>, 3, "the page rendered"
      assert_equal "<!--<script>", result["title"]
    end
  end

  # Rperf::Viewer.static_html: one file, no server, no request at all, the same views.
  def test_static_html_file_renders_offline
    data = Rperf.start(mode: :wall, aggregate: false, allocations: 64) do
      shop = Shop.new
      shop.allocate
      3.times { shop.slow_path; sleep 0.005 }
      shop.send(XSS_FRAME)
    end
    Dir.mktmpdir("rperf-static") do |dir|
      path = File.join(dir, "profile.html")
      File.write(path, Rperf::Viewer.static_html(data, title: "</title><script>window.__xss=3</script>"))
      html = File.read(path)
      assert_match(/<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'sha256-/, html)
      refute html.match?(/<(script|link|img)\s[^>]*\b(src|href)=/), "nothing is loaded from elsewhere"
      out, err, status = Open3.capture3("node", File.join(RperfTestHelper::ROOT, "test/consumers/viewer_check.js"),
                                        "file://#{path}", JSON.generate(static: true, method: "#{Shop}#slow_path"), chdir: RperfTestHelper::ROOT)
      assert status.success?, "viewer_check.js failed:\n#{err}\n#{out}"
      result = JSON.parse(out.lines.last)
      assert_equal [], result["external"]
      assert_equal [], result["errors"]
      assert_operator result["flame"], :>, 3
      assert_operator result["icicle"], :>, 3
      assert_operator result["timeline"], :>, 3
      assert_operator result["top"], :>, 3
      assert_operator result.dig("alloc", "rendered"), :>, 3
      assert_equal data[:allocation_samples].sum { |r| r[1] }, result.dig("alloc", "allocated")
      # The methods tab works from the file's own table (MethodTable of every sample).
      table = Rperf::MethodTable.new(data)
      assert_equal method_rows(table), shown_rows(result["methods"])
      assert_graph table, "#{Shop}#slow_path", result.dig("methods", "selected")
      assert_equal "</title><script>window.__xss=3</script>", result["title"], "the title is text"
    end
    assert_raises(ArgumentError) { Rperf::Viewer.static_html({}) }
  end
end
