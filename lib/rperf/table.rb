# frozen_string_literal: true

# rperf 0.11.1's require path: the file lives in formats/.
require_relative "formats/table"
