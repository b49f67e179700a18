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
# (the default follows YJIT: `RUBYOPT=--yjit` alone gives the signal path).
if (test_capture = ENV["RPERF_TEST_CAPTURE"]&.to_sym)
  Rperf.singleton_class.prepend(Module.new do
    define_method(:start) { |capture: test_capture, **kw, &blk| super(capture: capture, **kw, &blk) }
  end)
end

# Timing-sensitive tests measure real time on a shared, noisy machine. A failed measurement is
# taken again once: the test fails only when both attempts fail, and a retry is reported.
module TimingRetry
  def timing_sensitive(*names)
    names.each do |name|
      original = instance_method(name)
      define_method(name) do
        original.bind_call(self)
      rescue Minitest::Assertion => e
        Rperf.stop if Rperf.running?
        warn "\n#{self.class}##{name}: measuring again after: #{e.message.lines.last.strip}"
        original.bind_call(self)
      end
    end
  end
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

class Minitest::Test
  include RperfTestHelper
  extend TimingRetry

  def teardown
    Rperf.stop if Rperf.running?
  end
end
