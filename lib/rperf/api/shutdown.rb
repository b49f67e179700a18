# frozen_string_literal: true

module Rperf
  # The session's end when its process exits (the at_exit handlers of lib/rperf.rb, a child's,
  # Autostart's). Ctrl-C in a terminal signals the whole process group, often twice in a row:
  # while the last profile is merged and written, INT, TERM, HUP and QUIT are held back (the
  # handlers in place before are restored afterwards), so a second signal cannot abandon the write
  # half-way and lose what was collected. A signal held back says so once the profile is written;
  # a process not already ending by a signal then exits 128 + its number, as it would have.
  module Shutdown
    SIGNALS = %w[INT TERM HUP QUIT].freeze

    @signalled = false

    class << self
      # Whether the process is ending because of a signal (or got one while ending): a root then
      # waits for its children too, which got the same signal from the terminal (Multiprocess).
      def signalled? = @signalled

      # Stops the running session, if any, as the process ends with `ending` ($! in at_exit);
      # with a block, runs it instead of Rperf.stop_without_result (Autostart's, which also sets
      # the status). No result Hash is built: nothing reads it at exit.
      # Handlers are replaced only while a session runs (a process that merely loaded rperf
      # keeps its own, which may be a C extension's).
      def stop(ending)
        return unless Rperf.running?

        received = []
        previous = hold_signals(received)
        begin
          @signalled ||= ending.is_a?(SignalException)
          block_given? ? yield : Rperf.stop_without_result
        ensure
          restore(previous)
          report_held(received, previous, ending)
        end
      end

      private

      # Each handler is replaced by one that only records the signal (run by the main thread
      # between two Ruby operations, as any trap; the native write holds no Ruby state then).
      def hold_signals(received)
        SIGNALS.each_with_object({}) do |sig, previous|
          previous[sig] = Signal.trap(sig) do
            received << sig
            @signalled = true
          end
        rescue ArgumentError, SecurityError # reserved on this platform, or by the VM
          next
        end
      end

      def restore(previous)
        previous.each do |sig, handler|
          Signal.trap(sig, handler)
        rescue ArgumentError
          next
        end
      end

      def report_held(received, previous, ending)
        return if received.empty?

        sig = received.first
        warn "rperf: SIG#{sig} during the final write of the profile was held back until it was written"
        # The program's own handler had its turn with the first signal; a process already ending
        # by a signal or with a failure keeps that status.
        return unless %w[DEFAULT SYSTEM_DEFAULT].include?(previous[sig])
        return unless ending.nil? || (ending.is_a?(SystemExit) && ending.success?)

        exit(128 + Signal.list.fetch(sig))
      end
    end
  end
end
