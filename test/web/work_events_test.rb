# frozen_string_literal: true

require "test_helper"
require "rack"
require "rack/mock"
require "rperf/rack"
require "rperf/integrations/notifications"
require "rperf/viewer"
require "open3"
require "json"
require_relative "../compat/support/compare"

# Issue 48.3: ActiveSupport::Notifications events counted per unit of work (WorkEvents): each
# request's events under its endpoint, bounded as the label sets are, carried by the snapshot's
# and the saved file's `work_events`.
class WorkEventsTest < Minitest::Test
  include TempDirTest

  def setup
    super
    Rperf::Notifications.subscribe(%w[sql.active_record render_template.action_view])
  end

  def teardown
    Rperf::Notifications.unsubscribe
    super
  end

  def app
    queries = ->(n) { n.times { ActiveSupport::Notifications.instrument("sql.active_record", sql: "SELECT 1", name: "Post Load") {} } }
    inner = lambda do |env|
      case env["PATH_INFO"]
      when "/posts" then queries.(6)
      when %r{\A/posts/(\d+)\z} then queries.(Regexp.last_match(1).to_i)
      end
      ActiveSupport::Notifications.instrument("sql.active_record", sql: "PRAGMA", name: "SCHEMA") {} # not the app's
      ActiveSupport::Notifications.instrument("render_template.action_view", identifier: "x") {}
      [200, {}, ["ok"]]
    end
    Rack::MockRequest.new(Rperf::RackMiddleware.new(inner))
  end

  def test_events_per_request_by_endpoint_in_the_snapshot_and_the_file
    Rperf.start(mode: :wall, defer: true)
    client = app
    3.times { client.get("/posts") }
    client.get("/posts/2")
    client.get("/posts/9")
    ActiveSupport::Notifications.instrument("sql.active_record", sql: "SELECT 1") {} # outside a request: no unit
    data = Rperf.snapshot(clear: true)
    rows = data[:work_events].to_h { |row| [row[:labels][:endpoint], row] }
    assert_equal ["GET /posts", "GET /posts/:id"], rows.keys.sort
    posts = rows["GET /posts"]
    assert_equal 3, posts[:units]
    assert_equal({ count: 18, max_per_unit: 6 }, posts[:events][:"sql.active_record"].slice(:count, :max_per_unit))
    assert_equal 3, posts[:events][:"render_template.action_view"][:count]
    by_id = rows["GET /posts/:id"]
    assert_equal [2, 11, 9], [by_id[:units], by_id[:events][:"sql.active_record"][:count], by_id[:events][:"sql.active_record"][:max_per_unit]]

    # The interval's table went with the snapshot; the next starts empty.
    client.get("/posts/1")
    path = tmp("p.json.gz")
    Rperf.save(path, Rperf.snapshot(clear: true))
    loaded = Rperf.load(path)
    assert_equal [{ labels: { endpoint: "GET /posts/:id" }, units: 1 }], loaded[:work_events].map { |r| r.slice(:labels, :units) }
    assert_equal 1, loaded[:work_events].first[:events][:"sql.active_record"][:count]

    # Nothing recorded: no key at all (files as before).
    assert_nil Rperf.snapshot(clear: true)[:work_events]

    # rperf 0.11.1 reads the file, the key kept as given, and reports it.
    lib = CompatProbe::Compare.live_peer_lib or return
    read = "require 'rperf'; d = Rperf.load(ARGV[0]); print Marshal.dump([d[:work_events], d[:aggregated_samples].size])"
    env = ENV.keys.grep(/\A(RPERF_|BUNDLE|RUBYOPT\z|RUBYLIB\z)/).to_h { |k| [k, nil] }
    out, err, status = Open3.capture3(env, RUBY, "-I", lib, "-e", read, path)
    assert status.success?, err
    assert_equal loaded[:work_events], Marshal.load(out).first # rubocop:disable Security/MarshalLoad
    report = CompatProbe::Compare.rperf_command(lib, "report", "--top", path, chdir: @dir)
    assert_equal 0, report["status"], report["stderr"]
  end

  # The Viewer's table (drawWorkEvents in viewer_other_views.js), in a page of one snapshot (Viewer.static_html, which
  # inlines the script) in headless Chromium: one row per endpoint, the N+1 first.
  def test_the_viewer_shows_a_table_per_endpoint
    skip "chromium is not installed (script/bootstrap consumers)" unless File.executable?(ENV.fetch("CHROMIUM", "/usr/bin/chromium"))
    skip "npm packages are not installed (script/bootstrap consumers)" unless File.directory?(File.join(ROOT, "node_modules/playwright-core"))

    Rperf.start(mode: :wall, defer: true)
    client = app
    2.times { client.get("/posts") }
    client.get("/posts/2")
    data = Rperf.snapshot(clear: true)
    path = tmp("page.html")
    File.write(path, Rperf::Viewer.static_html(data))
    out, err, status = Open3.capture3("node", File.join(ROOT, "test/consumers/work_events_check.js"), "file://#{path}", chdir: ROOT)
    assert status.success?, "work_events_check.js failed:\n#{err}\n#{out}"
    page = JSON.parse(out.lines.last)
    assert_empty page["errors"]
    refute page["hidden"]
    assert_equal "Events per request or job: 3 in 2 endpoints and jobs", page["summary"]
    assert_equal ["endpoint / job", "runs", "render_template / run", "sql / run"], page["head"]
    assert_equal [["GET /posts", "2"], ["GET /posts/:id", "1"]], page["rows"].map { |r| r["cells"].first(2) }
    assert_match(/\A6\.0 \(max 6\) · /, page["rows"][0]["cells"][3], "the N+1: 6 queries per request")
    assert_equal({ "sql.active_record" => [12, 6], "render_template.action_view" => [2, 1] }, page["rows"][0]["counts"])
  end

  def test_the_table_is_bounded_by_max_label_sets
    Rperf.start(mode: :wall, defer: true, max_label_sets: 3)
    mw = Rperf::RackMiddleware.new(->(_) { ActiveSupport::Notifications.instrument("sql.active_record", sql: "SELECT 1") {}; [200, {}, []] },
                                   label: :raw)
    client = Rack::MockRequest.new(mw)
    10.times { |i| client.get("/page#{i}") }
    rows = Rperf.snapshot(clear: true)[:work_events]
    assert_equal 4, rows.size, "3 endpoints, then one row for the rest"
    other = rows.find { |r| r[:labels][:endpoint] == "(other)" }
    assert_equal [7, 7], [other[:units], other[:events][:"sql.active_record"][:count]]
  end
end
