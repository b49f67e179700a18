# frozen_string_literal: true

# cpu mode on a CPU shared with a busy loop (both pinned with taskset): per-sample cost by capture
# path, and the samples that carry almost no weight (ticks handled after the thread waited for
# its CPU). Each cell a fresh process, interleaved, medians. Compares builds: pass lib
# directories (default: this tree's lib).
#   ruby bench/contended_cpu_bench.rb [rounds] [hz] [lib ...]
require "json"
require "rbconfig"

if ARGV[0] == "--child"
  require "rperf"
  def spin(n) = (i = 0; i += 1 while i < n; i)
  def cpu = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID)
  capture, hz = ARGV[1], Integer(ARGV[2])
  spin(3_000_000)
  if capture == "none"
    c0 = cpu
    200.times { spin(100_000) }
    puts JSON.generate(cpu: cpu - c0)
    exit
  end
  c0 = cpu
  data = Rperf.start(mode: :cpu, frequency: hz, capture: capture.to_sym, aggregate: false, inherit: false) { 200.times { spin(100_000) } }
  spent = cpu - c0
  weights = data[:raw_samples].map { _2 }
  puts JSON.generate(cpu: spent, samples: data[:sampling_count], ticks: data[:trigger_count],
                     light: weights.count { _1 < 1e9 / hz * 0.05 }, ns: data[:sampling_time_ns].fdiv(data[:sampling_count]))
  exit
end

rounds = Integer(ARGV[0] || 5)
hz = ARGV[1] || "1000"
libs = ARGV.drop(2)
libs = [File.expand_path("../lib", __dir__)] if libs.empty?
abort "taskset is needed" unless system("taskset -c 1 true")
cells = [["none", libs.first]] + %w[signal postponed].product(libs)
hog = spawn("taskset", "-c", "1", RbConfig.ruby, "-e", "loop {}")
results = Hash.new { |h, k| h[k] = [] }
begin
  rounds.times do
    cells.each do |capture, lib|
      out = IO.popen(["taskset", "-c", "1", RbConfig.ruby, "-I", lib, __FILE__, "--child", capture, hz], &:read)
      results[[capture, lib]] << JSON.parse(out.lines.last)
    end
  end
ensure
  Process.kill(:KILL, hog)
  Process.wait(hog)
end
median = ->(xs) { xs.sort[xs.size / 2] }
base = median.(results[cells.first].map { _1["cpu"] })
puts "cpu mode, #{hz} Hz, CPU 1 shared with a busy loop, medians of #{rounds}; work #{(base * 1e3).round} ms CPU; " \
     "load average #{File.read("/proc/loadavg").split.first(3).join(" ")}"
cells.drop(1).each do |capture, lib|
  m = ->(key) { median.(results[[capture, lib]].map { _1[key] }) }
  printf("  %-10s %-28s samples %5d of %5d ticks, %4d under 5%% of a period; ns/sample %5.0f; thread CPU %+6.1f%%\n",
         capture, lib, m.("samples"), m.("ticks"), m.("light"), m.("ns"), (m.("cpu") / base - 1) * 100)
end
