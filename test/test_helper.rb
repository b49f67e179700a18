# frozen_string_literal: true

$LOAD_PATH.unshift File.expand_path("../lib", __dir__)
require "rperf"
require "minitest/autorun"
require "open3"
require "rbconfig"
require "tmpdir"
require "fileutils"

# Subprocess output (frame names, reports) is UTF-8 whatever the locale of the CI shell.
Encoding.default_external = Encoding::UTF_8

module RperfTestHelper
  ROOT = File.expand_path("..", __dir__)
  RUBY = RbConfig.ruby

  # Runs Ruby code in a fresh process with rperf on the load path.
  def run_ruby(code, *args, env: {}, chdir: ROOT)
    Open3.capture3(env, RUBY, "-I#{ROOT}/lib", "-e", code, *args, chdir: chdir)
  end

  def burn_cpu(seconds)
    clock = Process::CLOCK_THREAD_CPUTIME_ID
    t0 = Process.clock_gettime(clock)
    x = 0
    x += 1 while Process.clock_gettime(clock) - t0 < seconds
    x
  end

  def labels_of(data, sample) = data[:label_sets][sample[3]]

  def monotonic_ns = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
  def thread_cpu_ns = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID, :nanosecond)

  # Timing assertions compare a profile with what the machine gave the code, measured around it
  # (an upper bound) and inside it (a lower bound), and allow only the sampling error below.
  #
  # A sample charges the interval since its thread's previous event to the stack and labels it
  # finds at the interval's end. So of a region of a thread's samples (those the block selects),
  # only the first sample of each stretch inside it (its interval may begin before the region)
  # and the first one after it (its interval may begin inside) mix the region's time with the
  # outside, and so does the thread's last sample when it is inside (stop closes the interval
  # on the thread's last stack): the sum of their weights bounds the error of the region's
  # weight, whatever the machine did meanwhile (a thread descheduled for 30 ms makes a 30 ms
  # sample). Needs the raw samples (aggregate: false).
  def boundary_weight(data, thread_seq, &inside)
    samples = data.fetch(:raw_samples).each_with_index.select { |s, _| s[2] == thread_seq }
    samples = samples.sort_by { |s, i| [s[5], i] }.map(&:first)
    was_inside = false
    crossings = samples.sum do |s|
      now_inside = inside.call(s) ? true : false
      crossing = now_inside != was_inside
      was_inside = now_inside
      crossing ? s[1] : 0
    end
    last = samples.last
    crossings + (last && was_inside && samples.size > 1 && inside.call(samples[-2]) ? last[1] : 0)
  end

  def raw_weight(data, thread_seq = nil, &selected)
    data.fetch(:raw_samples).sum { |s| (thread_seq.nil? || s[2] == thread_seq) && selected.call(s) ? s[1] : 0 }
  end

  def frame?(sample, label) = sample[0].any? { |f| f[1] == label }

  # What a profile says, whatever derived keys (meta, summary, counts) came with it: for
  # comparing a profile with its saved and loaded copy. Label keys compare as Symbols.
  def body(data)
    {
      mode: data[:mode].to_s, frequency: data[:frequency], aggregated_samples: data[:aggregated_samples],
      raw_samples: data[:raw_samples], label_sets: data[:label_sets].map { |h| h.transform_keys(&:to_sym) },
    }
  end

  # Total weight of samples whose frames include a frame with this label.
  def weight_including(data, label, samples: data[:aggregated_samples])
    samples.select { |s| s[0].any? { |f| f[1] == label } }.sum { |s| s[1] }
  end

  def weight_where(data, &blk)
    data[:aggregated_samples].select { |s| blk.call(s, labels_of(data, s)) }.sum { |s| s[1] }
  end

  def assert_within(expected, actual, rel, msg = nil)
    diff = (actual - expected).abs
    assert diff <= expected.abs * rel,
           "#{msg && "#{msg}: "}expected #{actual} to be within #{(rel * 100).round(1)}% of #{expected} (off by #{(diff * 100.0 / expected).round(2)}%)"
  end
end

# RPERF_TEST_CAPTURE=signal|postponed runs every Rperf.start of the suite on that capture path
# (the default follows YJIT: `RUBYOPT=--yjit` alone gives the signal path). A start with
# `signal: false` has no signal to capture in and keeps the default.
if (test_capture = ENV["RPERF_TEST_CAPTURE"]&.to_sym)
  Rperf.singleton_class.prepend(Module.new do
    define_method(:start) do |**kw, &blk|
      kw[:capture] = test_capture unless kw.key?(:capture) || kw[:signal] == false
      super(**kw, &blk)
    end
  end)
end

# A private temporary directory per test, removed after it: @dir, and tmp(name) in it.
module TempDirTest
  def setup
    super
    @dir = Dir.mktmpdir("rperf-test")
  end

  def teardown
    super
    FileUtils.rm_rf(@dir)
  end

  def tmp(name) = File.join(@dir, name)
end

# script/test runs the suite on each Ruby in turn. A test of what does not depend on the Ruby
# running it (the WebAssembly build, the page's JavaScript in Chromium) runs on the first only:
# script/test names that Ruby in RPERF_RUBY_INDEPENDENT_DONE for the ones after it.
module RubyIndependentTest
  def before_setup
    super
    done_on = ENV["RPERF_RUBY_INDEPENDENT_DONE"]
    skip "ran on Ruby #{done_on} in this run; it does not depend on the Ruby" if done_on && !done_on.empty?
  end
end

class Minitest::Test
  include RperfTestHelper

  def teardown
    Rperf.stop if Rperf.running?
  end
end
