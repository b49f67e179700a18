# frozen_string_literal: true

# Viewer first-render benchmark (not a test; issue 27): a wall profile of 500,000 timeline rows
# (aggregate: false; four threads, one sample per millisecond each, over 48 stacks of depth up
# to 24 in app, gem, stdlib and C frames, a quarter of them GVL blocked) written as one
# static_html file, opened in headless Chromium: the time from the navigation to the first
# drawn view (the flame graph), then to each tab. Median of RUNS (3).
#
#   bundle exec ruby -Ilib bench/viewer_render_bench.rb
#   SERVED=1 ...                  the same profile served by Rperf::Viewer on Puma (loopback), as
#                                 a profile's own result (Rperf.stop's, not a Hash built by
#                                 hand): the first run includes the server building the
#                                 snapshot's payload, later runs get it from the server's cache
#   RPERF_VIEWER_ASSETS=DIR ...   the page's assets from DIR (e.g. the viewer before issue 27's
#                                 changes: git show REV:lib/rperf/viewer/assets/...), the payload
#                                 of this tree with its timeline inline (an older page reads it
#                                 there): to compare pages on the same data
require "rperf"
require "rperf/viewer"
require "json"
require "open3"
require "stringio"
require "tmpdir"

ROWS = Integer(ENV.fetch("ROWS", 500_000))
RUNS = Integer(ENV.fetch("RUNS", 3))
TABS = %w[icicle stack top tree methods sandwich alloc threads timeline diff inverted source flame].freeze # every tab of the page

if (dir = ENV["RPERF_VIEWER_ASSETS"])
  Rperf::Viewer.send(:remove_const, :ASSET_DIR)
  Rperf::Viewer.const_set(:ASSET_DIR, File.expand_path(dir))
  types = Rperf::Viewer::ASSET_TYPES.merge(Dir.chdir(dir) { Dir["vendor/*.js"] }.to_h { |f| [f, "text/javascript; charset=utf-8"] })
  Rperf::Viewer.send(:remove_const, :ASSET_TYPES)
  Rperf::Viewer.const_set(:ASSET_TYPES, types.freeze)
  Rperf::Viewer.send(:remove_const, :TIMELINE_INLINE_ROWS)
  Rperf::Viewer.const_set(:TIMELINE_INLINE_ROWS, Float::INFINITY)
end

def profile(rows)
  files = ["/srv/app/app/models/order.rb", "/srv/app/vendor/bundle/ruby/3.3.0/gems/activerecord-7.1.3/lib/active_record/base.rb",
           "/opt/ruby/lib/ruby/3.3.0/json/common.rb", "<C method>"]
  frame = ->(i) { [files[i % 4], "M#{i % 97}#m#{i}"] }
  stacks = Array.new(48) { |s| Array.new(8 + s % 17) { |d| frame.(s * 31 + d * 7 + (d > 4 ? s : 0)) }.reverse }
  raw = Array.new(rows) do |i|
    thread = i % 4
    k = i / 4
    stack = (k / 5 + thread * 11) % 48
    [stacks[stack], 1_000_000, thread + 1, stack % 4 == 3 ? 1 : 0, (k + 1) * 1_000_000]
  end
  aggregated = raw.group_by { |r| [r[0], r[2], r[3]] }.map { |(stack, seq, lsi), rs| [stack, rs.sum { |r| r[1] }, seq, lsi] }
  { mode: :wall, frequency: 1000, sampling_count: rows, duration_ns: (rows / 4) * 1_000_000,
    aggregated_samples: aggregated, raw_samples: raw, label_sets: [{}, { "%GVL": "blocked" }] }
end

median = ->(a) { a.sort[a.size / 2] }
report = lambda do |result, what|
  puts "Viewer render, #{ROWS} timeline rows, #{what}, #{ENV['RPERF_VIEWER_ASSETS'] || 'this tree'}'s assets"
  puts "first render (flame graph): #{median.(result['first'])} ms (runs: #{result['first'].join(', ')}); " \
       "page busy #{median.(result['firstBusy'])} ms (runs: #{result['firstBusy'].join(', ')})"
  result["tabs"].each { |tab, ms| puts format("  %-9s %6d ms (runs: %s)", tab, median.(ms), ms.join(", ")) }
  puts "page errors: #{result['errors'].uniq.first(3)}" unless result["errors"].empty?
end
render = lambda do |url|
  out, err, status = Open3.capture3("node", File.join(__dir__, "support/viewer_render.js"), url, RUNS.to_s, *TABS)
  abort "viewer_render.js failed:\n#{err}" unless status.success?
  JSON.parse(out.lines.last)
end

if ENV["SERVED"]
  require "puma"
  viewer = Rperf::Viewer.new(nil, max_timeline: ROWS)
  viewer.add_snapshot(Rperf::Storage.native(profile(ROWS)).to_h)
  server = Puma::Server.new(viewer, nil, min_threads: 1, max_threads: 4, log_writer: Puma::LogWriter.new(StringIO.new, StringIO.new))
  server.add_tcp_listener("127.0.0.1", 0)
  server.run
  begin
    report.(render.("http://127.0.0.1:#{server.connected_ports.first}/rperf/"), "served (the first run builds the payload)")
  ensure
    server.stop(true)
  end
else
  Dir.mktmpdir("rperf-render") do |dir|
    path = File.join(dir, "profile.html")
    File.write(path, Rperf::Viewer.static_html(profile(ROWS), title: "render bench", max_timeline: ROWS))
    report.(render.("file://#{path}"), "page #{(File.size(path) / 1e6).round(1)} MB")
  end
end
