# frozen_string_literal: true

require "set"
require_relative "payload"
require_relative "sample_filter"

module Rperf
  class Viewer
    # The page's Source tab: one file of the profile with the time of each line, from the
    # samples the filters keep (recorded with lines: true, frames [path, label, line]):
    #
    #   path:, lines: [text, ...] (the file's, as UTF-8)
    #   weights: [[line, self_ns, total_ns], ...] by line: self, the samples running that line;
    #            total, those with the line anywhere on their stack (once per sample)
    #   lines_recorded: whether the profile's frames have lines at all
    #   total_ns: the samples' total
    #
    # Only a file that is a frame path of this very profile is read (the exact path, absolute,
    # a regular file of at most MAX_BYTES): no other file can be asked for, however the path
    # is spelled (issue 27). The Viewer serves it on loopback only, as every other view.
    class SourcePayload
      MAX_BYTES = 4 * 1024 * 1024

      # The file cannot be shown: not one of the profile's, not readable, too big.
      class Refused < SampleFilter::BadFilter; end

      def self.build(data, source:, label: nil, thread: nil, range: nil, hide: nil, tags: nil, idle: false, **_limits)
        path = source.to_s
        raise Refused, "#{path.inspect} is not a file of this profile" unless frame_paths(data).include?(path)
        raise Refused, "#{path} is not an absolute path" unless path.start_with?("/")

        text = read(path)
        samples = SampleFilter.new(data, label: label, thread: thread, range: range, hide: hide, tags: tags, idle: idle).data[:aggregated_samples]
        weights, recorded = line_weights(samples, path)
        { path: Payload.utf8(path), lines: Payload.utf8(text).lines(chomp: true), weights: weights,
          lines_recorded: recorded, total_ns: samples.sum { |s| s[1] } }
      end

      def self.frame_paths(data)
        paths = Set.new
        [data[:aggregated_samples], data[:raw_samples]].each do |rows|
          next unless rows.is_a?(Array)

          seen = {}.compare_by_identity # stacks are shared between samples
          rows.each do |stack, *|
            next if !stack.is_a?(Array) || seen[stack]

            seen[stack] = true
            stack.each { |frame| paths << frame[0] if frame.is_a?(Array) && frame[0].is_a?(String) }
          end
        end
        paths
      end

      def self.read(path)
        stat = File.stat(path)
        raise Refused, "#{path} is not a regular file" unless stat.file?
        raise Refused, "#{path} is over #{MAX_BYTES} bytes" if stat.size > MAX_BYTES

        File.binread(path, MAX_BYTES)
      rescue SystemCallError => e
        raise Refused, "cannot read #{path}: #{e.message}"
      end

      # [[line, self, total], ...], and whether any frame had a line.
      def self.line_weights(samples, path)
        self_ns = Hash.new(0)
        total_ns = Hash.new(0)
        recorded = false
        samples.each do |stack, weight|
          seen = nil
          stack.each_with_index do |frame, i|
            line = frame[2]
            next unless line.is_a?(Integer)

            recorded = true
            next unless frame[0] == path

            self_ns[line] += weight if i.zero?
            (seen ||= Set.new).add?(line) && total_ns[line] += weight
          end
        end
        [total_ns.keys.sort.map { |line| [line, self_ns[line], total_ns[line]] }, recorded]
      end
      private_class_method :read, :line_weights
    end
  end
end
