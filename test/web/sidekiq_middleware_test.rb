# frozen_string_literal: true

require_relative "web_helper"
require "rperf/sidekiq"
require "rperf/viewer"

# Rperf::SidekiqMiddleware with a real redis-server and a real Sidekiq (a child process running
# Sidekiq embedded): jobs fetched from Redis are labelled by class, and each class's weight
# matches the time its jobs spent in perform.
class SidekiqMiddlewareTest < Minitest::Test
  include WebTestHelper

  def test_jobs_are_labelled_by_class_with_their_time
    output, data = with_redis { |port| run_profiled_fixture("sidekiq_worker.rb", port) }
    measured = output.fetch("measured")
    outer = output.fetch("outer")
    by_job = weight_by_label(data, :job)
    assert_operator measured.fetch("SleepJob"), :>=, 6 * 30e6, "six 30 ms sleeps ran"
    warn "sidekiq: measured #{measured.inspect}, outer #{outer.inspect}, labelled #{by_job.inspect}" if ENV["RPERF_TEST_VERBOSE"]
    # A job's labelled weight covers its perform and no more than the labelled block around it
    # (a middleware outside Rperf's measures that block: a GVL wait just before or after
    # perform is in it, and perform's own timing cannot see it). Label changes close intervals:
    # no sampling error at either end.
    %w[CpuJob SleepJob].each do |job|
      assert_operator by_job[job], :>=, measured.fetch(job), "#{job} weight vs time in perform"
      assert_operator by_job[job], :<=, outer.fetch(job), "#{job} weight vs time in the labelled block"
      assert_operator outer.fetch(job), :>=, measured.fetch(job)
    end
    sleeping = weight_labelled(data, job: "SleepJob", "%GVL": "blocked")
    # Each 30 ms sleep is blocked from its start to its wake-up; the rest is waiting for the GVL
    # behind the CPU jobs.
    assert_operator sleeping, :>=, 6 * 30e6, "SleepJob time blocked off the GVL"
    assert_operator sleeping, :<, by_job["SleepJob"]
    assert_equal %w[CpuJob SleepJob], by_job.keys.compact.sort
  end

  # The whole process: "hide idle threads" (profile/idle_wait.hh) removes the processors' wait
  # for a job (the blocking pop's read under Sidekiq::BasicFetch#retrieve_work; connecting to
  # Redis on the way is not a wait) and keeps every job's time.
  def test_hiding_idle_keeps_the_jobs_and_removes_the_fetch_wait
    output, data = with_redis { |port| run_profiled_fixture("sidekiq_worker.rb", port, "whole") }
    visible = model_selected(data, idle: true).to_h
    fetch_wait = lambda do |rows|
      rows.sum do |frames, weight, _, lsi|
        labels = frames.map { |f| f[1] }
        waiting = labels.first == "IO#wait_readable" && labels.include?("RedisClient#blocking_call") &&
                  labels.include?("Sidekiq::BasicFetch#retrieve_work")
        waiting && label_value(data[:label_sets][lsi], :"%GVL") == "blocked" ? weight : 0
      end
    end
    warn "sidekiq idle: fetch wait #{fetch_wait.(data[:aggregated_samples]) / 1e6} ms, jobs #{weight_by_label(data, :job).inspect}" if ENV["RPERF_TEST_VERBOSE"]
    # Two processors waited at least the second after the jobs.
    assert_operator fetch_wait.(data[:aggregated_samples]), :>, 2 * 0.9e9
    assert_equal 0, fetch_wait.(visible[:aggregated_samples])
    jobs = weight_by_label(data, :job).except(nil)
    assert_equal %w[CpuJob SleepJob], jobs.keys.sort
    assert_equal jobs, weight_by_label(visible, :job).except(nil), "no job time is idle"
    assert_operator jobs["SleepJob"], :>=, output.dig("measured", "SleepJob")
  end

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
