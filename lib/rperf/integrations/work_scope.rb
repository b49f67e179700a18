# frozen_string_literal: true

require_relative "../../rperf"

module Rperf
  # One unit of work of a server or a job runner (a request, a job), shared by the Rack,
  # Sidekiq and ActiveJob integrations. Its samples carry `labels`; under a session started
  # with defer: true, sampling is switched on only while such units run. Without a session the
  # work runs untouched: the app may boot before Rperf.start, or run after Rperf.stop.
  module WorkScope
    module_function

    def run(labels)
      return yield unless Rperf.running?

      entered = false
      work = proc do
        entered = true
        yield
      end
      begin
        # Rperf.profile without defer would count as a profile block and pause the session
        # when it ends: a plain label is all a continuous session needs.
        WorkEvents.unit(labels) { Rperf.deferred? ? Rperf.profile(**labels, &work) : Rperf.label(**labels, &work) }
      rescue RuntimeError
        # The session stopped between the check above and Rperf.profile ("not started"):
        # the work has not run yet, so run it unprofiled. Errors of the work itself propagate.
        raise if entered

        yield
      end
    end

    # A label computed by user code must not take the request down: report it once and fall
    # back to the default.
    def safe_label(what, fallback)
      yield
    rescue StandardError => e
      unless @warned
        @warned = true
        warn "rperf: #{what} raised #{e.class}: #{e.message}; using the default label"
      end
      fallback.call
    end
  end
end
