# frozen_string_literal: true

require_relative "test_helper"
require "json"

# Every Ractor's running thread is sampled (sampler/ractor_threads.hh): its own thread in the
# profile, its samples labelled %ractor, its CPU counted in cpu mode, on both capture paths.
class RactorTest < Minitest::Test
  include RperfTestHelper

  # 4 Ractors of CPU work. Each Ractor measures its own thread's CPU; the profile's weights of
  # the Ractors' threads must match their sum, and the Ractors' method must have most of the
  # samples.
  PROGRAM = <<~RUBY
    Warning[:experimental] = false
    def ractor_work(n) = (1..n).reduce(0) { |a, i| a ^ (i * i) }
    capture, mode = ARGV[0].to_sym, ARGV[1].to_sym
    cpu0 = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID, :nanosecond)
    Rperf.start(mode: mode, frequency: 1000, capture: capture)
    ractors = 4.times.map do
      Ractor.new do
        c0 = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID, :nanosecond)
        ractor_work(1_500_000)
        [Ractor.current.inspect[/#(\\d+)/, 1], Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID, :nanosecond) - c0]
      end
    end
    results = ractors.map { |r| r.respond_to?(:value) ? r.value : r.take }
    data = Rperf.stop
    Rperf.save(ARGV[2], data) if ARGV[2]
    process_cpu = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID, :nanosecond) - cpu0
    samples = data[:aggregated_samples]
    ractor_of = ->(s) { data[:label_sets][s[3]][:"%ractor"] }
    by_ractor = samples.select(&ractor_of).group_by(&ractor_of).transform_values { |v| v.sum { |s| s[1] } }
    threads = samples.select(&ractor_of).group_by { |s| s[2] }.transform_values { |v| v.map(&ractor_of).uniq }
    work = samples.select { |s| s[0].any? { |f| f[1].include?("ractor_work") } }.sum { |s| s[1] }
    total = samples.sum { |s| s[1] }
    p(ractors: by_ractor.keys.sort == results.map(&:first).sort,
      one_thread_each: threads.size == 4 && threads.values.all? { |r| r.size == 1 },
      work_share: work.fdiv(total).round(3),
      ractor_cpu: results.sum(&:last), ractor_weights: by_ractor.values.sum,
      process_cpu: process_cpu, total: total, sampled: data[:sampling_count])
  RUBY

  def run_program(capture, mode, save = nil)
    out, err, status = run_ruby("require 'rperf'\n" + PROGRAM, capture.to_s, mode.to_s, *save)
    assert status.success?, "#{capture} #{mode}: #{err}"
    eval(out.lines.last) # rubocop:disable Security/Eval -- our own subprocess's Hash#inspect
  end

  %i[signal postponed].each do |capture|
    define_method(:"test_cpu_of_four_ractors_#{capture}") do
      r = run_program(capture, :cpu)
      msg = "#{capture}: #{r}"
      assert r[:ractors], msg
      assert r[:one_thread_each], msg
      assert_operator r[:work_share], :>=, 0.5, msg
      # Their threads' weights are their CPU, up to the sampling error: the CPU a thread burns
      # before its first GVL event (Ractor start) and ticks skipped at the end.
      assert_within r[:ractor_cpu], r[:ractor_weights], 0.05, msg
      assert_operator r[:total], :<=, r[:process_cpu], msg
      assert_operator r[:total], :>=, 0.9 * r[:process_cpu], msg
      assert_operator r[:sampled], :>, 0, msg
    end
  end

  # Wall mode too; the model names each thread's Ractor (the Viewer's Threads tab) and the
  # Firefox export names the thread after it.
  def test_wall_mode_ractor_threads_are_labelled_and_named
    Dir.mktmpdir do |dir|
      path = File.join(dir, "r.json.gz")
      r = run_program(:signal, :wall, path)
      assert r[:ractors], r.to_s
      assert r[:one_thread_each], r.to_s
      data = Rperf.load(path)
      ractor_of = data[:aggregated_samples].to_h { |s| [s[2], data[:label_sets][s[3]][:"%ractor"]] }
      totals = Rperf::Native::Profile.from_hash(data).thread_totals
      assert_equal ractor_of.sort, totals.map { |t| [t[0], t[4]] }.sort
      firefox = File.join(dir, "r.firefox.json")
      Rperf.save(firefox, data)
      names = JSON.parse(File.read(firefox))["threads"].map { |t| t["name"] }
      ractor_of.each do |seq, ractor|
        assert_includes names, ractor ? "Thread #{seq} (Ractor ##{ractor})" : "Thread #{seq}"
      end
    end
  end
end
