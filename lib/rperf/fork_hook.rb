# frozen_string_literal: true

module Rperf
  # Process._fork is the single point every fork goes through (Kernel#fork, Process.fork,
  # IO.popen("-")). In the child the native session is abandoned: no worker, no timer, no hooks.
  module ForkHook
    def _fork
      pid = super
      Rperf::Native.after_fork_child if pid.zero?
      pid
    end

    def self.install
      return if @installed

      Process.singleton_class.prepend(self)
      @installed = true
    end
  end
end
