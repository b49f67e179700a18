# frozen_string_literal: true

require "rails/railtie"
require_relative "rack"
require_relative "notifications"
require_relative "../viewer"

module Rperf
  # `gem "rperf"` in a Rails app's Gemfile: in development, every request is profiled (a
  # deferred session: sampling only while requests run) and labelled with its controller and
  # action (`endpoint: "PostsController#index"`), Rails' events are counted per request
  # (Notifications: SQL queries, renders), and the Viewer is served at /rperf to this machine
  # only (Viewer::Access). Off in other environments unless config.rperf.enabled = true.
  #
  #   # config/environments/development.rb (the defaults)
  #   config.rperf.enabled = true           # default: Rails.env.development?
  #   config.rperf.path = "/rperf"          # the Viewer's mount point; nil: no Viewer
  #   config.rperf.viewer = {}              # more Rperf::Viewer options (allow:, auth:, hosts:, ...)
  #   config.rperf.snapshot_every = 10      # seconds between the Viewer's snapshots; nil: none
  #   config.rperf.mode = :wall             # Rperf.start's
  #   config.rperf.frequency = 1000
  #   config.rperf.defer = true             # false: the whole process, not only requests
  #   config.rperf.label_key = :endpoint
  #   config.rperf.events = Rperf::Notifications::EVENTS  # [] or false: none
  #
  # A session already running (`rperf record bin/rails server`, RPERF_ENABLED) is kept as it is.
  class Railtie < ::Rails::Railtie
    DEFAULTS = { enabled: nil, path: "/rperf", viewer: {}, snapshot_every: 10, mode: :wall, frequency: 1000,
                 defer: true, label_key: :endpoint, events: Notifications::EVENTS }.freeze

    config.rperf = ActiveSupport::OrderedOptions.new.merge!(DEFAULTS)

    initializer "rperf.middleware" do |app|
      options = app.config.rperf
      next unless Railtie.enabled?(options)

      # Outermost: the whole request, the middlewares' time too, is labelled; the Viewer's own
      # requests are outside it.
      app.middleware.insert_before 0, RackMiddleware, label_key: options.label_key, label: Railtie.endpoint_label(app)
      if options.path
        app.middleware.insert_before 0, Viewer, path: options.path, auto_snapshot: options.snapshot_every, **options.viewer.to_h
      end
    end

    config.after_initialize do |app|
      options = app.config.rperf
      next unless Railtie.enabled?(options)

      Notifications.subscribe(Array(options.events)) if options.events && !Array(options.events).empty?
      Rperf.start(mode: options.mode, frequency: options.frequency, defer: options.defer) unless Rperf.running?
    end

    class << self
      def enabled?(options)
        options.enabled.nil? ? ::Rails.env.development? : options.enabled == true
      end

      # The Rack label of a request: the controller and action its route names (the router asked
      # before the request runs, on a copy of the env), else RackMiddleware's "GET /posts/:id"
      # (a mounted Rack app, a redirect, no route).
      def endpoint_label(app)
        lambda do |env|
          controller_action(app, env) || RackMiddleware.normalize(env["REQUEST_METHOD"], env["PATH_INFO"])
        end
      end

      def controller_action(app, env)
        request = ActionDispatch::Request.new(env.dup)
        params = app.routes.recognize_path_with_request(request, request.path_info, {}, raise_on_missing: false)
        return nil unless params && params[:controller] && params[:action]

        "#{params[:controller].camelize}Controller##{params[:action]}"
      rescue ActionController::RoutingError
        nil
      end
    end
  end
end
