# frozen_string_literal: true

# The require path the README gives: the integration lives in integrations/.
require_relative "integrations/mini_profiler"
