# frozen_string_literal: true

require_relative "web_helper"
require "rperf/sidekiq"

# Rperf::SidekiqMiddleware with a real redis-server and a real Sidekiq (a child process running
# Sidekiq embedded): jobs fetched from Redis are labelled by class, and each class's weight
# matches the time its jobs spent in perform.
class SidekiqMiddlewareTest < Minitest::Test
  include WebTestHelper
  extend TimingRetry

  def test_jobs_are_labelled_by_class_with_their_time
    measured, data = with_redis { |port| run_profiled_fixture("sidekiq_worker.rb", port) }
    by_job = weight_by_label(data, :job)
    assert_operator measured.fetch("SleepJob"), :>=, 6 * 30e6, "six 30 ms sleeps ran"
    warn "sidekiq: measured #{measured.inspect}, labelled #{by_job.inspect}" if ENV["RPERF_TEST_VERBOSE"]
    assert_within measured.fetch("CpuJob"), by_job["CpuJob"], 0.05, "CpuJob weight vs time in perform"
    assert_within measured.fetch("SleepJob"), by_job["SleepJob"], 0.05, "SleepJob weight vs time in perform"
    sleeping = weight_labelled(data, job: "SleepJob", "%GVL": "blocked")
    # The 30 ms sleeps are off the GVL; the rest is waiting for it behind the CPU jobs.
    assert_operator sleeping, :>=, 0.95 * 6 * 30e6, "SleepJob time blocked off the GVL"
    assert_operator sleeping, :<, by_job["SleepJob"]
    assert_equal %w[CpuJob SleepJob], by_job.keys.compact.sort
  end
  timing_sensitive :test_jobs_are_labelled_by_class_with_their_time

  def test_job_names_and_no_session
    middleware = Rperf::SidekiqMiddleware.new
    ran = []
    middleware.call(nil, { "class" => "PlainJob" }, "default") { ran << Rperf.labels }
    Rperf.start(mode: :wall, defer: true)
    middleware.call(nil, { "class" => "PlainJob" }, "default") { ran << Rperf.labels }
    wrapped = { "class" => "Sidekiq::ActiveJob::Wrapper", "wrapped" => "ReportJob" }
    middleware.call(nil, wrapped, "default") { ran << Rperf.labels }
    assert_equal [{}, { job: "PlainJob" }, { job: "ReportJob" }], ran
  end
end
