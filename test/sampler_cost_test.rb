# frozen_string_literal: true

require_relative "test_helper"
require "tmpdir"

# What the sample path records and what it reports about its own cost.
class SamplerCostTest < Minitest::Test
  include RperfTestHelper

  def test_hook_time_is_reported_apart_from_the_sample_jobs
    data = Rperf.start(mode: :wall, frequency: 1000) do
      20.times { sleep 0.001 } # 20 SUSPENDED/RESUMED pairs: hook work, no sample job
      burn_cpu(0.05)
    end
    assert_operator data[:hook_time_ns], :>, 0
    assert_operator data[:sampling_count], :>, 10
    assert_operator data[:sampling_time_ns], :>, 0
  end

  # Line numbers cost at every sample: recorded only when the output needs them.
  def test_lines_are_captured_only_when_the_output_needs_them
    settings = ->(**kw) { Rperf::Session.new(Rperf::Settings.new(**kw)) }
    refute settings.call.capture_lines?
    assert settings.call(lines: true).capture_lines?
    assert settings.call(output: "p.pb.gz").capture_lines?
    refute settings.call(output: "p.json.gz").capture_lines?
    assert settings.call(output: "p.out", format: :pprof).capture_lines?
    refute settings.call(output: "p.pb.gz", format: :json).capture_lines?
  end

  def test_a_pprof_output_has_lines_and_the_returned_profile_does_not
    Dir.mktmpdir do |dir|
      path = File.join(dir, "p.pb.gz")
      data = Rperf.start(output: path, frequency: 1000) { burn_cpu(0.05) }
      assert(data[:aggregated_samples].all? { |frames, *| frames.all? { |f| f.size == 2 } })
      lines = Rperf::Storage.load_any(path)[:aggregated_samples].flat_map(&:first).map { |f| f[2] }
      assert(lines.any? { |l| l.to_i.positive? }, "the pprof file has line numbers")
    end
  end
end
