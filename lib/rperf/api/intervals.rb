# frozen_string_literal: true

require "monitor"

module Rperf
  # The session's intervals as they end. Whoever cuts them (Rperf.snapshot(clear: true): the
  # Viewer's auto snapshots, Rperf::Continuous's exports, the user's own; and the session's
  # stop), each interval's Native::Profile goes to every listener, so a reader that only adds
  # intervals up (Rperf::Metrics) loses nothing to the others and cuts none itself.
  #
  # The cut and its listeners run under one lock, which a reader of the open interval
  # (Native snapshot without clear) takes too: it never sees an interval both in its running
  # total and in the open interval, nor in neither.
  module Intervals
    @lock = Monitor.new
    @listeners = []

    class << self
      # block.call(profile) at the end of each interval, on the thread that ended it. Returns a
      # handle for unlisten.
      def listen(&block)
        @lock.synchronize { @listeners << block }
        block
      end

      def unlisten(handle)
        @lock.synchronize { @listeners.delete(handle) }
      end

      # A signal handler cannot wait for a lock: there (Rperf.stop in a trap) the block runs
      # without it, as it did before there was one.
      def synchronize(&)
        @lock.synchronize(&)
      rescue ThreadError => e
        raise unless e.message.include?("trap context")

        yield
      end

      # Runs the block, which ends an interval and returns its profile (or nil), and hands the
      # profile to every listener, under the lock. Returns the profile.
      def cut
        synchronize do
          profile = yield
          ended(profile) if profile
          profile
        end
      end

      private

      def ended(profile)
        @listeners.each do |listener|
          listener.call(profile)
        rescue StandardError => e
          warn "rperf: an interval listener failed: #{e.class}: #{e.message}"
        end
      end
    end
  end
end
