# frozen_string_literal: true

# Stress script for the native core, meant to run under valgrind or ASan (see README):
# start/stop cycles, thread churn, deep recursion, GC.compact, fork, and snapshot(clear: true)
# from another thread, all while profiling (with allocation sampling: NEWOBJ/FREEOBJ hooks,
# compaction moving sampled objects, GC.stress); then every encoder and the loader. Prints RSS
# before and after the cycles.
require "rperf"

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
snapshots.join
data = Rperf.stop
abort "fork child was not clean" unless status.success?
abort "no samples" if data[:aggregated_samples].empty?
abort "no allocation samples" if data[:allocation_samples].to_a.empty?

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
puts "ok: #{cycles} cycles, RSS #{rss0} KB -> #{rss1} KB; #{threads.size} threads; " \
     "#{data[:unique_stacks]} stacks, detected threads #{data[:detected_thread_count]}"
