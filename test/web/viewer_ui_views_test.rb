# frozen_string_literal: true

require_relative "web_helper"
require "rperf/viewer"
require_relative "ui_profile"

# Issue 27 in headless Chromium (test/consumers/viewer_ui_check.js), every value computed here
# from the generated profile (UiProfile) or a small one of its own: the search marks exactly its
# matches in every view (flame graph, icicle, stack chart, call tree, Bottom-up, Top, Methods,
# the sandwich) and dims the rest; each key's effect (+ = - ← → z h c, the digits) and the ?
# overlay, drawn from the page's own key table, lists exactly the keys it handles; GC and GVL
# frames and VM-state leaves in their categories' legend colours; a label filter in Bottom-up,
# the icicle and Top.
class ViewerUiViewsTest < Minitest::Test
  include RubyIndependentTest
  include WebTestHelper
  include UiProfile

  CHECKER = File.join(RperfTestHelper::ROOT, "test/consumers/viewer_ui_check.js")

  def setup
    skip "chromium is not installed (script/bootstrap consumers)" unless File.executable?(ENV.fetch("CHROMIUM", "/usr/bin/chromium"))
    skip "npm packages are not installed (script/bootstrap consumers)" unless File.directory?(File.join(RperfTestHelper::ROOT, "node_modules/playwright-core"))
  end

  # Searching "Shop#" (served, so the sandwich is there): the frames and rows of Shop#checkout
  # and Shop#price are marked in each view, every other frame dimmed.
  def test_search_marks_its_matches_in_every_view
    data = profile
    query = "Shop#"
    matching = matching_names(data, query)
    assert_equal ["Shop#checkout", "Shop#price"], matching.sort
    result = served(data, "search", search: query, sandwich: "Shop#checkout")
    # The samples with a match: thread 1's price and JSON, thread 3's recursion (under checkout).
    assert_equal stacks(data).sum { |names, w| names.intersect?(matching) ? w : 0 }, result["matchedNs"]

    # The charts: each frame marked if it matches, dimmed if not; the marked ones are the
    # matching functions the chart has.
    charts = { "flame" => all_names(data), "icicle" => all_names(data),
               "stack" => stacks(data, thread: 1).flat_map(&:first).uniq } # thread 1: the busiest not idle
    sandwich = result["sandwich"]
    assert_equal "Shop#checkout", sandwich["method"]
    charts["sandwich callers"] = around(data, "Shop#checkout") { |names, at| names[at..] }
    charts["sandwich callees"] = around(data, "Shop#checkout") { |names, at| names[..at] }
    shown = result.slice("flame", "icicle", "stack").merge("sandwich callers" => sandwich["callers"], "sandwich callees" => sandwich["callees"])
    charts.each do |view, names|
      frames = shown[view]["frames"]
      assert_equal shown[view]["rendered"], frames.size, view
      assert_equal (names & matching).sort, frames.filter_map { |f| f["name"] if f["cls"].split.include?("match") }.uniq.sort, "marked in #{view}"
      assert_equal(frames.map { |f| [f["name"], matching.include?(f["name"]) ? "match" : "dim"] },
                   frames.map { |f| [f["name"], (f["cls"].split & %w[match dim]).join(" ")] }, "the rest dimmed in #{view}")
    end

    # The tables and trees: each row marked exactly when its function matches. The call tree
    # opens its heaviest path (main 160 of 260 ms, checkout 130 of 160): checkout and price rows
    # are on screen; the Bottom-up tree opens nothing (IO.select's 100 ms < half): price only.
    { "tree" => ["Shop#checkout", "Shop#price"], "inverted" => ["Shop#price"], "top" => matching.sort, "methods" => matching.sort }.each do |view, marked|
      rows = result[view]
      assert_equal marked, rows.filter_map { |r| r["name"] if r["match"] }.sort, "marked in #{view}"
      assert_equal(rows.map { |r| [r["name"], matching.include?(r["name"])] }, rows.map { |r| [r["name"], r["match"]] }, view)
    end
    assert_equal method_stacks(data).flat_map(&:first).uniq.sort, result["top"].map { |r| r["name"] }.sort,
                 "Top lists every method, VM-state leaves included"
  end

  # The keys on a file: + = - zoom around the middle, ← → pan a fifth, clamped to the graph, z
  # resets; h hides the idle thread; c clears the search, label, thread and tag filters; the
  # digits open the first ten tabs. The ? overlay lists each key the handler has, once.
  def test_every_key_and_the_overlay
    data = profile
    total = stacks(data).sum { |_, w| w }
    params = { search: "price", label: "%GVL = blocked ", thread: 1, tagFocus: "blocked" }
    result = in_file(data, "keys", params)
    at = ->(a, b) { [total * a, total * b].map { |x| x.to_r.round } }
    assert_equal({ "plusTwice" => at.(3r / 8, 5r / 8), "minus" => at.(1r / 4, 3r / 4), "right" => at.(7r / 20, 17r / 20), "left" => at.(1r / 4, 3r / 4),
                   "rightToEnd" => at.(1r / 2, 1), "leftToStart" => at.(0, 1r / 2), "minusAll" => at.(0, 1), "z" => at.(0, 1), "equals" => at.(1r / 4, 3r / 4) },
                 result["zoom"])

    idle = idle_threads(data)
    refute_empty idle
    shown = stacks(data).sum { |_, w, seq| idle.include?(seq) ? 0 : w }
    assert_equal [{ "totals" => { "shown" => shown, "total" => total }, "pressed" => "true" },
                  { "totals" => { "shown" => total, "total" => total }, "pressed" => "false" }], result["h"]

    before = result["beforeC"]
    blocked = stacks(data).sum { |_, w, seq, set| seq == 1 && set[:"%GVL"] == "blocked" ? w : 0 }
    all_blocked = stacks(data).sum { |_, w, _, set| set[:"%GVL"] == "blocked" ? w : 0 }
    assert_equal({ "search" => %w[price price], "label" => [{ "key" => "%GVL", "values" => ["blocked"] }, format("%%GVL = blocked (%.1f ms)", all_blocked.fdiv(MS))],
                   "thread" => [1, "thread 1"], "tagFocus" => %w[blocked blocked], "shown" => blocked, "info" => "matches 0 ns (0.0% of shown)" }, before)
    assert_equal({ "search" => ["", ""], "label" => [nil, "all samples"], "thread" => [nil, "all threads"], "tagFocus" => ["", ""], "shown" => total, "info" => "" },
                 result["afterC"])

    tabs = result["tabs"]
    assert_equal 13, tabs.size
    ids = %w[flame icicle stack top tree methods sandwich alloc threads timeline]
    assert_equal %w[1 2 3 4 5 6 7 8 9 0].zip(ids.zip(tabs.first(10))), result["digits"]

    help = result["help"]
    refute help["hidden"]
    keys = ["/", "Escape", *%w[1 2 3 4 5 6 7 8 9 0], "j", "k", "+", "=", "-", "ArrowLeft", "ArrowRight", "z", "h", "c", "?"]
    assert_equal keys, help["handled"], "the keys the page handles"
    assert_equal keys, help["keys"], "the overlay lists each of them once"
    assert_equal [["/", "search frames"], ["Esc", "leave the search box / close this"],
                  ["1 2 3 4 5 6 7 8 9 0", "the first 10 of the 13 tabs, in order: #{tabs.first(10).join(', ')} (#{tabs.drop(10).join(', ')}: click them)"],
                  ["j / k", "next / previous snapshot"], ["+ / = / -", "zoom the chart in (+ or =) / out (-), around its middle"],
                  ["← / →", "pan the chart by a fifth of its width"], ["z", "reset the zoom"], ["h", "hide / show idle threads"],
                  ["c", "clear the filters and the search"], ["?", "this list"], ["Shift+click", "pin a method: outlined, its share in every snapshot"]],
                 help["rows"]
    assert_equal "Diff, Bottom-up, Source", tabs.drop(10).join(", ")
    assert result["helpClosed"]
  end

  # GC and GVL: VM-state frames ("[GC marking]", "[GVL wait]", "[GVL blocked]" in "<VM>", as
  # rperf records them with vm_state_frames) and VM-state labels (%GC, %GVL: leaves "[GC]",
  # "[GVL wait]" under the frame), each drawn in its category's colour, which the legend shows.
  def test_gc_and_gvl_colours
    result = in_file(vm_profile, "categories")
    main = "Object#main"
    price = "Shop#price"
    expected = [["all", nil, "other"], [main, "all", "app"], ["[GC marking]", main, "gc"], ["[GVL wait]", main, "gvl-wait"],
                ["[GVL blocked]", main, "gvl-blocked"], [price, main, "app"], ["[GC]", price, "gc"], ["[GVL wait]", price, "gvl-wait"]]
    assert_equal expected.sort_by(&:to_s), result["cells"].map { |c| c.first(3) }.sort_by(&:to_s)
    result["cells"].each do |name, _, cat, fill|
      assert_equal colour(cat, name), fill, "#{name} (#{cat})"
    end
    legend = result["legend"].to_h { |cat, style, text| [cat, [style, text]] }
    { "gc" => "GC", "gvl-wait" => "GVL wait", "gvl-blocked" => "GVL blocked (off the GVL)", "app" => "application" }.each do |cat, text|
      assert_equal ["background:#{colour(cat, '')}", text], legend[cat], cat
    end
    assert_equal ["gc", "background:hsl(0,70%,62%)"], result["legend"].find { |c, *| c == "gc" }.first(2)
  end

  # A label filter on a served page (endpoint = GET /a: thread 1's samples): the Bottom-up
  # roots, the icicle's root and its children, and the Top table are those of the kept samples.
  def test_label_filter_in_bottom_up_icicle_and_top
    data = labelled_profile
    result = served(data, "filtered", label: "endpoint = GET /a ")
    assert_equal({ "key" => "endpoint", "values" => ["GET /a"] }, result["label"])
    kept = stacks(data).select { |*, set| set[:endpoint] == "GET /a" }
    total = kept.sum { |_, w| w }
    assert_equal 100 * MS, total
    assert_equal({ "shown" => total, "total" => stacks(data).sum { |_, w| w } }, result["totals"])

    by = ->(&key) { kept.each_with_object(Hash.new(0)) { |(names, w), acc| acc[key.(names)] += w } }
    leaves = by.(&:first)
    assert_equal total, result.dig("inverted", "total")
    assert_equal leaves.sort_by { |n, w| [-w, n] }, result.dig("inverted", "roots").sort_by { |n, w| [-w, n] }
    assert_equal ["all", total], result.dig("icicle", "root")
    assert_equal by.(&:last).sort, result.dig("icicle", "children").sort
    # Top: the method table's entries, where a VM-state label's time is a leaf of its own.
    kept_methods = method_stacks(data).select { |*, set| set[:endpoint] == "GET /a" }
    assert_includes kept_methods.map { |names, *| names.first }, "[GVL blocked]"
    self_of = kept_methods.each_with_object(Hash.new(0)) { |(names, w), acc| acc[names.first] += w }
    top = kept_methods.flat_map(&:first).uniq.map do |f|
      [f, self_of[f], kept_methods.sum { |names, w| names.include?(f) ? w : 0 }]
    end
    assert_equal top.sort_by { |n, s, t| [-s, -t, n] }, result["top"], "by self, then as the method table: total, name"
  end

  private

  def check(target, plan, params)
    out, err, status = Open3.capture3({ "RPERF_UI_PARAMS" => JSON.generate(params) }, "node", CHECKER, target, plan, *ENV["RPERF_VIEWER_SCREENSHOTS"],
                                      chdir: RperfTestHelper::ROOT)
    assert status.success?, "viewer_ui_check.js #{plan} failed:\n#{err}\n#{out}"
    result = JSON.parse(out.lines.last)
    assert_empty result["errors"], "errors in the page"
    assert_empty result["external"]
    result
  end

  def in_file(data, plan, params = {})
    Dir.mktmpdir("rperf-ui") do |dir|
      path = File.join(dir, "profile.html")
      File.write(path, Rperf::Viewer.static_html(data, title: "ui"))
      check("file://#{path}", plan, params)
    end
  end

  def served(data, plan, params = {})
    viewer = Rperf::Viewer.new(nil)
    viewer.add_snapshot(data)
    with_puma(viewer) { |port| check("http://127.0.0.1:#{port}/rperf/", plan, params) }
  end

  # The profile's aggregated samples as [names leaf first, weight, thread, label set].
  def stacks(data, thread: nil)
    data[:aggregated_samples].filter_map do |stack, w, seq, lsi|
      [stack.map(&:last), w, seq, data[:label_sets][lsi]] if thread.nil? || seq == thread
    end
  end

  def all_names(data) = stacks(data).flat_map(&:first).uniq

  # The stacks as the method table reads them: a VM-state label's time is a leaf of its own
  # (profile/vm_state.hh's names), under the stack's own leaf.
  STATE_LEAVES = { %w[%GVL blocked] => "[GVL blocked]", %w[%GVL wait] => "[GVL wait]", %w[%GC mark] => "[GC marking]",
                   %w[%GC sweep] => "[GC sweeping]" }.freeze
  def method_stacks(data)
    stacks(data).map do |names, *rest, set|
      leaf = set.filter_map { |k, v| STATE_LEAVES[[k.to_s, v.to_s]] }.first
      [leaf ? [leaf, *names] : names, *rest, set]
    end
  end

  # The functions whose name or file holds the text (the page's search: case-insensitive).
  def matching_names(data, text)
    q = text.downcase
    data[:aggregated_samples].flat_map(&:first).uniq.filter_map { |file, name| name if name.downcase.include?(q) || file.downcase.include?(q) }.uniq
  end

  # The names of each stack with the method, cut at its outermost call (the sandwich's).
  def around(data, method)
    stacks(data).flat_map { |names, *| (at = names.rindex(method)) ? yield(names, at) : [] }.uniq
  end

  # The threads that spent at least 90% of their time off the GVL (the page's idle threads).
  def idle_threads(data)
    stacks(data).group_by { |s| s[2] }.filter_map do |seq, rows|
      blocked = rows.sum { |_, w, _, set| set[:"%GVL"] == "blocked" ? w : 0 }
      seq if blocked >= 0.9 * rows.sum { |_, w| w }
    end.sort
  end

  # The page's colour of a frame: its category's hue and saturation, a lightness from its name
  # (62 + |hash| % 14, the page's 31-based hash in 32-bit integers).
  HUES = { "app" => [24, 85], "gc" => [0, 70], "gvl-blocked" => [30, 5], "gvl-wait" => [48, 90], "other" => [0, 0] }.freeze
  def colour(cat, name)
    h = name.each_char.reduce(0) do |acc, c|
      v = (acc * 31 + c.ord) & 0xFFFFFFFF
      v >= 2**31 ? v - 2**32 : v
    end
    hue, sat = HUES.fetch(cat)
    "hsl(#{hue},#{sat}%,#{62 + (h.abs % 14)}%)"
  end

  # Thread 1's 30 ms under Object#main: VM-state frames (5 ms GC marking, 3 ms GVL wait, 2 ms
  # GVL blocked) and Shop#price, 10 ms running, 4 ms under %GC=mark and 6 ms under %GVL=wait.
  def vm_profile
    main = FRAMES[:main]
    price = FRAMES[:price]
    vm = ->(name) { ["<VM>", name] }
    samples = [[[vm.("[GC marking]"), main], 5, 0], [[vm.("[GVL wait]"), main], 3, 0], [[vm.("[GVL blocked]"), main], 2, 0],
               [[price, main], 10, 0], [[price, main], 4, 1], [[price, main], 6, 2]]
    { mode: :wall, frequency: 1000, sampling_count: 30, duration_ns: 30 * MS,
      aggregated_samples: samples.map { |stack, ms, lsi| [stack, ms * MS, 1, lsi] },
      label_sets: [{}, { "%GC": "mark" }, { "%GVL": "wait" }] }
  end

  # The generated profile with thread 1's samples labelled endpoint = GET /a (its blocked ones too).
  def labelled_profile
    data = profile
    sets = data[:label_sets]
    labelled = sets + sets.map { |set| set.merge(endpoint: "GET /a") }
    relabel = ->(seq, lsi) { seq == 1 ? lsi + sets.size : lsi }
    data.merge(label_sets: labelled,
               aggregated_samples: data[:aggregated_samples].map { |st, w, seq, lsi| [st, w, seq, relabel.(seq, lsi)] },
               raw_samples: data[:raw_samples].map { |st, w, seq, lsi, t| [st, w, seq, relabel.(seq, lsi), t] })
  end
end
