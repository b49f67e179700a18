# frozen_string_literal: true

module Rperf
  class Viewer
    # How light a part of a view the payload still sends (CallTreePayload's calls,
    # MethodTablePayload's methods and arcs): min_percent of the total, doubled while what is
    # above it does not fit the payload's cap.
    module Threshold
      module_function

      # Yields (min_ns, truncate) until the block returns what fits (not nil); when the
      # threshold cannot rise any more (a total of 0: everything weighs 0) it yields truncate:
      # true once, for the first entries up to the cap. Returns [that result, min_percent].
      def fit(total, min_percent)
        loop do
          min_ns = (total * min_percent / 100.0).ceil
          fitted = yield(min_ns, false)
          return [fitted, min_percent] if fitted
          return [yield(min_ns, true), min_percent] if (total * min_percent * 2 / 100.0).ceil <= min_ns

          min_percent *= 2
        end
      end
    end
  end
end
