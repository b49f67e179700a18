# frozen_string_literal: true

# The require path of a Rails app (lib/rperf.rb loads it when Rails is loaded first, as
# Bundler.require does): the integration lives in integrations/.
require_relative "integrations/railtie"
