# frozen_string_literal: true

module Rperf
  # Base class of every error rperf raises for bad input (files, formats); a write that fails
  # raises the Errno, marked Rperf::WriteError.
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

  # A profile that cannot be written (unwritable path, full disk): rperf 0.11 raised the Errno
  # of the failing call (Errno::ENOENT, Errno::EACCES, Errno::ENOSPC), and so do we, marked with
  # this module: `rescue SystemCallError`, `rescue Errno::EACCES` and `rescue Rperf::WriteError`
  # all catch it, and `path` names the file. Its message is the Errno's, naming the path
  # (`No such file or directory - /missing/p.json.gz`).
  module WriteError
    attr_reader :path

    # The error, marked (the same object: its class, errno and backtrace stay).
    def self.mark(error, path)
      return error if error.is_a?(WriteError)

      error.extend(WriteError)
      error.instance_variable_set(:@path, path)
      error
    end
  end

  # An unknown or unsupported output format.
  class UnknownFormatError < Error; end
end
