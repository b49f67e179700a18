# frozen_string_literal: true

require_relative "web_helper"
require "rperf/viewer"
require_relative "ui_profile"

# Issue 27, the server's side of the viewer's new views: frame categories and per-thread idle
# time in the payload, the hide= filter, the sandwich, a big timeline sent apart.
class ViewerUiPayloadTest < Minitest::Test
  include WebTestHelper
  include UiProfile

  def payload(data = profile) = Rperf::Viewer::Payload.build(data, max_samples: 20_000, max_timeline: 200_000)

  def test_frame_categories
    p = payload
    cats = p[:frames].zip(p[:frame_categories]).to_h { |(name, _), c| [name, p[:categories][c]] }
    assert_equal({ "Object#main" => "app", "Shop#checkout" => "app", "Shop#price" => "app", "Deep#recurse" => "app",
                   "JSON.generate" => "gem", "Puma::Server#accept" => "gem", "Set#add" => "stdlib",
                   "Integer#times" => "native", "IO.select" => "native", "Kernel#sleep" => "native" }, cats)
    category = Rperf::Viewer::Payload.method(:category)
    assert_equal "stdlib", category.("Integer#times", "<internal:numeric>")
    assert_equal "stdlib", category.("Set#add", "#{RbConfig::CONFIG['rubylibdir']}/set.rb")
    assert_equal "gc", category.("[GC marking]", "<GC>")
    assert_equal "gvl", category.("[GVL blocked]", "<GVL>")
    assert_equal "other", category.("[pruned]", "<rperf>")
    assert_equal "other", category.("(no Ruby frames)", "")
  end

  # Each thread's total and its time off the GVL, as the Threads tab's columns.
  def test_thread_totals
    assert_equal [[1, 100 * MS, 10 * MS], [2, 100 * MS, 100 * MS], [3, 60 * MS, 10 * MS]], payload[:thread_totals]
  end

  def test_hide_filter
    parse = Rperf::Viewer::SampleFilter.method(:parse_query)
    assert_equal({ hide: [1, 3] }, parse.("hide=3,1,3"))
    assert_equal({ hide: [] }, parse.("hide="))
    assert_raises(Rperf::Viewer::SampleFilter::BadFilter) { parse.("hide=1,x") }
    assert_equal 160 * MS, Rperf::Viewer::CallTreePayload.build(profile, hide: [2])[:total_ns]
    assert_equal 60 * MS, Rperf::Viewer::CallTreePayload.build(profile, hide: [1, 2])[:total_ns]
    assert_equal 260 * MS, Rperf::Viewer::CallTreePayload.build(profile, hide: [])[:total_ns]
    table = Rperf::Viewer::MethodTablePayload.build(profile, hide: [2])
    assert_equal 160 * MS, table[:total_ns]
  end

  def names(tree) = tree[:nodes].map { |_, m| tree[:methods][m][0] }

  # Callers up from the method, callees down; a recursive method counts once.
  def test_sandwich
    s = Rperf::Viewer::SandwichPayload.build(profile, method: ["Shop#checkout", APP])
    assert_equal 130 * MS, s[:total_ns]
    assert_equal ["[root]", "Shop#checkout", "Object#main"], names(s[:callers])
    assert_equal [130 * MS] * 3, s[:callers][:nodes].map { |n| n[2] }
    callees = s[:callees][:nodes].to_h { |_, m, total| [s[:callees][:methods][m][0], total] }
    assert_equal({ "[root]" => 130 * MS, "Shop#checkout" => 130 * MS, "Shop#price" => 60 * MS, "Deep#recurse" => 50 * MS,
                   "JSON.generate" => 20 * MS }, callees)
    assert_equal %w[other app app], s[:callers][:categories], "[root] is rperf's"

    deep = Rperf::Viewer::SandwichPayload.build(profile, method: ["Deep#recurse", APP], thread: 3)
    assert_equal 50 * MS, deep[:total_ns]
    assert_equal ["[root]", "Deep#recurse", "Shop#checkout", "Object#main"], names(deep[:callers])
    assert_equal DEPTH + 1, deep[:callees][:nodes].size
    # The blocked time of IO.select ends in its state's leaf below it, not among its callers.
    io = Rperf::Viewer::SandwichPayload.build(profile, method: ["IO.select", FRAMES[:select][0]])
    assert_equal ["[root]", "IO.select", "Puma::Server#accept"], names(io[:callers])
    assert_equal ["[root]", "IO.select", "[GVL blocked]"], names(io[:callees])
    assert_equal 0, Rperf::Viewer::SandwichPayload.build(profile, method: ["Nothing#here", APP])[:total_ns]
  end

  def test_served_filters_and_sandwich
    viewer = Rperf::Viewer.new(nil)
    viewer.add_snapshot(profile)
    with_puma(viewer) do |port|
      tree = JSON.parse(http_get(port, "/rperf/snapshots/1/call_tree?hide=2").body)
      assert_equal 160 * MS, tree["total_ns"]
      assert_equal "400", http_get(port, "/rperf/snapshots/1/sandwich?hide=2").code
      body = JSON.parse(http_get(port, "/rperf/snapshots/1/sandwich?method=Shop%23checkout&file=#{URI.encode_www_form_component(APP)}&thread=3").body)
      assert_equal 50 * MS, body["total_ns"]
      assert_equal ["Shop#checkout", APP], body["method"]
      # The method= of a call tree query is not a filter of it.
      assert_equal 260 * MS, JSON.parse(http_get(port, "/rperf/snapshots/1/call_tree?method=x&file=y").body)["total_ns"]
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
      assert_equal({ "quantum_ns" => 0, "source_count" => rows, "deferred" => true, "rows" => rows }, body["timeline"])
      timeline = JSON.parse(http_get(port, "/rperf/snapshots/1/timeline").body)
      assert_equal rows, timeline.size
      assert_equal rows * MS, timeline.sum { |r| r[1] }
      small = JSON.parse(http_get(port, "/rperf/snapshots/2").body)
      assert_equal 260, small.dig("timeline", "samples").size
      assert_equal "404", http_get(port, "/rperf/snapshots/2/timeline").code
      assert_equal "404", http_get(port, "/rperf/snapshots/9/timeline").code
    end
    html = Rperf::Viewer.static_html(big, max_timeline: rows)
    gz = html[%r{<script id="rperf-timeline-1" type="application/gzip\+base64">([^<]*)</script>}, 1]
    assert_equal rows, JSON.parse(Zlib.gunzip(Base64.strict_decode64(gz))).size
    refute_includes Rperf::Viewer.static_html(profile), "rperf-timeline-1"
  end
end
