# frozen_string_literal: true

module Rperf
  # Thread names ("puma srv tp 001", "AR Pool Reaper") are recorded when they are given: the
  # sampler's hooks and sample jobs may not call Ruby, and a thread named after start may end
  # before the profile is built (a server's pool threads are joined before at_exit stops the
  # session). Thread#name= is the one way Ruby names a thread; the names a thread had before
  # the session started are read at start. Thread is a class: prepending keeps its methods'
  # frame labels ("Thread#join").
  module ThreadNameHook
    def name=(name)
      super
      Native.thread_named(self) if Native.running?
    end

    def self.install
      return if @installed

      Thread.prepend(self)
      @installed = true
    end
  end
end
