# frozen_string_literal: true

module Rperf
  # Process._fork is the single point every fork goes through (Kernel#fork, Process.fork,
  # IO.popen("-")). In the child the native session is abandoned (no worker, no timer, no hooks), and with
  # inherit a new one starts with the parent's settings (see Multiprocess).
  module ForkHook
    @in_child = []

    def _fork
      Rperf.prepare_fork
      pid = super
      if pid.zero?
        Rperf.restart_in_child
        ForkHook.run_in_child
      end
      pid
    end

    # block.call in each forked child, after rperf's own restart (Rperf::Continuous starts the
    # child's session and exporter there).
    def self.in_child(&block) = @in_child << block

    def self.run_in_child
      @in_child.each do |block|
        block.call
      rescue StandardError => e
        warn "rperf: after fork: #{e.class}: #{e.message}"
      end
    end

    def self.install
      return if @installed

      Process.singleton_class.prepend(self)
      @installed = true
    end
  end
end
