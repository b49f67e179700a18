# frozen_string_literal: true

module PeerBench
  # One adapter per profiler: start(mode, frequency, allocations) and stop -> { samples:,
  # sampling_time_ns:, allocation_samples:, estimated_allocations: } (nil where not measured).
  # allocations: nil, or sample one allocation in N besides the time samples (stackprof: instead
  # of them, its :object mode); retained: ours' retained: true. After stop, top_sites: the
  # heaviest allocation sites of the result, [[site, share of the sampled objects], ...] (a site:
  # the innermost workload method, Workloads::ALLOC_SITES, on the sampled stack).
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

      def self.start(mode, frequency, allocations = nil, capture = nil, retained: false)
        options = { mode: mode, frequency: frequency, inherit: false }
        options[:allocations] = allocations if allocations # rperf 0.11.1 has no such keyword
        options[:capture] = capture if capture # nor this one
        options[:retained] = true if retained # nor this one
        Rperf.start(**options)
      end

      # estimated_allocations: what the profile says was allocated (sampled allocations x N).
      def self.stop
        data = @data = Rperf.stop
        rows = data[:allocation_samples]
        { samples: data[:sampling_count], sampling_time_ns: data[:sampling_time_ns],
          allocation_samples: data[:allocation_sample_count], estimated_allocations: rows&.sum { |r| r[1] } }
      end

      # allocation_samples: [frames (leaf first), objects, ...]
      def self.top_sites
        Profilers.top(@data[:allocation_samples].map { |frames, objects| [Profilers.site(frames.map { |f| f[1] }), objects] })
      end
    end

    module StackProfAdapter
      def self.load
        require "stackprof"
        StackProf::VERSION
      end

      # :object mode: one sample every `interval` allocations (a counter), no time samples.
      def self.start(mode, frequency, allocations = nil, _capture = nil, retained: false)
        raise ArgumentError, "stackprof does not track frees" if retained

        @object = !allocations.nil?
        if @object
          StackProf.start(mode: :object, interval: allocations, raw: false)
        else
          StackProf.start(mode: mode, interval: 1_000_000 / frequency, raw: false)
        end
      end

      def self.stop
        StackProf.stop
        results = @results = StackProf.results
        return { samples: 0, sampling_time_ns: nil, allocation_samples: results[:samples] } if @object

        { samples: results[:samples], sampling_time_ns: nil }
      end

      # Without raw stacks, a site's samples are its method's total_samples: the workload's
      # make_* methods call no other make_* method.
      def self.top_sites
        Profilers.top(@results[:frames].values.map { |f| [Profilers.site([f[:name]]), f[:total_samples]] }, @results[:samples])
      end
    end

    # Vernier has a wall mode only.
    module VernierAdapter
      def self.load
        require "vernier"
        Vernier::VERSION
      end

      # allocation_interval: N records one allocation every N (a counter), besides time samples.
      def self.start(mode, frequency, allocations = nil, _capture = nil, retained: false)
        raise ArgumentError, "vernier has no #{mode} mode" unless mode == :wall
        raise ArgumentError, "vernier does not track frees" if retained

        options = { mode: :wall, interval: 1_000_000 / frequency }
        options[:allocation_interval] = allocations if allocations
        @allocations = !allocations.nil?
        Vernier.start_profile(**options)
      end

      def self.stop
        result = @result = Vernier.stop_profile
        # Consecutive identical samples share an entry; the weights count the samples.
        report = { samples: result.total_weights, sampling_time_ns: nil }
        return report unless @allocations

        report.merge(allocation_samples: result.threads.values.sum { |t| t.dig(:allocations, :samples)&.size || 0 })
      end

      # Each thread's allocations: {samples: [stack index, ...], weights: [...]}; a stack's
      # frames from the leaf (each distinct stack read once).
      def self.top_sites
        site_of = Hash.new { |h, idx| h[idx] = Profilers.site(@result.stack(idx).each_frame.map(&:label)) }
        Profilers.top(@result.threads.values.flat_map do |t|
          allocations = t[:allocations] || { samples: [] }
          allocations[:samples].each_with_index.map { |idx, k| [site_of[idx], allocations[:weights]&.at(k) || 1] }
        end)
      end
    end

    module Unprofiled
      def self.load = nil
      def self.start(_mode, _frequency, _allocations = nil, _capture = nil, retained: false) = nil
      def self.stop = { samples: 0, sampling_time_ns: nil }
    end

    ALL = {
      "ours" => RperfAPI,
      "rperf" => RperfAPI,
      "stackprof" => StackProfAdapter,
      "vernier" => VernierAdapter,
      "none" => Unprofiled,
    }.freeze

    # The workload site a stack's frame names (innermost first) allocate in, or "other".
    def self.site(names)
      names.each do |name|
        site = Workloads::ALLOC_SITES.find { |s| name.to_s.end_with?(".#{s}", "##{s}", " #{s}") || name.to_s == s }
        return site if site
      end
      "other"
    end

    # The 3 heaviest of [[site, weight], ...] with their share of `total` (default: all the weights).
    def self.top(pairs, total = nil)
      by_site = pairs.each_with_object(Hash.new(0)) { |(site, weight), acc| acc[site] += weight }
      total ||= by_site.values.sum
      by_site.reject { |site, _| site == "other" }.max_by(3) { |_, w| w }.map { |site, w| [site, w.fdiv(total)] }
    end

    def self.fetch(name)
      ALL.fetch(name) { raise ArgumentError, "unknown profiler #{name.inspect}" }
    end
  end
end
