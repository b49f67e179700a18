# frozen_string_literal: true

require_relative "web_helper"
require "rperf/viewer"

# Rperf::Viewer over real HTTP (Puma on 127.0.0.1): routes, headers, the JSON it serves, access
# control, snapshot history and directories with bad files.
class ViewerTest < Minitest::Test
  include WebTestHelper

  APP = ->(_env) { [200, { "content-type" => "text/plain" }, ["the app\n"]] }

  def work(seconds = 0.02) = burn_cpu(seconds)

  def nest(depth, seconds) = depth.zero? ? work(seconds) : nest(depth - 1, seconds)

  def profile(mode: :cpu, **opts)
    Rperf.start(mode: mode, **opts) { work }
  end

  def get_json(port, path)
    response = http_get(port, path)
    [response, JSON.parse(response.body)]
  end

  # The root-first frame names of one node of the payload's prefix tree.
  def stack_of(payload, node)
    names = []
    while node >= 0
      names.unshift(payload["frames"][payload["nodes"]["frame"][node]][0])
      node = payload["nodes"]["parent"][node]
    end
    names
  end

  def test_routes_headers_and_json
    data = profile
    viewer = Rperf::Viewer.new(APP)
    viewer.add_snapshot(data)
    assert_same viewer, Rperf::Viewer.instance
    with_puma(viewer) do |port|
      assert_equal "the app\n", http_get(port, "/").body, "other paths go to the app"
      redirect = http_get(port, "/rperf")
      assert_equal "301", redirect.code
      assert_equal "/rperf/", redirect["location"]

      page = http_get(port, "/rperf/")
      assert_equal "200", page.code
      assert_match %r{\Atext/html}, page["content-type"]
      csp = page["content-security-policy"]
      assert_includes csp, "default-src 'none'"
      assert_includes csp, "script-src 'self'"
      refute_match %r{https?:|\*}, csp, "no external origin"
      assert_equal "DENY", page["x-frame-options"]
      refute_match %r{(src|href)="(https?:)?//}, page.body, "the page loads nothing from another host"

      %w[viewer.js viewer.css vendor/d3.min.js vendor/d3-flamegraph.min.js].each do |asset|
        response = http_get(port, "/rperf/assets/#{asset}")
        assert_equal "200", response.code, asset
        assert_equal File.binread(File.join(Rperf::Viewer::ASSET_DIR, asset)), response.body
      end
      %w[/rperf/assets/../viewer.rb /rperf/assets/vendor/LICENSE.d3 /rperf/assets/index.html /rperf/nothing].each do |path|
        assert_equal "404", http_get(port, path).code, path
      end

      list_response, list = get_json(port, "/rperf/snapshots")
      assert_equal "no-store", list_response["cache-control"]
      assert_equal 1, list.size
      entry = list.first
      assert_equal 1, entry["id"]
      assert_equal "cpu", entry["mode"]
      assert_equal data[:sampling_count], entry["sampling_count"]
      assert_equal data[:aggregated_samples].sum { |s| s[1] }, entry["total_weight_ns"]
      assert_equal Process.pid, entry.dig("meta", "pid")
      refute entry.key?("samples"), "the list carries meta and summary only"

      _, body = get_json(port, "/rperf/snapshots/1")
      assert_equal data[:aggregated_samples].sum { |s| s[1] }, body["samples"].sum { |s| s[1] }
      assert_equal 0, body.dig("pruned", "samples")
      assert_nil body["timeline"]
      # Each sample's node is its stack, root first, as in the profile.
      expected = data[:aggregated_samples].map { |frames, w, seq| [frames.reverse.map { |f| f[1] }, w, seq] }.sort
      actual = body["samples"].map { |node, w, seq| [stack_of(body, node), w, seq] }.sort
      assert_equal expected, actual

      assert_equal "404", http_get(port, "/rperf/snapshots/999").code
      assert_equal({ "error" => "no snapshot 999" }, JSON.parse(http_get(port, "/rperf/snapshots/999").body))
      post = http_request(port, Net::HTTP::Post.new("/rperf/snapshots"))
      assert_equal "405", post.code
    end
  end

  def test_access_is_loopback_only_by_default
    viewer = Rperf::Viewer.new(APP)
    call = ->(v, addr, extra = {}) { v.call({ "REQUEST_METHOD" => "GET", "PATH_INFO" => "/rperf/snapshots", "REMOTE_ADDR" => addr }.merge(extra))[0] }
    assert_equal 200, call.(viewer, "127.0.0.1")
    assert_equal 200, call.(viewer, "127.8.9.10")
    assert_equal 200, call.(viewer, "::1")
    assert_equal 200, call.(viewer, "::ffff:127.0.0.1")
    assert_equal 403, call.(viewer, "203.0.113.7")
    assert_equal 403, call.(viewer, "10.1.2.3")
    assert_equal 403, call.(viewer, "not an address")
    assert_equal 403, call.(viewer, nil)
    status, headers, body = viewer.call("REQUEST_METHOD" => "GET", "PATH_INFO" => "/rperf/", "REMOTE_ADDR" => "198.51.100.1")
    assert_equal 403, status
    assert_match %r{\Atext/plain}, headers["content-type"]
    assert_match(/loopback addresses only .*198\.51\.100\.1/, body.join)
    assert_equal 200, viewer.call("REQUEST_METHOD" => "GET", "PATH_INFO" => "/", "REMOTE_ADDR" => "203.0.113.7")[0], "the app itself is open"

    networks = Rperf::Viewer.new(APP, allow: ["10.0.0.0/8", "2001:db8::/32"])
    assert_equal 200, call.(networks, "10.1.2.3")
    assert_equal 200, call.(networks, "2001:db8::5")
    assert_equal 403, call.(networks, "127.0.0.1")
    assert_equal 200, call.(Rperf::Viewer.new(APP, allow: :any), "203.0.113.7")
    assert_equal 200, call.(Rperf::Viewer.new(APP, allow: ->(env) { env["HTTP_X_OPS"] == "1" }), "203.0.113.7", "HTTP_X_OPS" => "1")
    _, err = capture_io { assert_equal 403, call.(Rperf::Viewer.new(APP, allow: ->(_) { raise "boom" }), "127.0.0.1") }
    assert_match(/boom/, err)

    assert_raises(ArgumentError) { Rperf::Viewer.new(APP, allow: ["not-a-network"]) }
    assert_raises(ArgumentError) { Rperf::Viewer.new(APP, allow: :everyone) }
    assert_raises(ArgumentError) { Rperf::Viewer.new(APP, auth: "secret") }
    assert_raises(ArgumentError) { Rperf::Viewer.new(APP, max_snapshots: 0) }
    assert_raises(ArgumentError) { Rperf::Viewer.new(APP, path: "rperf") }
  end

  def test_auth_hook_over_http
    token = "t0k3n"
    viewer = Rperf::Viewer.new(APP, path: "/ops/profiler", auth: ->(env) { env["HTTP_AUTHORIZATION"] == "Bearer #{token}" })
    with_puma(viewer) do |port|
      assert_equal "403", http_get(port, "/ops/profiler/").code
      assert_equal "403", http_get(port, "/ops/profiler/snapshots", "authorization" => "Bearer wrong").code
      assert_equal "200", http_get(port, "/ops/profiler/snapshots", "authorization" => "Bearer #{token}").code
      assert_equal "the app\n", http_get(port, "/rperf/").body, "the default path is free when another is chosen"
    end
  end

  def test_history_take_snapshot_and_auto_snapshot
    viewer = Rperf::Viewer.new(nil, max_snapshots: 2)
    assert_nil viewer.take_snapshot!, "no session, no snapshot"
    Rperf.start(mode: :cpu)
    3.times do
      work(0.01)
      refute_nil viewer.take_snapshot!
    end
    ids = viewer.snapshot_list.map { |s| s[:id] }
    assert_equal [2, 3], ids, "only the last max_snapshots in-memory snapshots are kept"
    assert(viewer.snapshot_list.all? { |s| s[:total_weight_ns].positive? })

    viewer.auto_snapshot(every: 0.05)
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 5
    sleep 0.02 until viewer.snapshot_list.last[:id] >= 5 || Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
    viewer.stop_auto_snapshot
    assert_operator viewer.snapshot_list.last[:id], :>=, 5
    assert_equal 2, viewer.snapshot_list.size
    assert_raises(ArgumentError) { viewer.auto_snapshot(every: 0) }
    assert_raises(ArgumentError) { viewer.add_snapshot({ mode: :cpu }) }
  end

  def test_snapshot_dir_time_travel_with_a_corrupt_file
    Dir.mktmpdir("rperf-viewer") do |dir|
      older = profile
      Rperf.save(File.join(dir, "b-older.json.gz"), older)
      sleep 0.01
      newer = profile(mode: :wall)
      Rperf.save(File.join(dir, "a-newer.json"), newer)
      # The list follows meta created_at, not file names nor mtimes.
      File.utime(Time.now + 60, Time.now + 60, File.join(dir, "b-older.json.gz"))
      File.binwrite(File.join(dir, "c-corrupt.json.gz"), "\x1f\x8b".b + Random.bytes(200))
      File.write(File.join(dir, "d-truncated.json"), File.read(File.join(dir, "a-newer.json"))[0, 300])
      File.write(File.join(dir, "ignored.txt"), "not a profile")

      viewer = Rperf::Viewer.new(APP)
      assert_equal 4, viewer.add_snapshot_dir(dir)
      assert_raises(ArgumentError) { viewer.add_snapshot_dir(File.join(dir, "missing")) }
      with_puma(viewer) do |port|
        _, list = get_json(port, "/rperf/snapshots")
        assert_equal %w[a-newer.json b-older.json.gz c-corrupt.json.gz d-truncated.json], list.map { |s| s["file"] }.sort
        good, bad = list.partition { |s| %w[a-newer.json b-older.json.gz].include?(s["file"]) }
        by_creation = good.sort_by { |s| [Time.iso8601(s.dig("meta", "created_at")), s["file"]] }
        assert_equal by_creation, good, "sorted by creation time (then name), not by mtime"
        assert_nil bad.find { |s| s["file"] == "c-corrupt.json.gz" }["meta"]
        by_file = good.to_h { |s| [s["file"], s] }
        assert_equal "cpu", by_file.dig("b-older.json.gz", "mode")
        assert_equal "wall", by_file.dig("a-newer.json", "mode")
        assert_equal older[:sampling_count], by_file.dig("b-older.json.gz", "sampling_count")
        assert_in_delta older[:duration_ns], by_file.dig("b-older.json.gz", "duration_ns"), 1e5

        good.each do |entry|
          response, body = get_json(port, "/rperf/snapshots/#{entry['id']}")
          assert_equal "200", response.code
          assert_operator body["samples"].size, :>, 0
        end
        bad.each do |entry|
          response, body = get_json(port, "/rperf/snapshots/#{entry['id']}")
          assert_equal "422", response.code
          assert_includes body["error"], entry["file"]
        end
        _, list = get_json(port, "/rperf/snapshots")
        assert_equal bad.map { |s| s["id"] }.sort, list.select { |s| s["error"] }.map { |s| s["id"] }.sort, "unreadable files are marked"
        assert_equal "200", http_get(port, "/rperf/snapshots/#{good.first['id']}").code, "the rest still work"
      end
    end
  end

  def test_large_profiles_are_bounded
    # Recursion to 40 depths: 40 distinct stacks at least.
    data = Rperf.start(mode: :wall, aggregate: false) { 40.times { |depth| nest(depth, 0.002 + (depth % 5) * 0.0005) } }
    total = data[:aggregated_samples].sum { |s| s[1] }
    assert_operator data[:aggregated_samples].size, :>, 30
    viewer = Rperf::Viewer.new(nil, max_samples: 10, max_timeline: 20)
    viewer.add_snapshot(data)
    status, _, body = viewer.call("REQUEST_METHOD" => "GET", "PATH_INFO" => "/rperf/snapshots/1", "REMOTE_ADDR" => "127.0.0.1")
    assert_equal 200, status
    payload = JSON.parse(body.join)
    kept = payload["samples"].reject { |node, *| stack_of(payload, node) == ["[pruned]"] }
    assert_equal 10, kept.size
    heaviest = data[:aggregated_samples].map { |s| s[1] }.max(10).sum
    assert_equal heaviest, kept.sum { |s| s[1] }, "the heaviest stacks are kept"
    assert_equal total - heaviest, payload.dig("pruned", "weight_ns")
    assert_equal total, payload["samples"].sum { |s| s[1] }, "pruning keeps every nanosecond"
    timeline = payload["timeline"]
    assert_operator timeline["samples"].size, :<=, 20
    assert_equal data[:raw_samples].size, timeline["source_count"]
    assert_operator timeline["quantum_ns"], :>, 0
    assert_equal data[:raw_samples].sum { |s| s[1] }, timeline["samples"].sum { |s| s[1] }
    times = timeline["samples"].map(&:last)
    assert_equal times.sort, times
  end

  # Samples with no Ruby frame (a thread sampled around the program, as under `rperf record`)
  # are a node of their own: every sample is in the tree, so totals add up in every view.
  def test_samples_without_frames_are_a_node_of_the_tree
    frame = ["app.rb", "Object#work"].freeze
    data = { mode: :wall, frequency: 1000, aggregated_samples: [[[frame], 700, 1, 0], [[], 200, 1, 0], [[], 100, 2, 1]],
             raw_samples: [[[frame], 700, 1, 0, 0, 1_000], [[], 200, 1, 0, 0, 2_000], [[], 100, 2, 1, 0, 3_000]],
             label_sets: [{}, { role: "worker" }] }
    payload = JSON.parse(JSON.generate(Rperf::Viewer::Payload.build(data, max_samples: 100, max_timeline: 100)))
    nodes = payload["samples"].map(&:first)
    assert(nodes.all? { |n| n >= 0 }, "every sample has a node: #{payload['samples']}")
    assert_equal [["Object#work"], ["(no Ruby frames)"], ["(no Ruby frames)"]], nodes.map { |n| stack_of(payload, n) }
    assert_equal [1_000, 2_000, 3_000], payload.dig("timeline", "samples").map(&:last)
    assert_equal nodes, payload.dig("timeline", "samples").map(&:first)
  end

  def test_label_keys_and_bytes_reach_the_page_as_strings
    data = Rperf.start(mode: :wall) do
      Rperf.label(endpoint: "GET /a") { work(0.01) }
      Rperf.label("tenant" => "acme", bin: "\xff\xfe".b) { work(0.01) }
    end
    Dir.mktmpdir do |dir|
      path = File.join(dir, "labels.json.gz")
      Rperf.save(path, data)
      viewer = Rperf::Viewer.new(nil)
      viewer.add_snapshot(data)
      viewer.add_snapshot_dir(dir)
      [1, 2].each do |id|
        status, _, body = viewer.call("REQUEST_METHOD" => "GET", "PATH_INFO" => "/rperf/snapshots/#{id}", "REMOTE_ADDR" => "127.0.0.1")
        assert_equal 200, status
        sets = JSON.parse(body.join)["label_sets"]
        assert_includes sets, { "endpoint" => "GET /a" }
        assert(sets.any? { |s| s["tenant"] == "acme" && s["bin"].valid_encoding? }, sets.inspect)
      end
    end
  end

  # `script/run web`: the example app (examples/web_app.rb) on Puma, driven by its own bounded
  # load, with the viewer's URL printed. --check prints the snapshot list and exits; without it
  # the server stays up for a browser until Ctrl-C.
  def test_script_run_web_starts_the_example_app_and_prints_the_viewer_url
    env = { "RUBY" => RperfTestHelper::RUBY }
    out, err, status = Open3.capture3(env, File.join(RperfTestHelper::ROOT, "script/run"), "web", "--check")
    assert status.success?, err
    assert_match %r{\Arperf viewer: http://127\.0\.0\.1:\d+/rperf/  \(page: 200 text/html}, out.lines[-2]
    list = JSON.parse(out.lines.last)
    assert_equal [1, 2, 3], list.map { |s| s["id"] }
    assert(list.all? { |s| s["mode"] == "wall" && s["sampling_count"].positive? && s["total_weight_ns"].positive? })

    Open3.popen3(env, File.join(RperfTestHelper::ROOT, "script/run"), "web") do |stdin, stdout, stderr, wait|
      stdin.close
      line = Timeout.timeout(120) { stdout.gets }
      url = line.to_s[%r{http://127\.0\.0\.1:\d+/rperf/}]
      assert url, "the viewer URL: #{line.inspect} #{stderr.read_nonblock(4096, exception: false)}"
      assert_match(/\(Ctrl-C to stop\)/, line)
      page = Net::HTTP.get_response(URI(url))
      assert_equal "200", page.code
      assert_includes page.body, '<nav id="tabs"'
      snapshots = JSON.parse(Net::HTTP.get(URI("#{url}snapshots")))
      assert_equal 3, snapshots.size
      body = JSON.parse(Net::HTTP.get(URI("#{url}snapshots/3")))
      endpoints = body["label_sets"].filter_map { |set| set["endpoint"] }.uniq.sort
      assert_equal ["GET /checkout", "GET /orders/:id", "GET /search"], endpoints
      Process.kill("INT", wait.pid)
      assert Timeout.timeout(30) { wait.value }.success?, "stops cleanly on Ctrl-C"
    end
  end
end
