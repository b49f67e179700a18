# frozen_string_literal: true

require_relative "work_scope"

module Rperf
  # Sidekiq server middleware: labels each job's samples with `job: "ClassName"` and, under
  # Rperf.start(defer: true), profiles only while jobs run.
  #
  #   Sidekiq.configure_server do |config|
  #     config.server_middleware { |chain| chain.add Rperf::SidekiqMiddleware }
  #   end
  class SidekiqMiddleware
    def call(_job_instance, job, _queue, &work)
      # ActiveJob jobs run inside Sidekiq's wrapper class: name the job, not the wrapper.
      name = job["wrapped"] || job["class"]
      WorkScope.run(job: name.to_s, &work)
    end
  end
end
