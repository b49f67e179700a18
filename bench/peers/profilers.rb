# frozen_string_literal: true

module PeerBench
  # One adapter per profiler: start(mode, frequency) and stop -> { samples:, sampling_time_ns: }.
  # Loaded in a child process, which loads exactly one profiler (ours and rperf 0.11.1 both
  # define module Rperf; the parent puts the right lib directory on the child's load path).
  module Profilers
    # Ours and rperf 0.11.1 share the API and report their own time in sample jobs.
    # inherit: false: no session directory for child processes, only the sampling engine.
    module RperfAPI
      def self.load
        require "rperf"
        Rperf::VERSION
      end

      def self.start(mode, frequency)
        Rperf.start(mode: mode, frequency: frequency, inherit: false)
      end

      def self.stop
        data = Rperf.stop
        { samples: data[:sampling_count], sampling_time_ns: data[:sampling_time_ns] }
      end
    end

    module StackProfAdapter
      def self.load
        require "stackprof"
        StackProf::VERSION
      end

      def self.start(mode, frequency)
        StackProf.start(mode: mode, interval: 1_000_000 / frequency, raw: false)
      end

      def self.stop
        StackProf.stop
        results = StackProf.results
        { samples: results[:samples], sampling_time_ns: nil }
      end
    end

    # Vernier has a wall mode only.
    module VernierAdapter
      def self.load
        require "vernier"
        Vernier::VERSION
      end

      def self.start(mode, frequency)
        raise ArgumentError, "vernier has no #{mode} mode" unless mode == :wall

        Vernier.start_profile(mode: :wall, interval: 1_000_000 / frequency)
      end

      def self.stop
        result = Vernier.stop_profile
        # Consecutive identical samples share an entry; the weights count the samples.
        { samples: result.total_weights, sampling_time_ns: nil }
      end
    end

    module Unprofiled
      def self.load = nil
      def self.start(_mode, _frequency) = nil
      def self.stop = { samples: 0, sampling_time_ns: nil }
    end

    ALL = {
      "ours" => RperfAPI,
      "rperf" => RperfAPI,
      "stackprof" => StackProfAdapter,
      "vernier" => VernierAdapter,
      "none" => Unprofiled,
    }.freeze

    def self.fetch(name)
      ALL.fetch(name) { raise ArgumentError, "unknown profiler #{name.inspect}" }
    end
  end
end
