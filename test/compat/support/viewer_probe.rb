# frozen_string_literal: true

# What a rperf 0.11.1 user does with Rperf::Viewer (issue 25, point 6), as JSON facts on stdout:
#   ruby -I <lib of one gem> test/compat/support/viewer_probe.rb <dir>
# - the Rails mount of 0.11.1's manual: Rperf::Viewer.new(nil, path: ""), and the app
#   `rperf report FILE` builds (path "", one snapshot from Rperf.load), asked over Rack;
# - add_snapshot / add_snapshot_dir (a missing directory too), the /snapshots list and
#   /snapshots/<id> body shapes, the 404s;
# - the meta and summary of an in-memory snapshot; render_static_html and samples_to_json;
# - the names of window.RPERF_DATA_SOURCE the page's scripts read.
require "json"
require_relative "shape"

dir = ARGV.fetch(0)
require "rperf"
require "rperf/viewer"

module CompatProbe
  module ViewerProbe
    module_function

    def work(n) = n < 2 ? n : work(n - 1) + work(n - 2)

    def profile
      Rperf.start(mode: :cpu, frequency: 1000)
      Rperf.label(endpoint: "/probe") { work(25) }
      Rperf.stop
    end

    # A GET as a Rack server on loopback makes it: status, media type, and the body parsed
    # when it is JSON (else its text when short, or its length).
    def get(app, path, script_name: "")
      env = { "REQUEST_METHOD" => "GET", "PATH_INFO" => path, "SCRIPT_NAME" => script_name, "QUERY_STRING" => "",
              "REMOTE_ADDR" => "127.0.0.1", "HTTP_HOST" => "127.0.0.1:9292", "rack.input" => StringIO.new("") }
      status, headers, body = app.call(env)
      text = +""
      body.each { |part| text << part }
      type = headers.find { |k, _| k.downcase == "content-type" }&.last.to_s.split(";").first
      parsed = type == "application/json" ? JSON.parse(text) : nil
      { "status" => status, "type" => type, "location" => headers.find { |k, _| k.downcase == "location" }&.last,
        "json" => parsed, "text" => parsed || text.size > 40 ? nil : text, "html" => text.match?(/<html/i) }
    end

    # Keys of a list entry, and each value's JSON type.
    def entry_shape(entry)
      entry.to_h { |k, v| [k, v.class.name] }
    end

    def samples_to_json_facts
      samples = [[[["app.rb", "Leaf#work", 3], ["app.rb", "Object#main", 1]], 5, 1, 2],
                 [[["lib.rb", "Lib.call"]], 7, 2, nil]]
      rows, sets = Rperf::Viewer.samples_to_json(samples, [{}, { "s" => 1 }, { endpoint: "/x", n: 3 }])
      { "result" => JSON.parse(JSON.generate([rows, sets])), "row keys" => rows.first.keys.map(&:inspect) }
    end

    def run(dir)
      require "stringio"
      data = profile
      facts = {}

      facts["mount"] = CompatProbe::Shape.error_of { Rperf::Viewer.new(nil, path: "") }
      viewer = Rperf::Viewer.new(nil, path: "")
      facts["path"] = viewer.path
      facts["add_snapshot returns"] = CompatProbe::Shape.of(viewer.add_snapshot(data)).keys.sort
      facts["the page at /"] = get(viewer, "/").slice("status", "type", "html")
      # Mounted at /rperf (SCRIPT_NAME), as Rails does: the page at the mount point's root.
      facts["the page mounted at /rperf"] = get(viewer, "/", script_name: "/rperf").slice("status", "type", "html")
      list = get(viewer, "/snapshots")
      facts["list"] = list.slice("status", "type")
      entry = list["json"].first
      facts["list entry"] = entry_shape(entry)
      facts["in-memory meta keys"] = entry["meta"].keys
      facts["in-memory meta format_version"] = entry.dig("meta", "format_version")
      facts["in-memory meta mode"] = entry.dig("meta", "mode")
      facts["in-memory summary keys"] = entry["summary"].keys
      facts["in-memory summary top_methods entry keys"] = entry.dig("summary", "top_methods", 0)&.keys
      body = get(viewer, "/snapshots/#{entry['id']}")
      facts["body"] = body.slice("status", "type")
      facts["body keys"] = body["json"].keys
      facts["body samples element"] = body["json"]["samples"].first.class.name
      facts["body counts"] = body["json"].slice("mode", "frequency", "duration_ns", "sampling_count")
                                         .transform_values { |v| v.is_a?(Integer) ? "Integer" : v }
      facts["missing snapshot"] = get(viewer, "/snapshots/99").slice("status", "type", "text")
      facts["unknown path"] = get(viewer, "/nothing").slice("status", "type", "text")

      # What `rperf report FILE` serves (0.11.1's exe builds exactly this).
      path = File.join(dir, "probe.json.gz")
      Rperf.save(path, data)
      report = Rperf::Viewer.new(->(_env) { [404, { "content-type" => "text/plain" }, ["Not Found"]] }, path: "")
      report.add_snapshot(Rperf.load(path))
      facts["report app: /"] = get(report, "/").slice("status", "type", "html")
      report_list = get(report, "/snapshots")["json"]
      facts["report app: /snapshots size"] = report_list.size
      facts["report app: /snapshots entry"] = entry_shape(report_list.first)

      # Time travel: a directory of two files, and one that does not exist.
      snaps = File.join(dir, "snaps")
      Dir.mkdir(snaps)
      Rperf.save(File.join(snaps, "a.json.gz"), data)
      Rperf.save(File.join(snaps, "b.json"), data)
      travel = Rperf::Viewer.new(nil, path: "/rperf")
      facts["add_snapshot_dir"] = travel.add_snapshot_dir(snaps)
      facts["add_snapshot_dir of a missing directory"] = CompatProbe::Shape.error_of { travel.add_snapshot_dir(File.join(dir, "missing")) }
      facts["add_snapshot_dir of a missing directory returns"] = (travel.add_snapshot_dir(File.join(dir, "missing")) rescue "raised")
      files = get(travel, "/rperf/snapshots")["json"]
      facts["file entries"] = files.map { |e| entry_shape(e) }.uniq
      facts["file entry names"] = files.map { |e| e["file"] }.sort
      file_body = get(travel, "/rperf/snapshots/#{files.first['id']}")
      facts["file body"] = file_body.slice("status", "type")
      facts["file body keys"] = file_body["json"]&.keys
      facts["redirect"] = get(travel, "/rperf").slice("status", "location")

      facts["render_static_html parameters"] = Rperf::Viewer.method(:render_static_html).parameters.inspect
      html = Rperf::Viewer.render_static_html(data)
      facts["render_static_html"] = { "class" => html.class.name, "doctype" => html.start_with?("<!DOCTYPE html>"),
                                      "names the profile's methods" => html.include?("CompatProbe::ViewerProbe.work") }
      facts["samples_to_json parameters"] = Rperf::Viewer.method(:samples_to_json).parameters.inspect
      facts["samples_to_json"] = samples_to_json_facts

      # The page's scripts (inline in 0.11.1's page, assets in ours) read RPERF_DATA_SOURCE's names.
      page = get_text(viewer, "/")
      scripts = page.scan(/<script src="([^"]+)"/).flatten.map { |src| get_text(viewer, src.sub(%r{\A/}, "/")) }
      code = ([page] + scripts).map { |t| t.b }.join("\n".b)
      facts["RPERF_DATA_SOURCE names in the page"] = %w[RPERF_DATA_SOURCE listUrl snapshotUrl onAuthError].select { |n| code.include?(n.b) }
      facts
    end

    def get_text(app, path)
      env = { "REQUEST_METHOD" => "GET", "PATH_INFO" => path, "SCRIPT_NAME" => "", "QUERY_STRING" => "",
              "REMOTE_ADDR" => "127.0.0.1", "HTTP_HOST" => "127.0.0.1:9292", "rack.input" => StringIO.new("") }
      _, _, body = app.call(env)
      text = +""
      body.each { |part| text << part }
      text
    end
  end
end

puts JSON.generate(CompatProbe::ViewerProbe.run(dir))
