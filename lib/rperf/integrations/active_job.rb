# frozen_string_literal: true

require_relative "work_scope"
require "active_support/concern"

module Rperf
  # Include into a job class (or ApplicationJob, or a concern of your own): each perform's
  # samples are labelled with `job: "ClassName"` and, under Rperf.start(defer: true), only
  # performs are profiled. An ActiveSupport::Concern, as in rperf 0.11: included into another
  # concern, it adds the callback to the job class that includes that one.
  #
  #   class ApplicationJob < ActiveJob::Base
  #     include Rperf::ActiveJobMiddleware
  #   end
  module ActiveJobMiddleware
    extend ActiveSupport::Concern

    included do
      # A class without ActiveJob's callbacks: the NoMethodError rperf 0.11 raises, with a
      # message that says what is missing.
      unless respond_to?(:around_perform)
        raise NoMethodError.new("#{ActiveJobMiddleware} needs an ActiveJob class (#{self} has no around_perform)",
                                :around_perform)
      end

      around_perform do |job, perform|
        WorkScope.run(job: job.class.name.to_s) { perform.call }
      end
    end
  end
end
