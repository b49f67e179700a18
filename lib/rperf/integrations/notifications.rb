# frozen_string_literal: true

require_relative "work_scope"
require "active_support"
require "active_support/notifications"

module Rperf
  # Rails' own instrumentation (ActiveSupport::Notifications) counted per unit of work: each
  # event's count and duration go to the request or job that runs it (WorkEvents), and the
  # profile's `work_events` lists them per endpoint, so an N+1 is a number of queries per
  # request. The Railtie subscribes these; outside Rails:
  #
  #   Rperf::Notifications.subscribe                        # EVENTS
  #   Rperf::Notifications.subscribe(%w[sql.active_record]) # some of them
  module Notifications
    EVENTS = %w[sql.active_record render_template.action_view render_partial.action_view render_collection.action_view
                process_action.action_controller enqueue.active_job perform.active_job].freeze
    SQL = "sql.active_record"
    # ActiveRecord's own queries of the schema (column lists, loaded once per table) are not the app's.
    SCHEMA = "SCHEMA"

    @subscribers = {}

    class << self
      # Subscribes the events not subscribed yet; returns the names subscribed.
      def subscribe(events = EVENTS)
        events.each do |name|
          name = name.to_s.dup.freeze
          @subscribers[name] ||= ActiveSupport::Notifications.monotonic_subscribe(name) do |_, start, finish, _, payload|
            WorkEvents.record(name, ((finish - start) * 1e9).to_i) unless name == SQL && payload[:name] == SCHEMA
          end
        end
        WorkEvents.recording = true
        @subscribers.keys
      end

      def unsubscribe
        @subscribers.each_value { |s| ActiveSupport::Notifications.unsubscribe(s) }
        @subscribers.clear
        WorkEvents.recording = false
      end
    end
  end
end
