# frozen_string_literal: true

require_relative "web_helper"
require "rperf/rack"
require "rperf/viewer"

# The viewer page in headless Chromium (test/consumers/viewer_check.js), served by a real Puma
# on 127.0.0.1 with snapshots of real requests: every view renders, the label filter and the
# time range change the totals by the right amounts, the diff shows the slower function in
# red, no request leaves 127.0.0.1, and nothing from the profile runs as code.
class ViewerBrowserTest < Minitest::Test
  include WebTestHelper

  XSS_FRAME = :"<img src=x onerror=window.__xss=1>"
  XSS_LABEL = "<b>bold</b><script>window.__xss=2</script>"

  # Endpoints whose own code (no C calls) holds the time, so self time lands on them.
  class Shop
    attr_accessor :slow_iterations

    def initialize = @slow_iterations = 300_000

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

    def call(env)
      case env["PATH_INFO"]
      when "/slow" then slow_path
      when "/fast" then fast_path
      when "/io" then sleep(0.01)
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
    assert_includes result["requests"], "/rperf/assets/vendor/d3.min.js"

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
    red, green, = result.dig("diff", "fills", "#{Shop}#slow_path").scan(/\d+/).map(&:to_i)
    assert_operator red, :>, green + 60, "slow_path is red in the diff: #{result.dig('diff', 'fills', "#{Shop}#slow_path")}"
    first = result.dig("diff", "rows", 0)
    assert_equal "up", first["cls"], result.dig("diff", "rows").inspect + result.dig("diff", "summary")
    assert_equal "#{Shop}#slow_path", first["cells"][5]
    assert first["cells"][2].start_with?("+")

    # Timeline: rendered from raw samples; a dragged range narrows every view to it.
    before_total = before[:aggregated_samples].sum { |s| s[1] }
    assert_operator result.dig("timeline", "rendered"), :>, 10
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
    assert_equal 3, result.dig("xss", "scripts")
  end

  # Rperf::Viewer.static_html: one file, no server, no request at all, the same views.
  def test_static_html_file_renders_offline
    data = Rperf.start(mode: :wall, aggregate: false) do
      shop = Shop.new
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
                                        "file://#{path}", JSON.generate(static: true), chdir: RperfTestHelper::ROOT)
      assert status.success?, "viewer_check.js failed:\n#{err}\n#{out}"
      result = JSON.parse(out.lines.last)
      assert_equal [], result["external"]
      assert_equal [], result["errors"]
      assert_operator result["flame"], :>, 3
      assert_operator result["icicle"], :>, 3
      assert_operator result["timeline"], :>, 3
      assert_operator result["top"], :>, 3
      assert_equal "</title><script>window.__xss=3</script>", result["title"], "the title is text"
    end
    assert_raises(ArgumentError) { Rperf::Viewer.static_html({}) }
  end
end
