# frozen_string_literal: true

require "base64"
require "open3"
require "tmpdir"
require "fileutils"
require_relative "web_helper"
require "rperf/viewer"
require "minitest/mock"

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
      assert_includes csp, "script-src 'self' 'wasm-unsafe-eval'", "the page compiles its page model, and evaluates nothing"
      refute_match %r{https?:|\*|'unsafe-eval'}, csp, "no external origin, no eval"
      assert_equal "DENY", page["x-frame-options"]
      refute_match %r{(src|href)="(https?:)?//}, page.body, "the page loads nothing from another host"

      [*Rperf::Viewer::SCRIPTS, "viewer.css", "page_model.wasm"].each do |asset|
        response = http_get(port, "/rperf/assets/#{asset}")
        assert_equal "200", response.code, asset
        assert_equal File.binread(File.join(Rperf::Viewer::ASSET_DIR, asset)), response.body
      end
      wasm = http_get(port, "/rperf/assets/page_model.wasm")
      assert_equal "application/wasm", wasm["content-type"], "WebAssembly.instantiateStreaming's type"
      assert_equal "\0asm".b, wasm.body.b[0, 4], "a WebAssembly module"
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
      # rperf 0.11's list entry, then ours (issue 25): the meta and summary a saved file carries.
      assert_equal %w[id taken_at file mode duration_ns sampling_count meta summary total_weight_ns], entry.keys
      assert_equal [Rperf::Meta::FORMAT_VERSION, "cpu", RUBY_VERSION], entry["meta"].values_at("format_version", "mode", "ruby_version")
      assert_equal (data[:duration_ns] / 1e6).round(1), entry.dig("summary", "total_ms")
      assert_equal data[:sampling_count], entry.dig("summary", "samples")
      leaves = data[:aggregated_samples].map { |frames, *| frames.first[1] }
      refute_empty entry.dig("summary", "top_methods")
      assert_empty entry.dig("summary", "top_methods").map { |m| m["name"] } - leaves, "top methods by self time"

      _, body = get_json(port, "/rperf/snapshots/1")
      assert_equal data[:aggregated_samples].sum { |s| s[1] }, body["samples"].sum { |s| s[1] }
      assert_equal 0, body.dig("pruned", "samples")
      assert_nil body["timeline"]
      # Each sample's node is its stack, root first, as in the profile.
      expected = data[:aggregated_samples].map { |frames, w, seq| [frames.reverse.map { |f| f[1] }, w, seq] }.sort
      actual = body["samples"].map { |node, w, seq| [stack_of(body, node), w, seq] }.sort
      assert_equal expected, actual

      missing = http_get(port, "/rperf/snapshots/999")
      assert_equal ["404", "Snapshot not found"], [missing.code, missing.body], "rperf 0.11's answer"
      assert_match %r{\Atext/plain}, missing["content-type"]
      assert_equal ["404", "Not Found"], [http_get(port, "/rperf/nothing").code, http_get(port, "/rperf/nothing").body]
      post = http_request(port, Net::HTTP::Post.new("/rperf/snapshots"))
      assert_equal "405", post.code
    end
  end

  # Rails' router gives a mounted app SCRIPT_NAME = the mount point and PATH_INFO "/" for both
  # "/rperf" and "/rperf/" (Rack::URLMap gives "" for "/rperf"): a mount that works this way.
  def rails_style_mount(app, at)
    lambda do |env|
      path = env["PATH_INFO"].to_s
      next APP.call(env) unless path == at || path.start_with?("#{at}/")

      rest = path.delete_prefix(at)
      app.call(env.merge("SCRIPT_NAME" => "#{env['SCRIPT_NAME']}#{at}", "PATH_INFO" => rest.empty? ? "/" : rest))
    end
  end

  # The page's assets, as the HTML names them.
  def asset_urls(html) = html.scan(/(?:src|href)="([^"]+)"/).flatten

  # Issue 25: rperf 0.11's own Rails example, `mount Rperf::Viewer.new(nil, path: ""), at:
  # "/rperf"`. The page names its assets from the mount point, so it works at /rperf (no
  # trailing slash, as Rails serves it) as at /rperf/; unmounted, path "" is the root.
  def test_an_empty_path_serves_at_the_mount_point
    data = profile
    viewer = Rperf::Viewer.new(nil, path: "")
    viewer.add_snapshot(data)
    assert_equal "", viewer.path
    assert_equal "", Rperf::Viewer.new(nil, path: "/").path
    require "rack/urlmap"
    { "Rack::URLMap" => Rack::URLMap.new("/rperf" => viewer), "Rails-style" => rails_style_mount(viewer, "/rperf") }.each do |how, app|
      with_puma(app) do |port|
        pages = ["/rperf/"]
        at_rperf = http_get(port, "/rperf")
        if how == "Rack::URLMap"
          assert_equal ["301", "/rperf/"], [at_rperf.code, at_rperf["location"]], how
        else
          pages << "/rperf"
        end
        pages.each do |page_path|
          page = http_get(port, page_path)
          assert_equal "200", page.code, "#{how} #{page_path}"
          urls = asset_urls(page.body)
          assert_equal ["viewer.css", *Rperf::Viewer::SCRIPTS].map { |name| "/rperf/assets/#{name}" }.sort,
                       urls.sort, "#{how} #{page_path}"
          urls.each { |url| assert_equal "200", http_get(port, url).code, "#{how} #{url}" }
        end
        _, list = get_json(port, "/rperf/snapshots")
        assert_equal [1], list.map { |e| e["id"] }, how
        response, body = get_json(port, "/rperf/snapshots/1")
        assert_equal "200", response.code, how
        assert_equal data[:aggregated_samples].sum { |s| s[1] }, body["samples"].sum { |s| s[1] }
        assert_equal "the app\n", http_get(port, "/elsewhere").body, how if how == "Rails-style"
      end
    end
    with_puma(viewer) do |port|
      assert_equal ["viewer.css", *Rperf::Viewer::SCRIPTS].map { |name| "/assets/#{name}" }.sort,
                   asset_urls(http_get(port, "/").body).sort
      assert_equal 1, get_json(port, "/snapshots")[1].size
      assert_equal ["404", "Snapshot not found"], http_get(port, "/snapshots/2").then { |r| [r.code, r.body] }
    end
  end

  # Issue 25: rperf 0.11's class methods. render_static_html(data): the self-contained page;
  # samples_to_json(samples, label_sets): its JSON form of them (stacks root first, by label).
  # A checkout whose page model is not built (script/bootstrap wasm not run): the page cannot be
  # made or served whole, and both say how to build it; the other assets are still served.
  def test_a_missing_page_model_says_how_to_build_it
    Dir.mktmpdir("rperf-nowasm") do |dir|
      FileUtils.cp_r(File.join(RperfTestHelper::ROOT, "lib"), dir)
      File.delete(File.join(dir, "lib/rperf/viewer/assets/page_model.wasm"))
      code = <<~RUBY
        require "rperf"
        require "rperf/viewer"
        data = Rperf.start(mode: :wall) { sleep 0.01 }
        begin
          Rperf::Viewer.static_html(data)
        rescue Rperf::Error => e
          puts "static: \#{e.message}"
        end
        app = Rperf::Viewer.new(->(_env) { [404, {}, []] })
        env = { "REQUEST_METHOD" => "GET", "PATH_INFO" => "/rperf/assets/viewer.js", "SCRIPT_NAME" => "", "REMOTE_ADDR" => "127.0.0.1", "HTTP_HOST" => "127.0.0.1" }
        puts "viewer.js: \#{app.call(env)[0]}"
        status, _, body = app.call(env.merge("PATH_INFO" => "/rperf/assets/page_model.wasm"))
        puts "wasm: \#{status} \#{body.join}"
      RUBY
      out, err, status = Open3.capture3(RperfTestHelper::RUBY, "-I#{dir}/lib", "-e", code)
      assert status.success?, err
      assert_match %r{^static: the viewer's page_model.wasm is missing from .*: build it with script/bootstrap wasm$}, out
      assert_match(/^viewer.js: 200$/, out)
      assert_match %r{^wasm: 500 the viewer's page_model.wasm is missing from .*: build it with script/bootstrap wasm$}, out
    end
  end

  def test_render_static_html_and_samples_to_json
    data = Rperf.start(mode: :cpu) { Rperf.label(endpoint: "/nest", depth: 3) { nest(3, 0.02) } }
    html = Rperf::Viewer.render_static_html(data)
    assert_match(/\A<!DOCTYPE html>/, html)
    embedded = JSON.parse(html[%r{<script id="rperf-data" type="application/json">(.*?)</script>}m, 1])
    assert_equal data[:aggregated_samples].sum { |s| s[1] }, embedded.dig("snapshots", "1", "samples").sum { |s| s[1] }
    refute html.match?(/<(script|link|img)\s[^>]*\b(src|href)=/), "nothing is loaded from elsewhere"
    # The page model travels in the file (base64), and the file's CSP lets its scripts compile it.
    model = html[%r{<script id="rperf-page-model" type="application/wasm\+base64">(.*?)</script>}m, 1]
    assert_equal File.binread(File.join(Rperf::Viewer::ASSET_DIR, "page_model.wasm")), Base64.strict_decode64(model)
    # Every script index.html loads, inline in its order, and only those may run.
    scripts = Rperf::Viewer::SCRIPTS.map { |name| File.read(File.join(Rperf::Viewer::ASSET_DIR, name)) }
    assert_equal scripts, html.scan(%r{<script>(.*?)</script>}m).flatten
    hashes = scripts.map { |code| "'sha256-#{Base64.strict_encode64(Digest::SHA256.digest(code))}'" }
    assert_includes html[/Content-Security-Policy" content="([^"]+)"/, 1], "script-src #{hashes.join(' ')} 'wasm-unsafe-eval';"

    samples, label_sets = Rperf::Viewer.samples_to_json(data[:aggregated_samples], data[:label_sets])
    assert_equal data[:aggregated_samples].size, samples.size
    data[:aggregated_samples].zip(samples).each do |(frames, weight, _seq, set), row|
      assert_equal({ stack: frames.reverse.map { |f| f[1] }, weight: weight, label_set_id: set }, row)
    end
    nested = samples.find { |row| row[:stack].count("ViewerTest#nest") == 4 }
    assert nested, "a stack through nest(3..0)"
    assert_equal "ViewerTest#work", nested[:stack][nested[:stack].index("ViewerTest#nest") + 4]
    assert_equal data[:label_sets].map { |set| set.transform_keys(&:to_s) }, label_sets
    assert_includes label_sets, { "endpoint" => "/nest", "depth" => 3 }
    assert_equal [[{ stack: [], weight: 5, label_set_id: 0 }], ["odd"]], Rperf::Viewer.samples_to_json([[[], 5, 1, nil]], ["odd"])
    JSON.generate(samples) # JSON-ready
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
    assert_match(/loopback addresses only.*198\.51\.100\.1/, body.join)
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

  # Issue 44 (6): a refusal names the client or Host and the setting that allows it (as Rails'
  # blocked-host page), and the environment allows it without a code change: Docker's port
  # mapping (the bridge's address) and a reverse proxy on this machine (the site's Host).
  def test_refusals_name_the_setting_and_the_environment_widens_access
    call = lambda do |viewer, addr, host = nil|
      env = { "REQUEST_METHOD" => "GET", "PATH_INFO" => "/rperf/snapshots", "REMOTE_ADDR" => addr }
      env["HTTP_HOST"] = host if host
      status, _, body = viewer.call(env)
      [status, body.join]
    end
    status, body = call.(Rperf::Viewer.new(APP), "172.17.0.1", "localhost:9292")
    assert_equal 403, status
    assert_includes body, "refused a request from 172.17.0.1"
    assert_includes body, "RPERF_VIEWER_ALLOW=172.17.0.1"
    assert_includes body, 'allow: ["172.17.0.1"]'
    status, body = call.(Rperf::Viewer.new(APP), "127.0.0.1", "app.example.com")
    assert_equal 403, status
    assert_includes body, 'Host "app.example.com" is not a loopback name or address'
    assert_includes body, "RPERF_VIEWER_HOSTS=app.example.com"
    assert_includes body, 'hosts: ["app.example.com"]'
    assert_includes call.(Rperf::Viewer.new(APP), nil)[1], "RPERF_VIEWER_ALLOW=any"

    with_env("RPERF_VIEWER_ALLOW" => "172.17.0.0/16, 10.0.0.7") do
      viewer = Rperf::Viewer.new(APP)
      assert_equal 200, call.(viewer, "172.17.0.1", "localhost:9292")[0]
      assert_equal 200, call.(viewer, "10.0.0.7")[0]
      assert_equal 200, call.(viewer, "127.0.0.1")[0], "loopback still"
      assert_equal 403, call.(viewer, "10.0.0.8")[0]
      assert_equal 403, call.(viewer, "172.17.0.1", "app.example.com")[0], "the Host check stays"
      assert_equal 200, call.(Rperf::Viewer.new(APP, allow: ["192.0.2.0/24"]), "10.0.0.7")[0], "added to the code's allow:"
      assert_equal 200, call.(Rperf::Viewer.new(APP, allow: ->(_) { false }), "10.0.0.7")[0], "beside an allow: check"
    end
    with_env("RPERF_VIEWER_HOSTS" => "app.example.com") do
      viewer = Rperf::Viewer.new(APP)
      assert_equal 200, call.(viewer, "127.0.0.1", "app.example.com")[0]
      assert_equal 200, call.(viewer, "127.0.0.1", "APP.example.com:8080")[0]
      assert_equal 200, call.(viewer, "127.0.0.1", "localhost")[0], "loopback names still"
      status, body = call.(viewer, "127.0.0.1", "other.example.com")
      assert_equal 403, status
      assert_includes body, "not one of: a loopback name or address, app.example.com"
      assert_equal 403, call.(viewer, "203.0.113.9", "app.example.com")[0], "the client check stays"
    end
    with_env("RPERF_VIEWER_ALLOW" => "any") do
      assert_equal 200, call.(Rperf::Viewer.new(APP), "203.0.113.9", "app.example.com")[0], "as allow: :any: any Host too"
    end
    with_env("RPERF_VIEWER_HOSTS" => "any") do
      assert_equal 200, call.(Rperf::Viewer.new(APP), "127.0.0.1", "app.example.com")[0]
    end
    with_env("RPERF_VIEWER_ALLOW" => "not-a-network") do
      assert_match(/RPERF_VIEWER_ALLOW "not-a-network" is not an address or CIDR/, assert_raises(ArgumentError) { Rperf::Viewer.new(APP) }.message)
    end
  end

  def with_env(vars)
    saved = vars.keys.to_h { [_1, ENV[_1]] }
    ENV.update(vars)
    yield
  ensure
    ENV.update(saved)
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

  # Issue 48.5: the page's "snapshot now" (POST <path>/snapshots with the page's header) takes
  # a snapshot at once; without the header (a form, another site's page) it is refused, and
  # with no session running it says so.
  def test_snapshot_now
    viewer = Rperf::Viewer.new(nil)
    post = lambda do |path = "/rperf/snapshots", **headers|
      viewer.call({ "REQUEST_METHOD" => "POST", "PATH_INFO" => path, "QUERY_STRING" => "", "REMOTE_ADDR" => "127.0.0.1" }.merge(headers.transform_keys(&:to_s)))
    end
    status, _, body = post.(HTTP_X_RPERF_SNAPSHOT: "1")
    assert_equal 409, status
    assert_match(/no profiling session is running/, body.join)
    Rperf.start(mode: :cpu)
    work(0.02)
    assert_equal 405, post.().first, "not without the page's header"
    status, _, body = post.(HTTP_X_RPERF_SNAPSHOT: "1")
    assert_equal 201, status
    id = JSON.parse(body.join).fetch("id")
    assert_equal [id], viewer.snapshot_list.map { |s| s[:id] }
    assert_equal 405, post.("/rperf/snapshots/#{id}", HTTP_X_RPERF_SNAPSHOT: "1").first, "only the list takes a POST"
  ensure
    Rperf.stop if Rperf.running?
  end

  # Issue 44 (5): rperf 0.11's entry is {id:, taken_at:, data:}, its data carrying :meta and
  # :summary (as a saved file does); scripts read entry[:data][:summary].
  def test_take_snapshot_entry_has_rperf_0_11s_shape
    viewer = Rperf::Viewer.new(APP)
    Rperf.start(mode: :cpu)
    work(0.03)
    entry = viewer.take_snapshot!
    Rperf.stop
    assert_kind_of Integer, entry[:id]
    assert_kind_of Time, entry[:taken_at]
    data = entry[:data]
    assert_equal 1, data[:meta][:format_version]
    assert_equal :cpu, data[:mode]
    summary = data[:summary]
    assert_operator summary[:samples], :>, 0
    assert_operator summary[:total_ms], :>, 0
    assert_kind_of String, summary[:top_methods].first[:name]
    assert_same data[:summary], entry[:summary], "our list reads the same summary"

    added = viewer.add_snapshot(profile)
    assert_equal 1, added[:data][:meta][:format_version]
    with_puma(viewer) do |port|
      _, list = get_json(port, "/rperf/snapshots")
      assert_equal [entry[:id], added[:id]], list.map { _1["id"] }
      assert_equal summary[:samples], list.first["summary"]["samples"]
      response, body = get_json(port, "/rperf/snapshots/#{entry[:id]}")
      assert_equal "200", response.code
      assert_equal summary[:total_ms], body["summary"]["total_ms"]
    end
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
      # As rperf 0.11: a directory that does not exist (yet) adds nothing.
      assert_equal 0, viewer.add_snapshot_dir(File.join(dir, "missing"))
      assert_equal 0, viewer.add_snapshot_dir(File.join(dir, "ignored.txt"))
      with_puma(viewer) do |port|
        _, list = get_json(port, "/rperf/snapshots")
        assert_equal %w[a-newer.json b-older.json.gz c-corrupt.json.gz d-truncated.json], list.map { |s| s["file"] }.sort
        good, bad = list.partition { |s| %w[a-newer.json b-older.json.gz].include?(s["file"]) }
        # Both files are of the same commit (when there is one): then by creation time, then name.
        by_creation = good.sort_by do |s|
          created = Time.iso8601(s.dig("meta", "created_at"))
          committed = s.dig("meta", "git", "committed_at")
          [committed ? Time.iso8601(committed) : created, created, s["file"]]
        end
        assert_equal by_creation, good, "sorted by commit, then creation time (then name), not by mtime"
        assert_nil bad.find { |s| s["file"] == "c-corrupt.json.gz" }["meta"]
        by_file = good.to_h { |s| [s["file"], s] }
        assert_equal "cpu", by_file.dig("b-older.json.gz", "mode")
        assert_equal "wall", by_file.dig("a-newer.json", "mode")
        # As rperf 0.11's list: a file's counts are in its summary (the body has them).
        assert_nil by_file.dig("b-older.json.gz", "sampling_count")
        assert_nil by_file.dig("b-older.json.gz", "duration_ns")
        assert_equal older[:sampling_count], by_file.dig("b-older.json.gz", "summary", "samples")
        assert_in_delta older[:duration_ns] / 1e6, by_file.dig("b-older.json.gz", "summary", "total_ms"), 0.1
        _, older_body = get_json(port, "/rperf/snapshots/#{by_file.dig('b-older.json.gz', 'id')}")
        assert_equal [older[:sampling_count], older[:duration_ns]], older_body.values_at("sampling_count", "duration_ns")

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

  # Issue 30 (4): a file whose meta holds 1e400 (Infinity) or nests deeper than JSON.generate's
  # 100 levels made GET <path>/snapshots answer 500 for every file. It is listed as unreadable,
  # with why; the others keep working.
  def test_a_file_with_an_unservable_meta_does_not_empty_the_list
    Dir.mktmpdir("rperf-viewer") do |dir|
      Rperf.save(File.join(dir, "a-good.json"), profile)
      text = File.read(File.join(dir, "a-good.json"))
      assert_includes text, '"meta":{'
      File.write(File.join(dir, "b-infinite.json"), text.sub('"meta":{', '"meta":{"odd":1e400,'))
      File.write(File.join(dir, "c-deep.json"), text.sub('"meta":{', %("meta":{"deep":#{'[' * 150}#{']' * 150},)))
      viewer = Rperf::Viewer.new(APP)
      assert_equal 3, viewer.add_snapshot_dir(dir)
      with_puma(viewer) do |port|
        response, list = get_json(port, "/rperf/snapshots")
        assert_equal "200", response.code
        by_file = list.to_h { |s| [s["file"], s] }
        assert_equal %w[a-good.json b-infinite.json c-deep.json], by_file.keys.sort
        assert_nil by_file["a-good.json"]["error"]
        assert_equal RUBY_VERSION, by_file.dig("a-good.json", "meta", "ruby_version")
        %w[b-infinite.json c-deep.json].each do |bad|
          assert_match(/\A#{Regexp.escape(bad)}: its meta cannot be shown \(.+\)/, by_file[bad]["error"])
          assert_nil by_file[bad]["meta"]
        end
        response, body = get_json(port, "/rperf/snapshots/#{by_file['a-good.json']['id']}")
        assert_equal "200", response.code
        assert_operator body["samples"].size, :>, 0
      end
      # An in-memory snapshot whose meta cannot be sent: that entry says why, the rest are listed.
      memory = Rperf::Viewer.new(APP)
      memory.add_snapshot(profile)
      memory.add_snapshot(profile.merge(meta: { "ratio" => Float::NAN }))
      with_puma(memory) do |port|
        response, list = get_json(port, "/rperf/snapshots")
        assert_equal "200", response.code
        assert_equal [nil], list.map { |s| s["error"] }.first(1)
        assert_match(/\Asnapshot 2: cannot be shown \(.*NaN/, list[1]["error"])
        assert_equal "422", http_get(port, "/rperf/snapshots/2").code
        assert_equal "200", http_get(port, "/rperf/snapshots/1").code
      end
    end
  end

  # Issue 30 (5): a page of another site can rebind its name to 127.0.0.1 and read the viewer
  # as same-origin. Its requests carry its own Host: refused unless the Host names loopback.
  def test_a_host_that_is_not_loopback_is_refused
    viewer = Rperf::Viewer.new(APP)
    viewer.add_snapshot(profile)
    with_puma(viewer) do |port|
      ["127.0.0.1:#{port}", "localhost:#{port}", "LOCALHOST", "[::1]:#{port}", "127.0.0.2:#{port}", "localhost.", "app.localhost:#{port}"].each do |host|
        assert_equal "200", http_get(port, "/rperf/snapshots/1", "host" => host).code, host
      end
      ["attacker.example:#{port}", "attacker.example", "127.0.0.1.attacker.example:#{port}", "localhost.attacker.example", "localhost.example", "evil-localhost",
       "[2001:db8::1]:#{port}", "10.0.0.1", "127.0.0.1:#{port}@evil", ""].each do |host|
        response = http_get(port, "/rperf/snapshots/1", "host" => host)
        assert_equal "403", response.code, host
        refute_includes response.body, "samples", host
        assert_match(/Host .* is not a loopback name or address.*DNS rebinding.*hosts:/m, response.body, host)
      end
      assert_equal "the app\n", http_get(port, "/", "host" => "attacker.example").body, "the app itself is not affected"
    end
    named = Rperf::Viewer.new(APP, hosts: ["profiler.internal"])
    with_puma(named) do |port|
      assert_equal "200", http_get(port, "/rperf/snapshots", "host" => "profiler.internal:#{port}").code
      assert_equal "403", http_get(port, "/rperf/snapshots", "host" => "attacker.example").code
    end
    open = Rperf::Viewer.new(APP, allow: :any)
    with_puma(open) { |port| assert_equal "200", http_get(port, "/rperf/snapshots", "host" => "attacker.example").code }
    assert_raises(ArgumentError) { Rperf::Viewer.new(APP, hosts: :everyone) }
    assert_raises(ArgumentError) { Rperf::Viewer.new(APP, hosts: [1]) }
  end

  def test_large_profiles_are_bounded
    # Recursion to 40 depths: 40 distinct stacks at least. Each depth burns 8-12 ms of CPU, so a
    # busy machine (ticks handled late, when the thread runs again) still samples every depth.
    data = Rperf.start(mode: :wall, aggregate: false) { 40.times { |depth| nest(depth, 0.008 + (depth % 5) * 0.001) } }
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
    # A merged row ends where its last sample ended (not at its slot's start: up to a slot early).
    ends = data[:raw_samples].map(&:last)
    assert_empty times - ends, "every row ends at a sample's time"
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

  def get_local(viewer, path, query = "")
    status, _, body = viewer.call("REQUEST_METHOD" => "GET", "PATH_INFO" => path, "QUERY_STRING" => query, "REMOTE_ADDR" => "127.0.0.1")
    [status, JSON.parse(body.join)]
  end

  # [name, total_ns, self_ns] of the nodes the viewer sends of `tree`: its visit, down to the
  # payload's threshold.
  def visited(tree, min_percent)
    tree.visit(min_total_ns: (tree.total_ns * min_percent / 100.0).ceil).filter_map { |n, e| [n.name, n.total_ns, n.self_ns] if e == :enter }
  end

  def sent(call_tree) = call_tree["nodes"].map { |_, m, total, self_ns| [call_tree["methods"][m][0], total, self_ns] }

  # Issue 17: the call-tree tab is Rperf::CallTree's, node for node: the payload's tree (every
  # sample) and the trees the page asks for with its filters (labels, "not set", a thread, a
  # time range) have CallTree's totals; GVL time is a leaf of its own.
  def test_call_tree_is_rperf_call_tree_for_every_filter
    data = Rperf.start(mode: :wall, aggregate: false) do
      worker = Thread.new { Rperf.label(role: "worker") { nest(3, 0.03) } }
      Rperf.label(endpoint: "GET /a") { nest(5, 0.03); sleep 0.02 }
      worker.join
    end
    weight = ->(&keep) { data[:aggregated_samples].sum { |s| keep.(s) ? s[1] : 0 } }
    viewer = Rperf::Viewer.new(nil)
    viewer.add_snapshot(data)
    _, payload = get_local(viewer, "/rperf/snapshots/1")
    refute payload.key?("call_tree"), "the page computes its trees"
    call_tree = page_view(data, "call_tree")
    tree = Rperf::CallTree.new(data)
    assert_equal tree.total_ns, call_tree["total_ns"]
    assert_equal weight.() { true }, call_tree["total_ns"]
    assert_equal ["[root]", tree.total_ns], [call_tree["methods"][call_tree["nodes"][0][1]][0], call_tree["nodes"][0][2]]
    assert_equal visited(tree, call_tree["min_percent"]), sent(call_tree)
    assert_equal tree.size, call_tree["node_count"]
    assert_includes sent(call_tree).map(&:first), "[GVL blocked]", "sleep's time ends in its own leaf"
    # A node's children are listed after it, with their parent's index.
    call_tree["nodes"].each_with_index { |(parent, *), i| assert_operator parent, :<, i }

    main_seq = data[:aggregated_samples].find { |s| labels_of(data, s)&.[](:endpoint) }[2]
    t0, t1 = data[:raw_samples].map(&:last).minmax
    middle = [t0 + (t1 - t0) / 3, t0 + 2 * (t1 - t0) / 3]
    in_range = data[:raw_samples].sum { |s| [[s.last, middle[1]].min - [s.last - s[1], middle[0]].max, 0].max.clamp(0, s[1]) }
    expected = {
      { label: { key: "endpoint", values: ["GET /a"] } } => [Rperf::CallTree.new(data, filter: { endpoint: "GET /a" }), weight.() { |s| labels_of(data, s)&.[](:endpoint) }],
      { label: { key: "%GVL", values: ["blocked"] } } => [Rperf::CallTree.new(data, filter: { "%GVL" => "blocked" }), weight.() { |s| labels_of(data, s)&.[](:"%GVL") == "blocked" }],
      { label: { key: "endpoint", unset: true } } => [nil, weight.() { |s| !labels_of(data, s)&.key?(:endpoint) }],
      { thread: main_seq } => [nil, weight.() { |s| s[2] == main_seq }],
      { range: middle } => [nil, in_range],
    }
    shown = page_views(data, expected.keys.map { |filter| { view: "call_tree", filter: filter } })
    expected.each_with_index do |(query, (expected_tree, expected_ns)), i|
      filtered = shown[i]
      assert_equal expected_ns, filtered["total_ns"], query
      assert_operator expected_ns, :>, 0, query
      assert_operator expected_ns, :<, tree.total_ns, query
      assert_equal visited(expected_tree, filtered["min_percent"]), sent(filtered), query if expected_tree
    end
  end

  # [method, self_ns, total_ns, recursive, callers, callees, caller count, callee count] per
  # entry of `table` (Rperf::MethodTable) the methods tab must show: those above min_percent of
  # the total, at most the max_methods heaviest by total and by self, in the table's order; at
  # most max_arcs callers and callees each, above min_percent too. Methods as MethodRef#to_s
  # (name, file and line).
  def table_rows(table, payload)
    min_ns = (table.total_ns * payload["min_percent"] / 100.0).ceil
    heavy = table.entries.select { |e| e.total_ns >= min_ns }
    by_self = heavy.sort_by.with_index { |e, i| [-e.self_ns, i] }
    kept = heavy.first(payload["max_methods"]) + by_self.first(payload["max_methods"])
    arcs = lambda do |list|
      list.select { |a| a.total_ns >= min_ns }.first(payload["max_arcs"]).map { |a| [a.method.to_s, a.total_ns] }.sort_by { |n, ns| [-ns, n] }
    end
    heavy.select { |e| kept.any? { |k| k.equal?(e) } }.map do |e|
      [e.method.to_s, e.self_ns, e.total_ns, e.recursive?, arcs.(e.callers), arcs.(e.callees), e.callers.size, e.callees.size]
    end
  end

  def sent_rows(payload)
    ref = ->(m) { Rperf::MethodRef.new(*payload["methods"][m]).to_s }
    # Arcs of equal weight come in method-id order, and ids follow the order a profile met its
    # methods, which differs between the payload's filtered profile and the test's own: compared
    # by weight, then name.
    arcs = ->(list) { list.map { |m, ns| [ref.(m), ns] }.sort_by { |n, ns| [-ns, n] } }
    payload["entries"].map do |m, self_ns, total, recursive, callers, callees, caller_count, callee_count|
      [ref.(m), self_ns, total, recursive == 1, arcs.(callers), arcs.(callees), caller_count, callee_count]
    end
  end

  # The profile's own samples kept by `keep` (and raw ones clipped to `range`), as a profile
  # Rperf::MethodTable can read: the expected tables of the filters the native core cannot apply.
  # Clipped raw samples keep their VM state (a sleep's part of the range still ends in
  # [GVL blocked], as in the unfiltered table).
  def samples_where(data, range: nil, &keep)
    if range
      rows = data[:raw_samples].filter_map do |s|
        overlap = [s.last, range[1]].min - [s.last - s[1], range[0]].max
        [s[0], [s[1], overlap].min, *s[2..]] if overlap.positive?
      end
      return data.except(:aggregated_samples).merge(raw_samples: rows.select { |s| keep.(s) })
    end
    data.except(:raw_samples).merge(aggregated_samples: data[:aggregated_samples].select { |s| keep.(s) }.map { |s| s.first(4) })
  end

  # The methods tab is Rperf::MethodTable's, entry for entry and arc for arc (ruby-prof's method
  # view): the payload's table (every sample) and the tables the page asks for with its filters
  # (a label, "not set", a thread, a time range). validate is one method with two callers, and
  # sleep's time is an entry of its own.
  def test_method_table_is_rperf_method_table_for_every_filter
    checkout = Checkout.new
    data = Rperf.start(mode: :wall, aggregate: false) do
      worker = Thread.new { Rperf.label(role: "worker") { checkout.write } }
      Rperf.label(endpoint: "POST /checkout") { checkout.process }
      checkout.write
      worker.join
    end
    methods = page_view(data, "method_table")
    table = Rperf::MethodTable.new(data)
    assert_equal data[:aggregated_samples].sum { |s| s[1] }, methods["total_ns"]
    assert_equal table.total_ns, methods["total_ns"]
    assert_equal table.size, methods["method_count"]
    assert_equal table_rows(table, methods), sent_rows(methods)
    validate = sent_rows(methods).find { |row| row[0].start_with?("#{Checkout}#validate ") }
    assert_equal %W[#{Checkout}#process #{Checkout}#save], validate[4].map { |name, _| name[/\S+/] }.sort, "one validate, two callers"
    assert_equal validate[2], validate[4].sum { |_, ns| ns }, "without recursion the callers add up to the total"
    assert_includes sent_rows(methods).map { |row| row[0].sub(/ \(.*\)\z/, "") }, "[GVL blocked]", "sleep's time is an entry of its own"

    main_seq = data[:aggregated_samples].find { |s| labels_of(data, s)&.[](:endpoint) }[2]
    t0, t1 = data[:raw_samples].map(&:last).minmax
    middle = [t0 + (t1 - t0) / 3, t0 + 2 * (t1 - t0) / 3]
    tables = {
      { label: { key: "endpoint", values: ["POST /checkout"] } } => Rperf::MethodTable.new(data, filter: { endpoint: "POST /checkout" }),
      { label: { key: "%GVL", values: ["blocked"] } } => Rperf::MethodTable.new(data, filter: { "%GVL" => "blocked" }),
      { label: { key: "endpoint", unset: true } } => Rperf::MethodTable.new(samples_where(data) { |s| !labels_of(data, s)&.key?(:endpoint) }),
      { thread: main_seq } => Rperf::MethodTable.new(samples_where(data) { |s| s[2] == main_seq }),
      { range: middle } => Rperf::MethodTable.new(samples_where(data, range: middle) { true }),
    }
    shown = page_views(data, tables.keys.map { |filter| { view: "method_table", filter: filter } })
    tables.each_with_index do |(query, expected), i|
      filtered = shown[i]
      assert_operator expected.total_ns, :>, 0, query
      assert_operator expected.total_ns, :<, table.total_ns, query
      assert_equal expected.total_ns, filtered["total_ns"], query
      assert_equal table_rows(expected, filtered), sent_rows(filtered), query
      assert_operator filtered["entries"].size, :>, 2, query
    end
  end

  # The server computes no view: the routes of filtered and transformed views are gone (the page
  # model computes them), and a query asks for nothing.
  def test_no_view_is_served
    viewer = Rperf::Viewer.new(nil)
    viewer.add_snapshot(Rperf.start(mode: :wall) { work })
    %w[timeline_bins methods call_tree stack_chart].each do |view|
      assert_equal 404, viewer.call("REQUEST_METHOD" => "GET", "PATH_INFO" => "/rperf/snapshots/1/#{view}", "REMOTE_ADDR" => "127.0.0.1")[0], view
    end
    plain = get_local(viewer, "/rperf/snapshots/1")
    assert_equal plain, get_local(viewer, "/rperf/snapshots/1", "transforms=%5B%5B%22recursion%22%5D%5D"), "transforms are the page's"
  end

  # Many methods: at most the max_methods heaviest by total and by self are sent (a method heavy
  # by self is there however many wrappers weigh more in total), at most max_arcs callers and
  # callees each (with the counts of all), and every number stays MethodTable's.
  def test_method_table_payload_is_bounded
    frame = ->(name) { ["app.rb", name, 1].freeze }
    main = frame.("<main>")
    wrappers = Array.new(5) { |i| frame.("w#{i}") } # total 100 µs each, no self
    ms = Array.new(50) { |i| frame.("m#{i}") }      # m_i: self (i + 1) µs; m_i calls m_(i-1)
    samples = [[[frame.("leaf"), *wrappers.reverse, main], 100_000, 1, 0]]
    ms.each_with_index do |m, i|
      samples << [[m, main], (i + 1) * 1000, 1, 0]
      samples << [[ms[i - 1], m, main], 500, 1, 0] if i.positive?
    end
    data = { mode: :wall, frequency: 1000, label_sets: [{}], aggregated_samples: samples }
    table = Rperf::MethodTable.new(data)
    assert_equal 57, table.size
    capped = page_view(data, "method_table", limits: { maxMethods: 5, maxArcs: 1 })
    assert_equal [5, 1, 57], capped.values_at("max_methods", "max_arcs", "method_count")
    assert_equal table_rows(table, capped), sent_rows(capped)
    names = sent_rows(capped).map { |row| row[0][/\S+/] }
    assert_equal %w[<main> leaf w0 w1 w2 m49 m48 m47 m46].sort, names.sort, "5 by total, 5 by self (leaf is both)"
    m48 = sent_rows(capped).find { |row| row[0].start_with?("m48 ") }
    assert_equal [["<main> (app.rb:1)", 49_500]], m48[4], "the heaviest of its two callers (main and m49)"
    assert_equal [], m48[5], "its call of m47 (500 ns) is below 0.1% of the total"
    assert_equal [2, 1], m48[6, 2]
    full = page_view(data, "method_table")
    assert_equal 57, full["entries"].size
    assert_equal table_rows(table, full), sent_rows(full)
  end

  # A hand-built Hash that Native::Profile refuses is no profile: the snapshot and every view
  # are a 422 with the model's reason (the one row check, profile/profile_rows), and the
  # payload is refused the same way.
  def test_a_profile_native_code_refuses_is_refused_with_its_reason
    data = { mode: :wall, frequency: 1000, aggregated_samples: [[[[1, 2]], 10, 1, 0]], label_sets: [{}] }
    viewer = Rperf::Viewer.new(nil)
    viewer.add_snapshot(data)
    status, body = get_local(viewer, "/rperf/snapshots/1")
    assert_equal 422, status
    assert_match(/cannot show the profile: .*path and label must be Strings/, body["error"])
    error = assert_raises(Rperf::Viewer::Payload::Unavailable) { Rperf::Viewer::Payload.build(data, max_samples: 10, max_timeline: 10) }
    assert_match(/path and label must be Strings/, error.message)
    status, body = get_local(viewer, "/rperf/snapshots/1/timeline")
    assert_equal 422, status
    assert_match(/cannot show the profile: .*path and label must be Strings/, body["error"])
  end

  # Every node weighs 0 (a total of 0): the threshold cannot rise, so the first max_nodes nodes
  # of the walk are sent instead of doubling forever.
  def test_call_tree_cap_with_a_zero_total
    frames = Array.new(50) { |i| ["app.rb", "m#{i}"].freeze }
    data = { mode: :wall, frequency: 1000, label_sets: [{}],
             aggregated_samples: frames.each_index.map { |i| [frames.first(i + 1).reverse, 0, 1, 0] } }
    capped = page_view(data, "call_tree", limits: { maxNodes: 10 })
    assert_equal 10, capped["nodes"].size
    assert_equal 0, capped["total_ns"]
    assert_equal 51, capped["node_count"]
    capped["nodes"].each_with_index { |(parent, *), i| assert_operator parent, :<, i }
  end

  # Frame paths and names with bytes that are not UTF-8 reach the page repaired (one U+FFFD per
  # bad byte, util/utf8.hh): from the model's tree (a session's own view) as from a Hash's.
  def test_frame_names_with_bad_bytes_are_sent_repaired
    eval(<<~RUBY, binding, "lib/\xffx.rb".b, 1) # rubocop:disable Security/Eval
      def spin_in_a_bad_path(seconds)
        t0 = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID)
        x = 0
        x += 1 while Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID) - t0 < seconds
      end
    RUBY
    live = Rperf.start(mode: :cpu) { spin_in_a_bad_path(0.03) }
    assert Rperf::Native::Profile.of_view(live), "a session's payload is the model's tree"
    hand = { mode: :wall, frequency: 1000, label_sets: [{}],
             aggregated_samples: [[[["lib/\xffx.rb".b, "render\xE3\x81".b]], 5_000_000, 1, 0]] }
    { live => ["#{self.class}#spin_in_a_bad_path", "lib/\uFFFDx.rb"], hand => ["render\uFFFD\uFFFD", "lib/\uFFFDx.rb"] }.each do |data, frame|
      payload = JSON.parse(JSON.generate(Rperf::Viewer::Payload.build(data, max_samples: 20, max_timeline: 10)))
      assert_includes payload["frames"], frame
    end
  end

  # A label key with bytes the page had to repair matches its samples, as a repaired value does.
  def test_call_tree_of_a_label_key_the_page_repaired
    frame = ["app.rb", "Object#work"].freeze
    data = { mode: :wall, frequency: 1000, label_sets: [{}, { "k\xffey".b => "v" }],
             aggregated_samples: [[[frame], 700, 1, 1], [[frame], 300, 1, 0]] }
    viewer = Rperf::Viewer.new(nil)
    viewer.add_snapshot(data)
    _, payload = get_local(viewer, "/rperf/snapshots/1")
    key = payload["label_sets"].flat_map(&:keys).first
    assert_equal "k\uFFFDey", key
    valued, unset = page_views(data, [{ view: "call_tree", filter: { label: { key: key, values: ["v"] } } },
                                      { view: "call_tree", filter: { label: { key: key, unset: true } } }])
    assert_equal 700, valued["total_ns"]
    assert_equal 300, unset["total_ns"]
  end

  # Concurrent requests for a file's views load it once (the one kept resident).
  def test_a_file_is_loaded_once_under_concurrent_requests
    Dir.mktmpdir("rperf-viewer") do |dir|
      Rperf.save(File.join(dir, "p.json.gz"), profile)
      viewer = Rperf::Viewer.new(nil)
      viewer.add_snapshot_dir(dir)
      loads = 0
      count = Mutex.new
      load = Rperf.method(:load)
      Rperf.stub(:load, ->(path) { count.synchronize { loads += 1 }; sleep 0.05; load.(path) }) do
        statuses = Array.new(4) { Thread.new { get_local(viewer, "/rperf/snapshots/1")[0] } }.map(&:value)
        assert_equal [200] * 4, statuses
      end
      assert_equal 1, loads
    end
  end

  # Big trees are capped: calls below min_percent are not sent, and the threshold rises until
  # max_nodes fit; every node's total stays CallTree's.
  def test_call_tree_payload_is_bounded
    data = Rperf.start(mode: :wall) { 40.times { |depth| nest(depth, 0.002) } }
    tree = Rperf::CallTree.new(data)
    capped = page_view(data, "call_tree", limits: { maxNodes: 30 })
    assert_operator capped["nodes"].size, :<=, 30
    assert_operator capped["min_percent"], :>, 0.1
    assert_equal visited(tree, capped["min_percent"]), sent(capped)
    assert_equal tree.size, capped["node_count"]
  end

  # Issue 18: a profile recorded with allocations: 64 carries its allocation samples, each on
  # its stack's node, with the profile's totals (allocated and retained), and the same classes
  # and counts as Rperf::Collapsed's allocation flame graph.
  def test_allocations_payload_has_the_profile_totals
    kept = nil
    data = Rperf.start(mode: :cpu, allocations: 64, retained: true) do
      kept = Array.new(20_000) { |i| "kept #{i}" }
      30_000.times { |i| [i, i.to_s] }
    end
    rows = data[:allocation_samples]
    refute_empty rows
    payload = JSON.parse(JSON.generate(Rperf::Viewer::Payload.build(data, max_samples: 20_000, max_timeline: 100)))
    allocations = payload["allocations"]
    assert_equal 64, allocations["interval"]
    assert_equal rows.sum { |r| r[1] }, allocations["allocated"]
    assert_equal rows.sum { |r| r[5] }, allocations["retained"]
    assert_operator allocations["retained"], :>, 0, "the kept strings are alive at stop"
    assert_equal allocations["allocated"], allocations["samples"].sum { |r| r[1] }
    assert_equal allocations["retained"], allocations["samples"].sum { |r| r[5] }
    expected = rows.map { |frames, count, seq, lsi, cls, retained| [frames.reverse.map { |f| f[1] }, count, seq, lsi, cls, retained] }.sort
    actual = allocations["samples"].map { |node, count, seq, lsi, cls, retained| [stack_of(payload, node), count, seq, lsi, allocations["classes"][cls], retained] }.sort
    assert_equal expected, actual
    # The allocation flame graph's leaves are the classes, with Collapsed's counts.
    collapsed = Rperf::Collapsed.encode(data, allocations: true).lines.each_with_object(Hash.new(0)) do |line, acc|
      stack, count = line.rpartition(" ").values_at(0, 2)
      acc[stack.split(";").last] += count.to_i
    end
    per_class = allocations["samples"].each_with_object(Hash.new(0)) { |r, acc| acc[allocations["classes"][r[4]]] += r[1] }
    assert_equal collapsed, per_class
    assert_operator per_class["String"], :>, 0

    pruned = Rperf::Viewer::Payload.build(data, max_samples: 1, max_timeline: 100)[:allocations]
    assert_equal allocations["allocated"], pruned[:samples].sum { |r| r[1] }, "pruning keeps every object"
    assert_equal rows.size - 1, pruned[:pruned][:samples]
    assert_nil Rperf::Viewer::Payload.build(Rperf.start(mode: :cpu) { work }, max_samples: 10, max_timeline: 10)[:allocations]
    # Without retained: true the page is told retained was not measured.
    unmeasured = Rperf.start(mode: :cpu, allocations: 64) { 30_000.times { |i| [i, i.to_s] } }
    allocations = Rperf::Viewer::Payload.build(unmeasured, max_samples: 100, max_timeline: 10)[:allocations]
    assert_nil allocations[:retained]
    assert_equal unmeasured[:allocation_samples].sum { |r| r[1] }, allocations[:allocated]
    kept.clear
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
        # The call tree of a label value the page only knows repaired.
        bin = sets.find { |s| s["bin"] }["bin"]
        tree = page_view(id == 1 ? data : Rperf.load(path), "call_tree", label: { key: "bin", values: [bin] })
        assert_equal weight_labelled(data, tenant: "acme"), tree["total_ns"]
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
