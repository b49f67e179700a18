# frozen_string_literal: true

# The model's query benchmark (not a test), on the synthetic profile (100,000 stacks of depth
# 40; bench/support/synthetic_profile.rb), aggregated and with raw samples: the Hash view
# (Native::Profile#to_h), `rperf report --top` end to end, the Viewer's snapshot payload and
# its filtered views. Each figure: median of 3 runs in a forked child, seconds and CPU-s.
require "rperf"
require "rperf/viewer"
require "rperf/cli"
require "json"
require "stringio"
require "tmpdir"
require "rbconfig"
require_relative "support/synthetic_profile"

def figure(name)
  runs = Array.new(3) { SyntheticProfile.measure { yield } }.sort_by(&:first)
  puts format("%-44s %8.3f s %8.3f CPU-s %8.0f MB", name, runs[1][0], runs[1][1], runs.map(&:last).max)
end

data = SyntheticProfile.build
# The raw variant: each stack sampled once, at increasing times (a profile of aggregate: false).
raw = data.merge(raw_samples: data[:aggregated_samples].each_with_index.map { |(stack, w, seq, lsi), i| [stack, w, seq, lsi, 0, 1_000_000 * (i + 1)] })
Dir.mktmpdir do |dir|
  path = File.join(dir, "bench.json.gz")
  raw_path = File.join(dir, "raw.json.gz")
  Rperf.save(path, data)
  Rperf.save(raw_path, raw)
  puts "Model benchmark: #{SyntheticProfile::STACKS} stacks x depth #{SyntheticProfile::DEPTH}"
  native = Rperf::Native::Profile.load_json(File.binread(path))
  # Loaded here: each forked child builds the view of the same profile.
  figure("Native::Profile#to_h (the Hash view)") { native.to_h }
  figure("load only (Native::Profile.load_json)") { Rperf::Native::Profile.load_json(File.binread(path)) }
  t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  3.times { system(RbConfig.ruby, "-I#{File.expand_path('../lib', __dir__)}", File.expand_path("../exe/rperf", __dir__), "report", "--top", path, out: File::NULL) or abort("report failed") }
  puts format("%-44s %8.3f s (mean of 3, end to end)", "rperf report --top", (Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0) / 3)
  figure("rperf report --top (in process, after load)") { Rperf::CLI.run(["report", "--top", path], out: StringIO.new) }
  viewer = Rperf::Viewer.new(nil, path: "")
  snapshot = viewer.add_snapshot(Rperf.load(path))
  raw_snapshot = viewer.add_snapshot(Rperf.load(raw_path))
  env = ->(p, q = "") { { "REQUEST_METHOD" => "GET", "PATH_INFO" => p, "QUERY_STRING" => q, "REMOTE_ADDR" => "127.0.0.1", "SCRIPT_NAME" => "" } }
  get = lambda do |p, q = ""|
    status, _, body = viewer.call(env.(p, q))
    abort("#{p}?#{q}: #{status} #{body.join[0, 200]}") unless status == 200
  end
  figure("Viewer snapshot payload") { get.("/snapshots/#{snapshot[:id]}") }
  figure("Viewer snapshot payload (raw samples)") { get.("/snapshots/#{raw_snapshot[:id]}") }
  { "thread" => "thread=3", "label" => "label=endpoint&value=%2Fusers", "label not set" => "label=endpoint&unset=1",
    "hide threads" => "hide=1,2" }.each do |name, query|
    figure("Viewer call_tree filter: #{name}") { get.("/snapshots/#{snapshot[:id]}/call_tree", query) }
  end
  figure("Viewer call_tree filter: time range (raw)") { get.("/snapshots/#{raw_snapshot[:id]}/call_tree", "from=0&to=50000000000") }
  figure("Viewer method_table filter: thread") { get.("/snapshots/#{snapshot[:id]}/method_table", "thread=3") }
end
