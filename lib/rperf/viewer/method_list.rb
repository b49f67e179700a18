# frozen_string_literal: true

require_relative "payload"

module Rperf
  class Viewer
    # The methods a payload names, each sent once as [name, path, line] (valid UTF-8); its
    # nodes or entries refer to them by index.
    class MethodList
      def initialize
        @rows = []
        @index = {}
      end

      # The index of a MethodRef, added when new.
      def index(ref)
        @index[ref] ||= (@rows << [Payload.utf8(ref.name), Payload.utf8(ref.path), ref.line]).size - 1
      end

      def to_a = @rows
    end
  end
end
