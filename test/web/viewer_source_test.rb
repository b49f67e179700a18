# frozen_string_literal: true

require_relative "web_helper"
require "rperf/viewer"

# Issue 27: the Source tab. A profile recorded with lines: true ([path, label, line] frames)
# shows a file of its own with each line's self and total time (the page model's), its text read
# by the served viewer only for the profile's own frame paths; a --html file has no text and lists
# the lines with time.
class ViewerSourceTest < Minitest::Test
  include WebTestHelper

  MS = 1_000_000
  SOURCE = <<~RUBY
    class Shop
      def price(item)
        item * 2
      end
      def checkout
        [1, 2].sum { |i| price(i) }
      end
    end
    Shop.new.checkout
  RUBY

  def profile(path)
    price2 = [path, "Shop#price", 2]
    price3 = [path, "Shop#price", 3]
    checkout5 = [path, "Shop#checkout", 5]
    checkout6 = [path, "Shop#checkout", 6]
    main = [path, "<main>", 9]
    other = ["/nonexistent/lib/other.rb", "Other#run", 4]
    { mode: :cpu, frequency: 1000, sampling_count: 80, duration_ns: 80 * MS, label_sets: [{}],
      aggregated_samples: [[[price2, checkout5, main], 40 * MS, 1, 0], [[price3, checkout5, main], 20 * MS, 1, 0],
                           [[checkout6, main], 10 * MS, 1, 0], [[other, main], 10 * MS, 1, 0], [[["../../etc/passwd", "x", 1]], MS, 1, 0]] }
  end

  # line => [self, total]
  EXPECTED = { 2 => [40, 40], 3 => [20, 20], 5 => [0, 60], 6 => [10, 10], 9 => [0, 80] }.transform_values { |a| a.map { |ms| ms * MS } }

  def with_source_file
    Dir.mktmpdir("rperf-source") do |dir|
      path = File.join(dir, "shop.rb")
      File.write(path, SOURCE)
      yield path
    end
  end

  def test_source_payload_and_refusals
    with_source_file do |path|
      data = profile(path)
      src = Rperf::Viewer::SourcePayload.build(data, "path=#{URI.encode_www_form_component(path)}")
      assert_equal({ path: path, lines: SOURCE.lines(chomp: true) }, src)
      # The time per line is the page model's (source_lines over the payload's line tree), under
      # its filters (here every sample).
      all, = page_views(data, [{ view: "source", path: path }])
      assert_equal(EXPECTED, all["lines"].to_h { |line, s, t| [line, [s, t]] })
      assert_equal 81 * MS, all["keptNs"]
      # Under a time range: the timeline's rows, each with its stack at line level (the first
      # 60 ms: Shop#price at lines 2 and 3, called from line 5).
      time = 0
      raw = data.merge(raw_samples: data[:aggregated_samples].map { |st, w, seq, lsi| [st, w, seq, lsi, time += w] })
      ranged, = page_views(raw, [{ view: "source", path: path, filter: { range: [0, 60 * MS] } }])
      assert_equal({ 2 => [40 * MS, 40 * MS], 3 => [20 * MS, 20 * MS], 5 => [0, 60 * MS], 9 => [0, 60 * MS] },
                   ranged["lines"].to_h { |line, s, t| [line, [s, t]] })
      assert_equal 60 * MS, ranged["keptNs"]
      # Without line numbers: no line tree, no time per line.
      flat = data.merge(aggregated_samples: data[:aggregated_samples].map { |st, *rest| [st.map { |f| f.first(2) }, *rest] })
      assert_nil Rperf::Viewer::Payload.build(flat, max_samples: 10, max_timeline: 10)[:line_tree]
      bare, = page_views(flat, [{ view: "source", path: path }])
      assert_equal [[], 81 * MS], bare.values_at("lines", "keptNs")

      viewer = Rperf::Viewer.new(nil)
      viewer.add_snapshot(data)
      with_puma(viewer) do |port|
        get = ->(query) { http_get(port, "/rperf/snapshots/1/source?#{query}") }
        served = JSON.parse(get.("path=#{URI.encode_www_form_component(path)}").body)
        assert_equal JSON.parse(JSON.generate(src)), served
        # Only the profile's own files: not another file, not a spelling of one, not a relative path.
        refused = { "/etc/passwd" => "404", "#{File.dirname(path)}/../#{File.basename(File.dirname(path))}/shop.rb" => "404",
                    "../../etc/passwd" => "404", "/nonexistent/lib/other.rb" => "404" }
        refused.each do |asked, code|
          res = get.("path=#{URI.encode_www_form_component(asked)}")
          assert_equal code, res.code, "#{asked}: #{res.body}"
        end
        assert_match(/not a file of this profile/, JSON.parse(get.("path=%2Fetc%2Fpasswd").body)["error"])
        assert_match(/not an absolute path/, JSON.parse(get.("path=..%2F..%2Fetc%2Fpasswd").body)["error"])
        assert_match(/cannot read/, JSON.parse(get.("path=%2Fnonexistent%2Flib%2Fother.rb").body)["error"])
        assert_match(/needs path=/, JSON.parse(get.("").body)["error"])
      end
    end
  end

  def test_source_tab_in_chromium
    skip "chromium is not installed (script/bootstrap consumers)" unless File.executable?(ENV.fetch("CHROMIUM", "/usr/bin/chromium"))
    skip "npm packages are not installed (script/bootstrap consumers)" unless File.directory?(File.join(RperfTestHelper::ROOT, "node_modules/playwright-core"))

    with_source_file do |path|
      viewer = Rperf::Viewer.new(nil)
      viewer.add_snapshot(profile(path))
      served = run_check("http://127.0.0.1:%d/rperf/", viewer)
      assert_empty served["errors"]
      assert_equal "source", served["tab"]
      assert_equal path, served["path"]
      lines = served["lines"]
      assert_equal SOURCE.lines(chomp: true), lines.map { |l| l["code"] }
      assert_equal(EXPECTED, lines.select { |l| l["total"].positive? }.to_h { |l| [l["line"], [l["self"], l["total"]]] })
      assert_equal [9], lines.select { |l| l["cls"].include?("focus") }.map { |l| l["line"] }, "the hottest line"
      assert_includes served["hash"], "source="
      assert_match(/self and total per line/, served["note"])

      Dir.mktmpdir("rperf-source-html") do |dir|
        file = File.join(dir, "p.html")
        File.write(file, Rperf::Viewer.static_html(profile(path)))
        static = run_check("file://#{file}", nil)
        assert_empty static["errors"]
        assert_equal path, static["path"]
        # No text in a file: the lines with time, each the page model's, as served.
        assert_equal(EXPECTED, static["lines"].to_h { |l| [l["line"], [l["self"], l["total"]]] })
        assert_equal [""], static["lines"].map { |l| l["code"] }.uniq
        assert_match(/lists the lines with time/, static["note"])
      end
    end
  end

  # The served page's screenshot only (RPERF_VIEWER_SCREENSHOTS).
  def run_check(url, viewer)
    go = lambda do |address|
      out, err, status = Open3.capture3("node", File.join(RperfTestHelper::ROOT, "test/consumers/viewer_ui_check.js"),
                                        address, "source", *(ENV["RPERF_VIEWER_SCREENSHOTS"] if viewer), chdir: RperfTestHelper::ROOT)
      assert status.success?, "viewer_ui_check.js failed:\n#{err}\n#{out}"
      JSON.parse(out.lines.last)
    end
    return go.(url) unless viewer

    result = nil
    with_puma(viewer) { |port| result = go.(format(url, port)) }
    result
  end
end
