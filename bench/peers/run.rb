# frozen_string_literal: true

# Peer benchmark: ours, rperf 0.11.1, stackprof and vernier on the same workloads, each run in
# a fresh child process, interleaved; prints a Markdown table of time sampling, then one of
# allocation sampling. Run: rake bench:peers
# (settings: see PeerBench::Config in harness.rb; RPERF_BENCH_QUICK=1 for a smoke run).
require "etc"
require_relative "harness"
require_relative "locate"
require_relative "table"
require_relative "workloads"
require_relative "yjit"

module PeerBench
  ROOT = Locate::ROOT

  def self.machine
    cpu = File.foreach("/proc/cpuinfo").find { |l| l.start_with?("model name") }&.split(":", 2)&.last&.strip
    mem = File.foreach("/proc/meminfo").find { |l| l.start_with?("MemTotal") }.split[1].to_i / 1024 / 1024
    "#{cpu || RUBY_PLATFORM}, #{Etc.nprocessors} cores, #{mem} GiB"
  end

  def self.load_average = File.read("/proc/loadavg").split.first(3).join(" ")

  def self.main
    config = Config.from_env
    load_before = load_average
    runner = Runner.new(config, root: ROOT, peers: config.peers_needed? ? Locate.peers : nil).run
    yjit = Yjit::Runner.new(runner).run if config.yjit && defined?(RubyVM::YJIT)
    versions = runner.versions.map { |name, v| "#{name} #{v}" }.join(", ")
    header = [
      "Peer benchmark, Ruby #{RUBY_VERSION}, #{machine}; load average #{load_before} before, #{load_average} after.",
      "Profilers: #{versions} (ours from #{ROOT}/lib; each profiler in its own process).",
      "",
    ]
    puts header
    puts Table.new(runner) if config.time
    if runner.alloc_results
      puts if config.time
      puts AllocationTable.new(runner)
    end
    return unless yjit

    puts if config.time || runner.alloc_results
    puts Yjit::Table.new(yjit)
  end
end

PeerBench.main if $PROGRAM_NAME == __FILE__
