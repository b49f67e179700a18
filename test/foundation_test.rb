# frozen_string_literal: true

require_relative "test_helper"

class FoundationTest < Minitest::Test
  def test_version_from_a_fresh_process
    out, err, status = run_ruby('require "rperf"; p Rperf::VERSION')
    assert status.success?, err
    assert_equal "\"#{Rperf::VERSION}\"\n", out
    assert_match(/\A\d+\.\d+\.\d+\z/, Rperf::VERSION)
  end

  def test_native_core_is_linked_monotonic_clock
    a = Rperf::Native.monotonic_ns
    ruby_ns = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
    sleep 0.01
    b = Rperf::Native.monotonic_ns
    assert_operator b - a, :>=, 10_000_000
    assert_operator (ruby_ns - a).abs, :<, 5_000_000, "same clock as CLOCK_MONOTONIC"
  end

  def test_older_ruby_gets_a_clear_message
    old = "/usr/bin/ruby"
    clean = %w[RUBYOPT RUBYLIB GEM_HOME GEM_PATH BUNDLE_GEMFILE BUNDLE_BIN_PATH].to_h { |k| [k, nil] }
    version = File.executable?(old) ? Open3.capture2(clean, old, "-e", "print RUBY_VERSION").first : "none"
    skip "no older system Ruby here" unless version < "3.3"
    _out, err, status = Open3.capture3(clean, old, "-I#{ROOT}/lib", "-e", 'require "rperf"')
    refute status.success?
    assert_match(/rperf needs Ruby >= 3\.3/, err)
  end

  def test_gemspec_requires_ruby_3_3
    spec = Gem::Specification.load(File.join(ROOT, "rperf.gemspec"))
    assert_equal Gem::Requirement.new(">= 3.3"), spec.required_ruby_version
    assert_includes spec.extensions, "ext/rperf/extconf.rb"
  end
end
