# frozen_string_literal: true

module Rperf
  # exec keeps the thread's queued signals: a timer tick forwarded to this thread just before
  # would reach the new program before it has a handler, and a real-time signal's default
  # action ends it ("Real-time signal N", measured: 4 of 12 `rperf record` runs of a program
  # that execs under YJIT). So every exec (Kernel#exec, Kernel.exec, Process.exec) first stops
  # the timer and discards queued ticks; an exec that fails (it raised) starts it again, and
  # the profile collected so far goes on.
  module ExecHook
    def exec(...)
      Native.suspend_for_exec
      begin
        super(...)
      ensure # only after a failed exec: a successful one never returns
        resumed = Native.resume_after_failed_exec
        warn "rperf: the timer did not restart after a failed exec: #{resumed}" unless resumed == true
      end
    end

    # Kernel#exec is private (Object's), Kernel.exec and Process.exec public. The private one is
    # included in Object (found before Kernel), not prepended to Kernel: a module prepended to
    # Kernel moves its methods to an origin class, and Ruby's frame labels then read every
    # Kernel method as a singleton one ("Kernel.sleep" for Kernel#sleep).
    PRIVATE = Module.new do
      include ExecHook
      private :exec
    end

    def self.install
      return if @installed

      Object.include(PRIVATE)
      Kernel.singleton_class.prepend(self)
      Process.singleton_class.prepend(self)
      @installed = true
    end
  end
end
