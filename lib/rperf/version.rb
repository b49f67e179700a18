# frozen_string_literal: true

module Rperf
  VERSION = "0.12.0"
end
