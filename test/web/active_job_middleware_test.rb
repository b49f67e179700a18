# frozen_string_literal: true

require_relative "web_helper"

# Rperf::ActiveJobMiddleware with ActiveJob's :async adapter (a real thread pool) and
# perform_now, in a child process so that ActiveSupport stays out of this one.
class ActiveJobMiddlewareTest < Minitest::Test
  include WebTestHelper

  def test_performs_are_labelled_by_job_class
    result, data = run_profiled_fixture("active_job_worker.rb")
    measured = result.fetch("measured")
    by_job = weight_by_label(data, :job)
    assert_equal %w[MailJob ReportJob], by_job.keys.compact.sort
    assert_within measured.fetch("ReportJob"), by_job["ReportJob"], 0.05, "ReportJob (4 async + 1 perform_now)"
    assert_within measured.fetch("MailJob"), by_job["MailJob"], 0.05, "MailJob"
    assert_operator by_job["ReportJob"], :>=, 5 * 20e6 * 0.95
    blocked = weight_labelled(data, job: "MailJob", "%GVL": "blocked")
    assert_operator blocked, :>=, 0.95 * 4 * 20e6
    assert_match(/needs an ActiveJob class/, result.fetch("not_a_job"))
  end
end
