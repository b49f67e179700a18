# frozen_string_literal: true

module Rperf
  # Base class of every error rperf raises for bad input (files, formats).
  class Error < StandardError; end

  # An error about a particular file; the message starts with its path.
  class FileError < Error
    attr_reader :path

    def initialize(message, path: nil)
      @path = path
      super(path ? "#{path}: #{message}" : message)
    end
  end

  # A profile file that cannot be read: missing, truncated, corrupt or not a profile.
  class FormatError < FileError; end

  # A profile that cannot be written (unwritable path, full disk).
  class WriteError < FileError; end

  # An unknown or unsupported output format.
  class UnknownFormatError < Error; end
end
