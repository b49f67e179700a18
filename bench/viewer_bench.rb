# frozen_string_literal: true

# Viewer benchmark (not a test): the JSON body the viewer serves for the synthetic profile
# (100,000 unique stacks of depth 40, no shared prefixes: the worst case for its prefix tree),
# with the default max_samples (20,000: the lighter stacks folded into [pruned]), 50,000, and
# none pruned. Each run in a forked child: median of 3, peak memory added, body size.
require "rperf"
require "rperf/viewer"
require "json"
require_relative "support/synthetic_profile"

data = SyntheticProfile.build
puts "Viewer payload benchmark: #{SyntheticProfile::STACKS} stacks x depth #{SyntheticProfile::DEPTH}, " \
     "#{SyntheticProfile::FRAMES} distinct frames"
puts format("%-26s %9s %9s %10s %12s", "max_samples", "median s", "max s", "body", "peak +RSS")
# PARTS=1: only the loaded profile's table below.
(ENV["PARTS"] ? [] : [20_000, 50_000, 100_000]).each do |max_samples|
  runs = Array.new(3) do
    SyntheticProfile.measure { JSON.generate(Rperf::Viewer::Payload.build(data, max_samples: max_samples, max_timeline: 200_000)) }
  end
  size = JSON.generate(Rperf::Viewer::Payload.build(data, max_samples: max_samples, max_timeline: 200_000)).bytesize
  times = runs.map(&:first).sort
  puts format("%-26s %9.2f %9.2f %8.1fMB %10.0fMB", max_samples, times[1], times.last, size / 1e6, runs.map(&:last).max)
end

# The same profile as a file loads it (Rperf.load: the native model behind a lazy Hash view),
# which is what the served Viewer and `rperf report` have: the snapshot payload the Viewer serves
# (its trees apart, each served when its tab asks), a file's (all in one), their parts and the
# views a filter asks for. Measured in this process, as a server answers (a forked child would
# pay copy-on-write faults on the whole profile that no server pays): CPU seconds of 5 runs,
# median and max (issue 24's targets: the served payload under 0.3 s, a filter under 0.1 s).
require "tmpdir"
Dir.mktmpdir do |dir|
  path = File.join(dir, "bench.json.gz")
  Rperf.save(path, data)
  loaded = Rperf.load(path)
  native = Rperf::Native::Profile.of_view(loaded)
  users = ["endpoint", ["/users"]] # as SampleFilter.parse_query makes label=endpoint&value=/users
  unset = ["endpoint", [nil]] # label=endpoint&unset=1
  hidden = [1, 2, 3, 4] # hide=1,2,3,4
  parts = {
    "served snapshot payload + JSON" => -> { JSON.generate(Rperf::Viewer::Payload.build(loaded, max_samples: 20_000, max_timeline: 200_000, trees: false)) },
    "--html payload (with trees)" => -> { JSON.generate(Rperf::Viewer::Payload.build(loaded, max_samples: 20_000, max_timeline: 200_000)) },
    "  stack tree (20,000)" => -> { native.stack_tree(20_000, 200_000) },
    "  call tree tab" => -> { JSON.generate(Rperf::Viewer::CallTreePayload.build(native)) },
    "  methods tab" => -> { JSON.generate(Rperf::Viewer::MethodTablePayload.build(native)) },
    "  bottom-up tab" => -> { JSON.generate(Rperf::Viewer::InvertedTreePayload.build(native)) },
    "filter: thread 1, tree" => -> { JSON.generate(Rperf::Viewer::CallTreePayload.build(native, thread: 1)) },
    "filter: thread 1, methods" => -> { JSON.generate(Rperf::Viewer::MethodTablePayload.build(native, thread: 1)) },
    "filter: endpoint, tree" => -> { JSON.generate(Rperf::Viewer::CallTreePayload.build(native, label: users)) },
    "filter: endpoint, methods" => -> { JSON.generate(Rperf::Viewer::MethodTablePayload.build(native, label: users)) },
    "filter: endpoint not set, tree" => -> { JSON.generate(Rperf::Viewer::CallTreePayload.build(native, label: unset)) },
    "filter: endpoint not set, methods" => -> { JSON.generate(Rperf::Viewer::MethodTablePayload.build(native, label: unset)) },
    "filter: hide 4 threads, tree" => -> { JSON.generate(Rperf::Viewer::CallTreePayload.build(native, hide: hidden)) },
    "filter: hide 4 threads, methods" => -> { JSON.generate(Rperf::Viewer::MethodTablePayload.build(native, hide: hidden)) },
    "filter: idle hidden, tree" => -> { JSON.generate(Rperf::Viewer::CallTreePayload.build(native, idle: true)) },
    "filter: idle hidden, methods" => -> { JSON.generate(Rperf::Viewer::MethodTablePayload.build(native, idle: true)) },
  }
  clock = -> { Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID) }
  puts
  puts format("%-32s %9s %9s", "loaded profile: part", "CPU s", "max s")
  parts.each do |name, work|
    cpu = Array.new(5) do
      t0 = clock.()
      work.()
      clock.() - t0
    end.sort
    puts format("%-32s %9.3f %9.3f", name, cpu[2], cpu.last)
  end
end
