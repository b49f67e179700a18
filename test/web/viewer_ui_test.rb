# frozen_string_literal: true

require_relative "web_helper"
require "rperf/viewer"
require_relative "ui_profile"

# Issue 27: the viewer's navigation in headless Chromium (test/consumers/viewer_ui_check.js),
# on a generated profile with known totals, in a file written by Rperf::Viewer.static_html:
# the flame graph fits the window and zooms (wheel, drag, click, breadcrumb, keys), the search
# highlights and weighs its matches, "hide idle threads" drops the samples that only waited, the
# stack chart lays a thread's samples out in time, frames are coloured by category, ? lists
# the keys, and the address reopens the view.
#
# The README's screenshots: RPERF_VIEWER_SCREENSHOTS=DIR makes the checkers write PNGs to DIR,
# copied by hand to docs/: nav's search.png, stack.png, bottom-up.png and help.png
# (viewer-flame-search, -stack-chart, -bottom-up, -keys), sandwich.png, tags' tagroot.png and
# pin.png, transforms' focus.png (viewer-transform-focus), viewer_source_test's source.png, and
# viewer_browser_test's test_every_view_renders_real_snapshots_offline timeline.png.
class ViewerUiTest < Minitest::Test
  include RubyIndependentTest
  include WebTestHelper
  include UiProfile

  def setup
    skip "chromium is not installed (script/bootstrap consumers)" unless File.executable?(ENV.fetch("CHROMIUM", "/usr/bin/chromium"))
    skip "npm packages are not installed (script/bootstrap consumers)" unless File.directory?(File.join(RperfTestHelper::ROOT, "node_modules/playwright-core"))
  end

  def test_navigation_search_idle_threads_stack_chart_and_address
    result = run_file_check(Rperf::Viewer.static_html(profile, title: "ui"), "nav")
    assert_empty result["errors"], "errors in the page"
    assert_empty result["external"]
    total = 260 * MS

    # Fits the window: the graph (84 rows, 1,512 px) scrolls in a box that ends on screen, and
    # the root is in view at the box's bottom.
    fit = result["fit"]
    assert_operator fit["scrollHeight"], :>, fit["clientHeight"], "the graph is taller than its box"
    assert_operator fit["bottom"], :<=, fit["windowHeight"]
    assert_operator fit["rootTop"], :>=, fit["boxTop"]
    assert_operator fit["rootBottom"], :<=, [fit["boxBottom"], fit["windowHeight"]].min
    assert_equal "Object#main — 160.0 ms (61.5%) — #{APP}", result.dig("details", "text")
    assert_operator result.dig("details", "bottom"), :<=, fit["windowHeight"]
    assert_equal [0, total], result.dig("initial", "view")
    # A file transforms its profile as a served page does (test_transforms_*).
    assert_equal false, result.dig("transformsDisabled", "disabled")

    # Categories and their colours.
    cats = result["categories"]
    assert_equal %w[app app gem stdlib native native gem gvl-blocked],
                 ["Shop#price", "Object#main", "JSON.generate", "Set#add", "Integer#times", "IO.select", "Puma::Server#handle_servers", "[GVL blocked]"].map { |n| cats[n] }
    fills = result["fills"]
    assert_equal 5, fills.values_at("Shop#price", "JSON.generate", "Set#add", "Integer#times", "[GVL blocked]").map { |c| c[/\Ahsl\((\d+)/, 1] }.uniq.size,
                 "one hue per category: #{fills}"
    assert_includes result["legend"], "gvl-wait"
    assert_includes result["legend"], "gem"

    # Click: the view is the frame's 130 ms; the breadcrumb leads back.
    assert_equal "Shop#checkout", result.dig("clicked", "zoom")
    assert_equal 130 * MS, result.dig("clicked", "view").then { |a, b| b - a }
    assert_equal ["all", "Object#main", "Shop#checkout"], result.dig("clicked", "crumbs")
    assert_equal "Object#main", result.dig("crumbClicked", "zoom")
    assert_equal 160 * MS, result.dig("crumbClicked", "view").then { |a, b| b - a }
    assert_equal [0, total], result.dig("reset", "view")
    # The wheel zooms in around the pointer (a quarter of the way in), a drag pans right.
    w0, w1 = result.dig("wheeled", "view")
    assert_operator w1 - w0, :<, total / 2
    assert_operator w0, :<, total / 4
    assert_operator w1, :>, total / 4
    d0, d1 = result.dig("dragged", "view")
    assert_operator d0, :>, w0
    assert_in_delta w1 - w0, d1 - d0, 2
    assert_equal [0, total], result.dig("keyReset", "view")
    assert_equal total / 2, result.dig("keyZoom", "view").then { |a, b| b - a }

    # Search: the samples with Shop#price (60 ms of 260), its frames highlighted, the rest dimmed.
    assert_equal "search", result["searchFocused"]
    assert_equal 60 * MS, result.dig("search", "info", "ns")
    assert_equal "matches 60.0 ms (23.1% of shown)", result.dig("search", "info", "text")
    assert_equal ["Shop#price"], result.dig("search", "matched").uniq
    assert_operator result.dig("search", "dimmed"), :>, 5
    assert_equal ["Shop#price"], result["topMatches"]
    # The bottom-up tree (built natively, InvertedTreePayload): each running function with its
    # time, heaviest first; under Shop#price its only caller.
    assert_equal [["IO.select", 100 * MS], ["Shop#price", 60 * MS], ["Deep#recurse", 50 * MS], ["JSON.generate", 20 * MS]],
                 result.dig("inverted", "roots").first(4)
    assert_equal [["Integer#times", 10 * MS], ["Kernel#sleep", 10 * MS], ["Set#add", 10 * MS]], result.dig("inverted", "roots").drop(4).sort
    assert_equal total, result.dig("inverted", "total")
    assert_includes result.dig("inverted", "matched"), "Shop#price"
    assert_equal [["Shop#checkout", 60 * MS]], result.dig("inverted", "priceCallers")
    assert_equal "price", result.dig("afterEscape", "value"), "Escape leaves the box, not the search"
    refute_equal "search", result.dig("afterEscape", "focused")

    # Hide idle threads: thread 2 (Puma's acceptor waiting in IO.select) goes; 160 ms remain.
    # Thread 1's 10 ms off the GVL in Integer#times are its own, not idle.
    assert_equal({ "shown" => 160 * MS, "total" => total }, result.dig("hidden", "totals"))
    assert_equal "show idle threads (1 hidden, 100.0 ms idle)", result.dig("hidden", "button")
    assert_equal 60 * MS, result.dig("hidden", "info")
    threads = result["threads"].to_h { |t| [t["thread"], t] }
    assert_equal "1.0000", threads["2"]["idle"]
    assert_equal "0.0000", threads["1"]["idle"]
    assert_includes threads["2"]["cls"], "hidden-idle"
    refute_includes threads["1"]["cls"], "hidden-idle"

    # The stack chart: thread 1, its frames where they were in time; one cell per stretch.
    stack = result["stack"]
    assert_equal 1, stack["thread"]
    assert_equal %w[1 3], stack["options"]
    assert_equal 100 * MS, stack["total"]
    names = stack["cells"].tally
    assert_equal 1, names["Object#main"]
    assert_equal 2, names["Shop#checkout"]
    assert_equal 2, names["Shop#price"]
    assert_equal 1, names["[GVL blocked]"]
    assert_equal 2, stack["matched"], "the search highlights here too"
    assert_equal "Object#main — 100.0 ms (100.0%) from 0 ns to 100.0 ms — #{APP}", stack["details"]
    assert_equal [60 * MS, 70 * MS], stack.dig("zoomed", "view")
    assert_equal "0 ns", stack["axis"].first
    assert_equal "100.0 ms", stack["axis"].last

    refute result.dig("help", "hidden")
    assert_includes result.dig("help", "text"), "search frames"
    assert result["helpAfterEscape"]

    # A new page at the address: the same tab, search, hidden threads and totals.
    assert_includes result["hash"], "q=price"
    assert_match(/&zoom=#{60 * MS}_#{70 * MS}_\d+\z/, result["hash"], "the stack chart's zoom to Set#add")
    assert_equal({ "tab" => "stack", "search" => "price", "matchedNs" => 60 * MS, "shownNs" => 160 * MS, "stackThread" => 1, "pressed" => "true",
                   "stackView" => "#{60 * MS},#{70 * MS}", "stackZoom" => "Set#add" },
                 result["reopened"])
  end

  # "Hide idle threads" leaves out the samples the model says are idle (profile/idle_wait.hh),
  # in every view: Puma's acceptor (thread 2) and its pool thread's wait for a request (70 ms of
  # thread 5) go; the busy I/O thread (thread 4, 90% off the GVL in IO#read) stays. Then an
  # endpoint set (GET /a and GET /c, then "not set" too) from the value menu. Served (the server's
  # views, per filter) and in a file (the payload's marks and bins, the file's charts).
  def test_hide_idle_and_endpoint_sets_served
    viewer = Rperf::Viewer.new(nil)
    viewer.add_snapshot(idle_profile)
    result = nil
    with_puma(viewer) { |port| result = run_check("http://127.0.0.1:#{port}/rperf/", "idle") }
    check_idle(result)
  end

  def test_hide_idle_and_endpoint_sets_in_a_file
    check_idle(run_file_check(Rperf::Viewer.static_html(idle_profile, title: "idle"), "idle"))
  end

  # What test/consumers/viewer_ui_check.js saw of the page at `url` doing `plan` (screenshots
  # into $RPERF_VIEWER_SCREENSHOTS when set).
  def run_check(url, plan, screenshots: true)
    out, err, status = Open3.capture3("node", File.join(RperfTestHelper::ROOT, "test/consumers/viewer_ui_check.js"),
                                      url, plan, *(ENV["RPERF_VIEWER_SCREENSHOTS"] if screenshots), chdir: RperfTestHelper::ROOT)
    assert status.success?, "viewer_ui_check.js failed:\n#{err}\n#{out}"
    JSON.parse(out.lines.last)
  end

  # run_check on the page `html`, as a file.
  def run_file_check(html, plan, **options)
    Dir.mktmpdir("rperf-ui") do |dir|
      path = File.join(dir, "page.html")
      File.write(path, html)
      run_check("file://#{path}", plan, **options)
    end
  end

  def check_idle(result)
    assert_empty result["errors"], "errors in the page"
    assert_empty result["external"]
    total = 410 * MS
    before = result["before"]
    assert_equal({ "shown" => total, "total" => total }, before["totals"])
    assert_equal({ "text" => "hide idle threads (170.0 ms idle)", "pressed" => "false", "idleNs" => 170 * MS }, before["button"])
    assert_includes before["flame"], "Thread::Mutex#sleep"

    hidden = result["hidden"]
    assert_equal({ "shown" => 240 * MS, "total" => total }, hidden["totals"])
    assert_equal({ "text" => "show idle threads (1 hidden, 170.0 ms idle)", "pressed" => "true", "idleNs" => 170 * MS }, hidden["button"])
    assert_empty hidden["flame"] & ["IO.select", "Puma::Server#handle_servers", "Thread::Mutex#sleep", "Thread::ConditionVariable#wait"]
    assert_empty ["IO#read", "Shop#download", "Puma::ThreadPool#spawn_thread", "Puma::Server#process_client"] - hidden["flame"]
    assert_includes hidden["hash"], "idle=hide"
    assert_equal [1, 3, 4, 5], hidden["threadOptions"], "the thread that only waited leaves the thread filter"
    # The Threads tab keeps every thread, with its idle share by the rule; thread 2 is greyed.
    assert_equal [[1, "0.0000", 0, false], [2, "1.0000", 100 * MS, true], [3, "0.0000", 0, false], [4, "0.0000", 0, false], [5, "0.7000", 70 * MS, false]],
                 hidden["threads"].map { |t| t.values_at("thread", "idle", "idleNs", "hidden") }
    # The Timeline: the bins of the samples that are not idle (the payload's, served or not).
    assert_equal "bins", hidden.dig("timeline", "source")
    assert_equal "1,3,4,5", hidden.dig("timeline", "threads")
    state_ns = hidden.dig("timeline", "stateNs")
    assert_in_delta 175 * MS, state_ns["running"], Rperf::Viewer::Payload::BINS
    assert_in_delta 65 * MS, state_ns["blocked"], Rperf::Viewer::Payload::BINS
    assert_equal [0, 0], state_ns.values_at("wait", "gc")
    # The stack chart: the busiest thread, and thread 5's request only.
    assert_equal({ "thread" => 1, "total" => 100 * MS, "options" => [1, 3, 4, 5] }, hidden["stack"])
    assert_equal({ "thread" => 5, "total" => 30 * MS, "options" => [1, 3, 4, 5] }, hidden["stack5"])
    # The trees and the table: the page model's of the rows shown, served or in a file.
    assert_equal [240 * MS] * 3, [hidden["tree"], hidden["inverted"], hidden["methods"].to_i]

    # One endpoint, then the set GET /a + GET /c (130 ms: none of it idle), then not set too.
    assert_equal({ "totals" => { "shown" => 100 * MS, "total" => total }, "select" => "endpoint = GET /a (100.0 ms)" }, result["one"])
    set = result["set"]
    assert_equal({ "shown" => 130 * MS, "total" => total }, set["totals"])
    assert_equal "endpoint = any of 2", set["select"]
    assert_equal "values (2)", set["summary"]
    assert_equal 130 * MS, set["tree"]
    # Not set: thread 3's sleep and thread 4 (60 ms not idle); the idle 170 ms stay hidden.
    unset = result["withUnset"]
    assert_equal({ "shown" => 190 * MS, "total" => total }, unset["totals"])
    assert_equal 190 * MS, unset["tree"]
    assert_equal "1,3,4,5", unset.dig("timeline", "threads")
    # The page model bins the rows under the label filter, served or in a file alike.
    assert_equal "rows", unset.dig("timeline", "source")
    assert_equal({ "running" => 125 * MS, "blocked" => 65 * MS, "wait" => 0, "gc" => 0 }, unset.dig("timeline", "stateNs"))
    %w[label=endpoint value=GET+%2Fa value=GET+%2Fc unset=1 idle=hide].each { |part| assert_includes unset["hash"], part }
    assert_equal({ "shownNs" => 190 * MS, "pressed" => "true", "select" => "endpoint = any of 3", "ticked" => ["GET /a", "GET /c", nil] },
                 result["reopened"])
    # h: the idle samples are back (under the set: 130 + 230 ms without an endpoint).
    assert_equal({ "totals" => { "shown" => 360 * MS, "total" => total },
                   "button" => { "text" => "hide idle threads (170.0 ms idle)", "pressed" => "false", "idleNs" => 170 * MS } }, result["shown"])
  end

  # The sandwich, served (the page model builds it per method and filter): the methods
  # tab's method, then a Shift+clicked frame's; the idle-thread filter applies to it.
  def test_sandwich_of_a_method
    viewer = Rperf::Viewer.new(nil)
    viewer.add_snapshot(profile) # a first one for j/k
    viewer.add_snapshot(profile)
    result = nil
    with_puma(viewer) do |port|
      result = run_check("http://127.0.0.1:#{port}/rperf/", "sandwich")
    end
    assert_empty result["errors"], "errors in the page"
    assert_empty result["external"]
    assert_match(/Pick a method/, result.dig("empty", "note", "text"))

    # Shop#checkout: 130 ms (threads 1 and 3); called by Object#main only; calls price, JSON,
    # the recursion.
    checkout = result["checkout"]
    assert_equal 130 * MS, checkout.dig("note", "ns")
    assert_match(/130.0 ms, 50.0% of the shown time/, checkout.dig("note", "text"))
    assert_equal ["Shop#checkout", "Object#main"], checkout["callers"]
    assert_equal "Shop#checkout", checkout["callees"].first
    assert_equal DEPTH, checkout["callees"].count("Deep#recurse")
    assert_includes checkout["callees"], "Shop#price"
    assert_includes checkout["callees"], "JSON.generate"
    refute_includes checkout["callees"], "Set#add"
    assert checkout["callersFit"]

    # Shift+click: Deep#recurse, counted once however deep (50 ms), its callers up to main.
    assert_equal "sandwich", result["tab"]
    assert_equal 50 * MS, result.dig("deep", "note", "ns")
    assert_equal ["Deep#recurse", "Shop#checkout", "Object#main"], result.dig("deep", "callers")
    assert_equal DEPTH, result.dig("deep", "callees").size
    assert_includes result["hash"], "sandwich=Deep%23recurse"
    # Its share of the shown time grows when the idle thread goes (50 of 160 ms).
    assert_equal 50 * MS, result.dig("hidden", "note", "ns")
    assert_match(/31.3% of the shown time/, result.dig("hidden", "note", "text"))
    # k: the snapshot before (none before the first), j: the one after; the tab stays.
    assert_equal [2, 1, 1, 2], result["steps"]
    assert_equal "sandwich", result["stepTab"]
  end

  # A timeline of more than Viewer::TIMELINE_INLINE_ROWS rows is its own element of the file,
  # parsed when a view first needs it: not on arrival, nor for the Timeline (whose bins are
  # written in the file, TimelinePayload); for the stack chart (the page model merges its rows)
  # and a Timeline under a filter the file has no bins of.
  def test_big_timeline_apart_in_a_file
    rows = Rperf::Viewer::TIMELINE_INLINE_ROWS + 10_000
    stack = [FRAMES[:price], FRAMES[:checkout], FRAMES[:main]]
    raw = Array.new(rows) { |i| [stack, MS, 1, 0, (i + 1) * MS] }
    data = { mode: :wall, frequency: 1000, sampling_count: rows, duration_ns: rows * MS,
             aggregated_samples: [[stack, rows * MS, 1, 0]], raw_samples: raw, label_sets: [{}] }
    result = run_file_check(Rperf::Viewer.static_html(data, max_timeline: rows), "bigfile", screenshots: false)
    assert_empty result["errors"]
    assert_equal({ "element" => true, "prefetched" => true }, result["apart"], "read in idle time once the first view is drawn")
    assert_equal true, result["stackLoadedTimeline"], "the stack chart is merged from the rows"
    assert_equal "bins", result.dig("timeline", "source")

    assert_in_delta rows * MS, result.dig("timeline", "stateNs", "running"), Rperf::Viewer::Payload::BINS
    assert_operator result.dig("timeline", "rendered"), :>=, Rperf::Viewer::Payload::BINS - 1
    assert_match(/\Aat [\d.]+ m?s: Shop#price\z/, result.dig("timeline", "details"), "the hovered slice's leaf, from the bins")
    # A tag filter that keeps nothing: the rows, binned by the page, draw nothing.
    assert_equal({ "source" => "rows", "stateNs" => { "running" => 0, "blocked" => 0, "wait" => 0, "gc" => 0 }, "rendered" => 0 },
                 result["timelineFiltered"].except("details"))
    assert_match(/: no samples\z/, result.dig("timelineFiltered", "details"))
    assert_equal rows, result["rows"]
    assert_equal rows * MS, result.dig("stack", "total")
    assert_equal 3, result.dig("stack", "rendered"), "one cell per frame: the stack never changes"
  end

  # rperf 0.11.1's tag filters and pin, served: tagfocus (a regex over label values) and
  # tagignore (key = value, key = (none)) filter every view, the page model's trees and stack chart
  # too; tagroot / tagleaf add "[key: value]" frames to the flame graph; Shift+click pins a
  # method: outlined, with its share of each snapshot (its method-table total over the
  # snapshot's), and j/k keep it.
  def test_tag_filters_and_pin
    tagged = tagged_profile
    viewer = Rperf::Viewer.new(nil)
    viewer.add_snapshot(tagged.merge(aggregated_samples: tagged[:aggregated_samples].reject { |s| s[2] == 2 },
                                     raw_samples: tagged[:raw_samples].reject { |s| s[2] == 2 }))
    viewer.add_snapshot(tagged)
    result = nil
    with_puma(viewer) do |port|
      result = run_check("http://127.0.0.1:#{port}/rperf/", "tags")
    end
    assert_empty result["errors"], "errors in the page"
    assert_empty result["external"]
    assert_equal 2, result["opened"]
    assert_equal 260 * MS, result["all"]
    # tagfocus GET /a: thread 1's 100 ms, in the page and in the server's call tree.
    assert_equal({ "shown" => 100 * MS, "tree" => 100 * MS }, result["focus"])
    # Not a regex: marked, and skipped.
    assert_equal 260 * MS, result.dig("invalid", "shown")
    assert_includes result.dig("invalid", "cls"), "invalid"
    # tagignore endpoint = (none): the 110 ms without an endpoint go.
    assert_equal 150 * MS, result.dig("ignore", "shown")
    assert_equal 150 * MS, result.dig("ignore", "methods")
    assert_equal "tags (1)", result.dig("ignore", "summary")
    assert_includes result.dig("ignore", "hash"), "tagignore="
    # tagignore %GVL = blocked: 260 - 120 ms blocked; thread 1's stack chart loses its 10 ms.
    assert_equal 140 * MS, result["ignoreBlocked"]
    assert_equal({ "thread" => 1, "total" => 90 * MS }, result["stackIgnoreBlocked"])
    # tagroot endpoint: one subtree per endpoint under the root; no frame where it is not set.
    assert_equal 260 * MS, result.dig("root", "shown")
    assert_equal [["[endpoint: GET /a]", 100 * MS, "all"], ["[endpoint: GET /b]", 50 * MS, "all"]], result.dig("root", "cells").sort
    # tagleaf endpoint: each stack's self time under its endpoint.
    leaf = result.dig("leaf", "cells")
    assert_includes leaf, ["[endpoint: GET /a]", 60 * MS, "Shop#price"]
    assert_includes leaf, ["[endpoint: GET /b]", 50 * MS, "Deep#recurse"]
    assert_equal 150 * MS, leaf.sum { |_, ns, _| ns }

    pin = result["pin"]
    assert_equal "flame", pin["tab"], "Shift+click pins, the view stays"
    assert_equal "pinned: Shop#price", pin["name"]
    assert_equal ["Shop#price"], pin["outlined"]
    assert_equal [[1, 60.0 / 160], [2, 60.0 / 260]], pin["shares"]
    assert_equal "share 23.1% @ #2", pin["text"]
    assert_includes pin["hash"], "pin=Shop%23price"
    assert_equal({ "id" => 1, "text" => "share 37.5% @ #1", "outlined" => 1 }, pin["afterK"])
    assert_equal({ "tab" => "sandwich", "ns" => 60 * MS }, pin["sandwich"])
    assert pin["closed"]
  end

  # The whole view in the address (served, for the transform): snapshot #1 of two (the page
  # opens #2), Set#add dropped, label %GVL not set, tagfocus /a, search price, a time range
  # dragged on the Timeline, the icicle zoomed to Shop#price and then by the wheel. A new page
  # at the address shows each of them, and the same totals and cells.
  def test_address_reopens_the_view
    tagged = tagged_profile
    viewer = Rperf::Viewer.new(nil)
    viewer.add_snapshot(tagged)
    viewer.add_snapshot(tagged.merge(aggregated_samples: tagged[:aggregated_samples].reject { |s| s[2] == 2 },
                                     raw_samples: tagged[:raw_samples].reject { |s| s[2] == 2 }))
    result = nil
    with_puma(viewer) do |port|
      out, err, status = Open3.capture3("node", File.join(RperfTestHelper::ROOT, "test/consumers/viewer_ui_check.js"),
                                        "http://127.0.0.1:#{port}/rperf/", "address", *ENV["RPERF_VIEWER_SCREENSHOTS"], chdir: RperfTestHelper::ROOT)
      assert status.success?, "viewer_ui_check.js failed:\n#{err}\n#{out}"
      result = JSON.parse(out.lines.last)
    end
    assert_empty result["errors"], "errors in either page"
    assert_empty result["external"]
    view = result["before"]
    assert_equal [1, "#1", "icicle"], view.values_at("snap", "title", "tab")
    assert_equal [["drop", "Set#add", FRAMES[:set][0]]], view["transforms"]
    assert_equal ["drop Set#add ✕"], view["chips"]
    # Without a %GVL label after the drop: thread 1's price and JSON (80 ms), thread 3's recursion (50 ms).
    assert_equal({ "key" => "%GVL", "values" => ["\u0000not set"] }, view["label"])
    assert_equal "%GVL not set (130.0 ms)", view["labelShown"]
    assert_equal [["/a"] * 2, ["price"] * 2], view.values_at("tagFocus", "search")
    # The range is where the drag ended (whole ns); what is shown is thread 1's price and JSON
    # samples (each covers the ms before its time) inside it.
    r0, r1 = view["range"]
    assert_equal [r0.to_i, r1.to_i], [r0, r1]
    inside = ->(ms) { ms.sum { |t| [[t * MS, r1].min - [(t - 1) * MS, r0].max, 0].max } }
    price = inside.((1..40).to_a + (81..100).to_a)
    json = inside.((41..60).to_a)
    assert_equal({ "shown" => price + json, "total" => 250 * MS }, view["totals"].except("text"))
    assert_equal price, view.dig("matched", "ns")
    assert_equal [["all", 0, price + json], ["Object#main", 0, price + json], ["Shop#checkout", 0, price + json],
                  ["JSON.generate", 0, json], ["Shop#price", json, price]], view["cells"]
    # The click zoomed to Shop#price (cell 4), the wheel into it by exp(-300 * 0.002) around the pointer.
    assert_equal({ "view" => [json, json + price], "zoom" => "Shop#price", "rendered" => 4 }, result["clicked"])
    zoom = view["zoom"]
    assert_equal [4, "Shop#price", ["all", "Object#main", "Shop#checkout", "Shop#price"]], zoom.values_at("focus", "name", "crumbs")
    assert_in_delta price * Math.exp(-0.6), zoom["x1"] - zoom["x0"], 1e-6
    assert_match(/&zoom=#{Regexp.escape(zoom["x0"].to_s)}_#{Regexp.escape(zoom["x1"].to_s)}_4\z/, view["hash"])

    # The new page: every value the same, the address too.
    assert_equal view, result["reopened"]
  end

  # The profile with labels: thread 1's samples are GET /a, thread 3's running ones GET /b.
  def tagged_profile
    data = profile
    sets = [{}, { "%GVL": "blocked" }, { endpoint: "GET /a" }, { endpoint: "GET /b" }, { endpoint: "GET /a", "%GVL": "blocked" }]
    relabel = lambda do |seq, lsi|
      case seq
      when 1 then lsi == 1 ? 4 : 2
      when 3 then lsi == 1 ? 1 : 3
      else lsi
      end
    end
    data.merge(label_sets: sets,
               aggregated_samples: data[:aggregated_samples].map { |st, w, seq, lsi| [st, w, seq, relabel.(seq, lsi)] },
               raw_samples: data[:raw_samples].map { |st, w, seq, lsi, t| [st, w, seq, relabel.(seq, lsi), t] })
  end

  # Focus / merge / drop a (pinned) function and collapse recursion: the page model transforms
  # the tree of stacks every view is drawn from (page/page_rows.hh), so the flame graph,
  # the totals, the call tree, the Timeline and the stack chart show the transformed samples; a
  # chip undoes each one. The same in a served page and in a `--html` file.
  def test_transforms_served
    viewer = Rperf::Viewer.new(nil)
    viewer.add_snapshot(profile)
    with_puma(viewer) { |port| check_transforms(run_check("http://127.0.0.1:#{port}/rperf/", "transforms")) }
  end

  def test_transforms_in_a_file
    check_transforms(run_file_check(Rperf::Viewer.static_html(profile, title: "ui"), "transforms"))
  end

  # Per VM state, the ns of the model's Timeline bins of the profile through `transforms`
  # (Native::Profile#transformed), of the samples with the label (a [key, [value or nil, ...]]).
  def transformed_state_ns(transforms, label: nil)
    native = Rperf::Storage.native(profile).transformed(transforms)
    select = {}
    select[:label_sets] = Rperf::Native.matching_label_sets(native.label_sets.map { |s| Rperf::Viewer::Payload.string_labels(s) }, label: label) if label
    out = { "running" => 0, "blocked" => 0, "wait" => 0, "gc" => 0 }
    native.timeline_bins(Rperf::Viewer::Payload::BINS, native.attribute(:duration_ns), select)[:threads].each do |_, per_state|
      per_state.each_with_index { |bins, i| out[out.keys[i]] += bins.sum if bins }
    end
    out
  end

  def check_transforms(result)
    assert_empty result["errors"], "errors in the page"
    assert_equal false, result["disabled"]
    total = 260 * MS
    # Focus on Shop#checkout: its 130 ms, it is the root.
    focus = result["focus"]
    assert_equal({ "shown" => 130 * MS, "total" => 130 * MS }, focus["totals"])
    assert_equal [["Shop#checkout", 130 * MS, "all"]], focus["flame"].select { |_, _, parent| parent == "all" }
    refute(focus["flame"].any? { |name, *| name == "Object#main" })
    assert_equal 130 * MS, focus["tree"]
    assert_equal ["focus Shop#checkout ✕"], focus["chips"]
    assert_includes focus["hash"], "transforms="
    assert_equal "share 100.0% @ #1", focus["pinShare"], "the pin's share in the transformed profile"
    # Its Timeline: the page model's bins of the moved rows, those of the server's model's
    # transform (each bin rounded once), and under a label filter (%GVL not set) too.
    checkout = [["focus", "Shop#checkout", APP]]
    [[focus["timeline"], transformed_state_ns(checkout)], [focus["labelTimeline"], transformed_state_ns(checkout, label: ["%GVL", [nil]])]].each do |drawn, expected|
      assert_equal "rows", drawn["source"]
      assert_in_delta 130 * MS, expected["running"], Rperf::Viewer::Payload::BINS
      expected.each { |state, ns| assert_in_delta ns, drawn.dig("stateNs", state), 3 * Rperf::Viewer::Payload::BINS, state }
    end
    assert_equal total, result["undone"]
    # Merge Shop#checkout: gone, its callees hang from main, nothing lost.
    merge = result["merge"]
    assert_equal total, merge.dig("totals", "shown")
    refute(merge["flame"].any? { |name, *| name == "Shop#checkout" })
    assert_includes merge["flame"], ["Shop#price", 60 * MS, "Object#main"]
    assert_equal total, merge["tree"]
    # Drop Deep#recurse: its 50 ms go.
    drop = result["drop"]
    assert_equal 210 * MS, drop.dig("totals", "shown")
    assert_equal 210 * MS, drop["tree"]
    refute(drop["flame"].any? { |name, *| name == "Deep#recurse" })
    # Collapse recursion: the 80 Deep#recurse calls are one frame, in the flame graph and in the
    # stack chart of thread 3 (its 50 ms are one stack: one cell per frame; then its 10 ms of sleep).
    stack_cells = ->(deep) { ["Object#main", "Shop#checkout", *Array.new(deep, "Deep#recurse"), "Kernel#sleep", "[GVL blocked]"] }
    assert_equal 3, result.dig("stackBefore", "thread")
    assert_equal DEPTH + 4, result.dig("stackBefore", "cells")
    assert_equal stack_cells.(DEPTH).tally, result.dig("stackBefore", "names").tally
    rec = result["recursion"]
    assert_equal "true", rec["pressed"]
    assert_equal [["Deep#recurse", 50 * MS, "Shop#checkout"]], rec["flame"].select { |name, *| name == "Deep#recurse" }
    assert_equal total, rec.dig("totals", "shown")
    assert_equal ["recursion collapsed ✕"], rec["chips"]
    assert_equal({ "thread" => 3, "cells" => 5 }, rec["stack"].except("names"))
    assert_equal stack_cells.(1).tally, rec.dig("stack", "names").tally
  end
end
