# frozen_string_literal: true

require_relative "work_scope"

module Rperf
  # Rack middleware: labels each request's samples with its endpoint and, under
  # Rperf.start(defer: true), profiles only while requests run.
  #
  #   use Rperf::RackMiddleware                                  # endpoint: "GET /users/:id"
  #   use Rperf::RackMiddleware, label_key: :route
  #   use Rperf::RackMiddleware, label: ->(env) { env["PATH_INFO"][%r{\A/[^/]*}] }
  #   use Rperf::RackMiddleware, label: :raw                     # "GET /users/123" (unbounded)
  #
  # Every distinct label value is kept for the whole session, so the default replaces numeric
  # ids and UUIDs in the path by :id and :uuid to keep their number small.
  class RackMiddleware
    UUID_SEGMENT = %r{/\h{8}-\h{4}-\h{4}-\h{4}-\h{12}(?=/|\z)}
    NUMERIC_SEGMENT = %r{/\d+(?=/|\z)}

    attr_reader :label_key

    def initialize(app, label_key: :endpoint, label: nil)
      unless label.nil? || label == :raw || label.respond_to?(:call)
        raise ArgumentError, "label: must be nil, :raw or a callable taking the Rack env, got #{label.inspect}"
      end

      @app = app
      @label_key = label_key
      @label = label
    end

    def call(env)
      return @app.call(env) unless Rperf.running?

      WorkScope.run(@label_key => endpoint(env)) { @app.call(env) }
    end

    # The label value for a request.
    def endpoint(env)
      case @label
      when nil then self.class.normalize(env["REQUEST_METHOD"], env["PATH_INFO"])
      when :raw then "#{env['REQUEST_METHOD']} #{env['PATH_INFO']}"
      else
        WorkScope.safe_label("the Rack label proc", -> { self.class.normalize(env["REQUEST_METHOD"], env["PATH_INFO"]) }) do
          @label.call(env)
        end
      end
    end

    def self.normalize(method, path)
      path = "/" if path.nil? || path.empty?
      "#{method} #{path.gsub(UUID_SEGMENT, '/:uuid').gsub(NUMERIC_SEGMENT, '/:id')}"
    end
  end
end
