# frozen_string_literal: true

module Rperf
  # Process._fork is the single point every fork goes through (Kernel#fork, Process.fork,
  # IO.popen("-")). In the child the native session is abandoned (no worker, no timer, no hooks), and with
  # inherit a new one starts with the parent's settings (see Multiprocess).
  module ForkHook
    def _fork
      Rperf.prepare_fork
      pid = super
      Rperf.restart_in_child if pid.zero?
      pid
    end

    def self.install
      return if @installed

      Process.singleton_class.prepend(self)
      @installed = true
    end
  end
end
