# frozen_string_literal: true

module Rperf
  VERSION = "0.10.0"
end
