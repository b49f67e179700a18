# frozen_string_literal: true

require_relative "payload"

module Rperf
  class Viewer
    # The text of one file of the profile, for the page's Source tab (GET
    # <path>/snapshots/<id>/source?path=PATH): {path:, lines: [text, ...]} (as UTF-8). The time of
    # each line is the page's (the page model's source_lines over the payload's line tree).
    #
    # Only a file that is a frame path of this very profile is read (the exact path, absolute,
    # a regular file of at most MAX_BYTES): no other file can be asked for, however the path
    # is spelled (issue 27). The Viewer serves it on loopback only, as every other view.
    class SourcePayload
      MAX_BYTES = 4 * 1024 * 1024

      # The file cannot be shown: not one of the profile's, not readable, too big.
      class Refused < StandardError; end

      # query: the request's query string (path=PATH).
      def self.build(data, query)
        path = URI.decode_www_form(query.to_s).to_h["path"].to_s
        raise Refused, "the source needs path=" if path.empty?
        raise Refused, "#{path.inspect} is not a file of this profile" unless Storage.native(data).frame_path?(path)
        raise Refused, "#{path} is not an absolute path" unless path.start_with?("/")

        { path: Payload.utf8(path), lines: Payload.utf8(read(path)).lines(chomp: true) }
      rescue ArgumentError => e # URI's, for a malformed query
        raise Refused, "cannot read the query #{query.to_s[0, 100].inspect}: #{e.message}"
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
