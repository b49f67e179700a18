# frozen_string_literal: true

require_relative "web_helper"

# Rperf::ActiveJobMiddleware with ActiveJob's :async adapter (a real thread pool) and
# perform_now, in a child process so that ActiveSupport stays out of this one.
class ActiveJobMiddlewareTest < Minitest::Test
  include WebTestHelper

  # A job's label holds from one label change to the next (no sampling error): its weight lies
  # between the time measured inside perform and that measured around the labelled block.
  def test_performs_are_labelled_by_job_class
    result, data = run_profiled_fixture("active_job_worker.rb")
    measured = result.fetch("measured")
    outer = result.fetch("outer")
    by_job = weight_by_label(data, :job)
    assert_equal %w[MailJob ReportJob], by_job.keys.compact.sort
    { "ReportJob" => "4 async + 1 perform_now", "MailJob" => "4 async" }.each do |job, runs|
      assert_operator by_job[job], :>=, measured.fetch(job), "#{job} (#{runs}) weight vs time in perform"
      assert_operator by_job[job], :<=, outer.fetch(job), "#{job} (#{runs}) weight vs time in the labelled block"
    end
    assert_operator measured.fetch("ReportJob"), :>=, 5 * 20e6
    # Each 20 ms sleep is blocked from its start to its wake-up.
    blocked = weight_labelled(data, job: "MailJob", "%GVL": "blocked")
    assert_operator blocked, :>=, 4 * 20e6
    assert_match(/needs an ActiveJob class/, result.fetch("not_a_job"))
  end
end
