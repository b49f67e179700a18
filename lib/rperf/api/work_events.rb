# frozen_string_literal: true

module Rperf
  # Counts and durations of a program's own instrumented events (ActiveSupport::Notifications:
  # SQL queries, template renders, controller actions, jobs) per unit of work (a request, a job:
  # WorkScope), summed per the unit's labels over the session's interval. The profile of each
  # interval carries them as `work_events` (Session), a key rperf 0.11.1 readers keep as given:
  #
  #   [{labels: {endpoint: "PostsController#index"}, units: 3,
  #     events: {"sql.active_record" => {count: 78, duration_ns: 4_100_000, max_per_unit: 26}, ...}}, ...]
  #
  # so an N+1 is a number: count / units queries per request, max_per_unit in the worst one.
  # An event is a few Hash operations on its own thread's tally; units fold into the table when
  # they end, under a lock. The table has at most the session's max_label_sets rows, as the
  # sampler's label sets: the labels past it fold into one row whose values are "(other)".
  module WorkEvents
    TALLY = :__rperf_work_events
    OTHER = "(other)"

    @lock = Mutex.new
    @rows = {}

    class << self
      # Whether events are recorded (Notifications subscribed them): units keep a tally only then.
      attr_accessor :recording

      # Runs a unit of work labelled `labels`, its events counted apart; a unit inside another
      # (a job performed inline by a request) keeps its own events.
      def unit(labels)
        return yield unless @recording

        outer = Thread.current[TALLY]
        tally = Thread.current[TALLY] = {}
        begin
          yield
        ensure
          Thread.current[TALLY] = outer
          add(labels, tally)
        end
      end

      # One event of the current unit (none outside a unit: nothing to charge it to).
      def record(name, duration_ns)
        tally = Thread.current[TALLY] or return
        counts = tally[name] ||= [0, 0]
        counts[0] += 1
        counts[1] += duration_ns
      end

      # The table so far (nil when empty), emptied with clear: true (an interval's end).
      def take(clear:)
        rows = @lock.synchronize do
          current = @rows
          @rows = {} if clear
          current
        end
        return nil if rows.empty?

        rows.map do |labels, row|
          { labels: labels, units: row[:units],
            events: row[:events].transform_values { |count, ns, max| { count: count, duration_ns: ns, max_per_unit: max } } }
        end
      end

      private

      def add(labels, tally)
        limit = Native.session&.settings&.max_label_sets || Settings::DEFAULTS[:max_label_sets]
        # As the page spells labels: any value a label proc returned can be stored.
        labels = labels.to_h { |k, v| [k.to_s, v.to_s] }
        @lock.synchronize do
          row = @rows[labels] || (@rows.size < limit ? (@rows[labels] = new_row) : (@rows[labels.transform_values { OTHER }] ||= new_row))
          row[:units] += 1
          tally.each do |name, (count, ns)|
            sums = row[:events][name] ||= [0, 0, 0]
            sums[0] += count
            sums[1] += ns
            sums[2] = count if count > sums[2]
          end
        end
      end

      def new_row = { units: 0, events: {} }
    end
  end
end
