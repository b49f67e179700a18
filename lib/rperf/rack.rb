# frozen_string_literal: true

# The require path of the README (and of rperf 0.11.1): the integration lives in integrations/.
require_relative "integrations/rack"
