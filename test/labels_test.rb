# frozen_string_literal: true

require_relative "test_helper"

class LabelsTest < Minitest::Test
  def test_label_is_ignored_when_not_running
    assert_equal 42, Rperf.label(request: "x") { 42 }
    assert_nil Rperf.label(request: "x")
    assert_equal({}, Rperf.labels)
  end

  def test_label_merge_nil_delete_nesting_and_exceptions
    Rperf.start(mode: :wall)
    Rperf.label(a: 1)
    assert_equal({ a: 1 }, Rperf.labels)
    Rperf.label(b: 2) do
      assert_equal({ a: 1, b: 2 }, Rperf.labels)
      Rperf.label(a: nil) { assert_equal({ b: 2 }, Rperf.labels) }
      assert_raises(RuntimeError) { Rperf.label(c: 3) { raise "boom" } }
      assert_equal({ a: 1, b: 2 }, Rperf.labels)
    end
    assert_equal({ a: 1 }, Rperf.labels)
    other = Thread.new { Rperf.labels }.value
    assert_equal({}, other, "labels are per thread")
  end

  def test_labelled_samples_carry_their_label_set
    data = Rperf.start(mode: :cpu) do
      Rperf.label(endpoint: "/fast") { burn_cpu(0.05) }
      Rperf.label(endpoint: "/slow") { burn_cpu(0.15) }
    end
    fast = weight_where(data) { |_s, l| l[:endpoint] == "/fast" }
    slow = weight_where(data) { |_s, l| l[:endpoint] == "/slow" }
    assert_within 3.0, slow.to_f / fast, 0.15
  end

  def test_defer_and_profile_sample_only_inside_profile_blocks
    Rperf.start(mode: :wall, defer: true)
    burn_cpu(0.1)
    sleep 0.1
    before = Rperf.snapshot
    assert_equal 0, before[:trigger_count]
    assert_equal 0, before[:sampling_count]
    assert_empty before[:aggregated_samples]
    t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
    Rperf.profile(endpoint: "/a") do
      burn_cpu(0.05)
      Rperf.profile { burn_cpu(0.05) } # nesting keeps the timer running
      assert_equal({ endpoint: "/a" }, Rperf.labels)
    end
    inside = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond) - t0
    sleep 0.1 # paused again: not reported anywhere
    burn_cpu(0.05)
    data = Rperf.stop
    total = data[:aggregated_samples].sum { |s| s[1] }
    assert_within inside, total, 0.05, "only the profile block's time"
    assert_equal 0, weight_where(data) { |_s, l| l[:"%GVL"] == "blocked" }, "idle time before profile is not GVL blocked"
    assert(data[:aggregated_samples].all? { |s| data[:label_sets][s[3]][:endpoint] == "/a" })
    assert_operator data[:trigger_count], :<=, (inside / 1e6 * 1.1).ceil + 5, "the timer ran only inside profile"
  end

  def test_profile_requires_a_block_and_a_running_profiler
    assert_raises(RuntimeError) { Rperf.profile { 1 } }
    Rperf.start(defer: true)
    assert_raises(ArgumentError) { Rperf.profile }
  end

  timing_sensitive :test_labelled_samples_carry_their_label_set,
                   :test_defer_and_profile_sample_only_inside_profile_blocks

  # As rperf 0.11: in a session that is not deferred, a profile block labels and sampling goes
  # on after it ends.
  def test_profile_block_does_not_pause_a_continuous_session
    Rperf.start(mode: :cpu)
    Rperf.profile(endpoint: "/a") { burn_cpu(0.05) }
    burn_cpu(0.1)
    data = Rperf.stop
    after = weight_where(data) { |_s, l| l.empty? }
    assert_operator after, :>, 0.08e9, "the CPU burned after the block is sampled"
    assert_operator weight_where(data) { |_s, l| l[:endpoint] == "/a" }, :>, 0.03e9
  end
end
