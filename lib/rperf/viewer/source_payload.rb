# frozen_string_literal: true

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
        found = SampleFilter.new(data, label: label, thread: thread, range: range, hide: hide, tags: tags, idle: idle).source_lines(path)
        raise Refused, "#{path.inspect} is not a file of this profile" unless found[:frame_path]
        raise Refused, "#{path} is not an absolute path" unless path.start_with?("/")

        { path: Payload.utf8(path), lines: Payload.utf8(read(path)).lines(chomp: true), weights: found[:lines],
          lines_recorded: found[:lines_recorded], total_ns: found[:total_ns] }
      end

      def self.read(path)
        stat = File.stat(path)
        raise Refused, "#{path} is not a regular file" unless stat.file?
        raise Refused, "#{path} is over #{MAX_BYTES} bytes" if stat.size > MAX_BYTES

        File.binread(path, MAX_BYTES)
      rescue SystemCallError => e
        raise Refused, "cannot read #{path}: #{e.message}"
      end

      private_class_method :read
    end
  end
end
