# frozen_string_literal: true

# Stress script for the native core, meant to run under valgrind or ASan (see README):
# start/stop cycles, thread churn, deep recursion, GC.compact, fork, and snapshot(clear: true)
# from another thread, all while profiling (with allocation sampling: NEWOBJ/FREEOBJ hooks,
# compaction moving sampled objects, GC.stress); then every encoder and the loader. Prints RSS
# before and after the cycles.
require "rperf"

# STRESS_CAPTURE=signal|postponed: every session on that capture path (default: by YJIT).
if (stress_capture = ENV["STRESS_CAPTURE"]&.to_sym)
  Rperf.singleton_class.prepend(Module.new do
    define_method(:start) { |capture: stress_capture, **kw, &blk| super(capture: capture, **kw, &blk) }
  end)
end

def rss_kb = File.read("/proc/self/status")[/VmRSS:\s+(\d+)/, 1].to_i
def recurse(n, &blk) = n.zero? ? blk.call : recurse(n - 1, &blk)

cycles = Integer(ENV.fetch("STRESS_CYCLES", "1000"))
rss0 = nil
cycles.times do |i|
  Rperf.start(mode: i.even? ? :cpu : :wall, frequency: 10_000, allocations: (i % 4).zero? ? 1 + (i % 64) : nil)
  i.times { |j| j * j } if (i % 50).zero?
  Rperf.stop
  rss0 = rss_kb if i == cycles / 10
end
rss1 = rss_kb

Rperf.start(mode: :wall, frequency: 5000, inherit: false, allocations: 16)
snapshots = Thread.new { 20.times.map { sleep 0.005; Rperf.snapshot(clear: true) } }
threads = 200.times.each_slice(25).flat_map { |slice| slice.map { Thread.new { 500.times(&:to_s) } }.each(&:join) }
recurse(2000) { 10_000.times(&:to_s) }
kept = 3.times.map { Array.new(20_000) { |i| "s#{i}" }.tap { GC.compact } }
GC.stress = true
30.times { |i| kept << "t#{i}" }
GC.stress = false
kept = nil
pid = fork { exit!(Rperf.running? ? 1 : 0) }
_, status = Process.wait2(pid)
taken = snapshots.value
data = Rperf.stop
abort "fork child was not clean" unless status.success?
abort "no samples" if data[:aggregated_samples].empty?
# the snapshots (clear: true) may have taken them all, under valgrind's slowness
abort "no allocation samples" if (taken + [data]).all? { |d| d[:allocation_samples].to_a.empty? }

# Every encoder (the output pipeline's threads) and the C++ loader, with GC.compact between.
require "tmpdir"
# A loaded file adds meta, summary and the writer's pid: compare what the profile says.
body = ->(d) { d.values_at(:mode, :frequency, :aggregated_samples, :label_sets, :allocation_samples) }
Dir.mktmpdir do |dir|
  %w[json.gz json pb.gz collapsed txt speedscope.json].each { |ext| Rperf.save(File.join(dir, "s.#{ext}"), data) }
  GC.compact
  %w[json.gz json].each { |ext| abort "#{ext} round trip differs" unless body.(Rperf.load(File.join(dir, "s.#{ext}"))) == body.(data) }
  # Several MB: the chunks go through the pipeline's worker threads.
  rng = Random.new(1)
  frames = Array.new(2000) { |i| ["app/f#{i % 50}.rb", "K#{i % 30}#m#{i}"].freeze }
  big = data.except(:allocation_samples, :allocation_interval).merge(aggregated_samples: Array.new(5000) { |i| [Array.new(20) { frames.sample(random: rng) }, i + 1, 1, 0] }, label_sets: [{}])
  Rperf.save(File.join(dir, "big.json.gz"), big)
  abort "large round trip differs" unless body.(Rperf.load(File.join(dir, "big.json.gz"))) == body.(big)
  abort "pprof total differs" unless Rperf::Storage.load_any(File.join(dir, "s.pb.gz"))[:aggregated_samples].sum { |s| s[1] } ==
                                     data[:aggregated_samples].sum { |s| s[1] }
end
# The process-end and boundary cases (the lifecycle tests), here too so that valgrind sees them:
# 10,000 labels with compaction during snapshots, a Ractor that blocks while the main one is
# sampled, a daemon-style fork made without Process._fork's hook, exit without stop.
Warning[:experimental] = false
Rperf.start(mode: :wall, frequency: 2000)
GC.auto_compact = true
compactor = Thread.new { 20.times { GC.compact; sleep 0.001 } }
2_000.times { |i| Rperf.label(request: "r#{i}") { 20.times(&:to_s) } } # 10,000 in the lifecycle test
Rperf.snapshot(clear: true) until compactor.join(0)
GC.auto_compact = false
Rperf.stop
Rperf.start(mode: :wall, frequency: 2000)
ractor = Ractor.new { 50.times { sleep 0.0005 }; :done }
recurse(50) { 50_000.times(&:to_s) }
abort "ractor" unless ractor.take == :done
ractor_data = Rperf.stop
abort "the Ractor's thread not labelled" unless ractor_data[:aggregated_samples].any? { |s| ractor_data[:label_sets][s[3]][:"%ractor"] }
# Other Ractors' threads (sampler/ractor_threads.hh) sampled while sessions start, snapshot and
# stop on both capture paths, Ractors start and end, and GC (compaction too) runs; they allocate
# (GC triggered on their threads) or block and wake.
workers = 3.times.map do |k|
  Ractor.new(k) do |kind|
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 2
    n = 0
    while Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
      kind.zero? ? sleep(0.0002) : Array.new(200) { |i| "x#{i}" }
      n += 1
    end
    n
  end
end
short = []
24.times do |i|
  Rperf.start(mode: i.even? ? :cpu : :wall, frequency: 5000, capture: (i % 3).zero? ? :postponed : :signal)
  short << Ractor.new { 3_000.times.map(&:to_s).size }
  GC.compact if (i % 4).zero?
  Rperf.snapshot(clear: true) if i.odd?
  20_000.times(&:to_s)
  Rperf.stop
end
abort "ractors" unless workers.map(&:take).all?(&:positive?) && short.map(&:take).uniq == [3_000]
# A deferred session: Ractor threads seen in a profile block exit while it is paused, Ruby frees
# them, and the session resumes and stops.
Rperf.start(mode: :wall, frequency: 5000, defer: true)
paused_ractors = nil
Rperf.profile { paused_ractors = 3.times.map { Ractor.new { sleep 0.02; 1 } }; sleep 0.005 }
abort "paused ractors" unless paused_ractors.sum(&:take) == 3
paused_ractors = nil
GC.start
Rperf.profile { 20_000.times(&:to_s) }
Rperf.stop
exit_status = Process.wait2(fork { Rperf.start(mode: :cpu); 20_000.times(&:to_s); exit!(0) })[1]
abort "exit without stop" unless exit_status.success?

puts "ok: #{cycles} cycles, RSS #{rss0} KB -> #{rss1} KB; #{threads.size} threads; " \
     "#{data[:unique_stacks]} stacks, detected threads #{data[:detected_thread_count]}"
