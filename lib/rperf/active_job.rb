# frozen_string_literal: true

require_relative "work_scope"

module Rperf
  # Include into a job class (or ApplicationJob): each perform's samples are labelled with
  # `job: "ClassName"` and, under Rperf.start(defer: true), only performs are profiled.
  #
  #   class ApplicationJob < ActiveJob::Base
  #     include Rperf::ActiveJobMiddleware
  #   end
  module ActiveJobMiddleware
    def self.included(job_class)
      unless job_class.respond_to?(:around_perform)
        raise ArgumentError, "#{self} needs an ActiveJob class (#{job_class} has no around_perform)"
      end

      job_class.around_perform do |job, perform|
        WorkScope.run(job: job.class.name.to_s) { perform.call }
      end
    end
  end
end
