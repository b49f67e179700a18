# frozen_string_literal: true

require "json"
require "set"
require "uri"
require_relative "payload"

module Rperf
  class Viewer
    # The samples the page's filters keep, for the server's views (source, timeline bins). Filters (each optional): label: [key, value] (value nil:
    # samples without that key) or [key, [value, ...]] (a set: any of them; nil in it: without
    # the key too), thread: a thread_seq, hide: thread_seqs left out, idle: true (the samples the
    # model says are idle left out: profile/idle_wait.hh, the page's "hide idle threads"), range:
    # [t0_ns, t1_ns] (from raw samples, clipped as the timeline's).
    class SampleFilter
      # The filters cannot apply to this profile, or the query names none the page can send.
      class BadFilter < ArgumentError; end
      # The profile cannot be made a call tree (a hand-built Hash Native::Profile refuses).
      class Unavailable < StandardError; end

      # ?label=K&value=V (&value=W...: any of a set of values, as an endpoint set; &unset=1: K not
      # set, or with values: not set or any of them), &thread=N, &hide=N,M,..., &idle=hide,
      # &from=T0&to=T1 (ns), &tagfocus=REGEX, &tagignore=[[K, V or null], ...] (JSON) -> keywords
      # (label: [K, [V, ...]] with nil for "not set", values sorted; tags: {focus:, ignore:},
      # rperf 0.11.1's tag filters); &path=PATH:
      # the source view's file.
      def self.parse_query(query)
        pairs = URI.decode_www_form(query.to_s)
        params = pairs.to_h
        filters = {}
        filters[:label] = [params["label"], label_values(pairs, params)] if params["label"]
        filters[:thread] = integer(params, "thread") if params.key?("thread")
        filters[:source] = params["path"] if params["path"]
        filters[:hide] = params["hide"].split(",").map { |n| integer({ "hide" => n }, "hide") }.sort.uniq if params.key?("hide")
        if params.key?("idle")
          raise BadFilter, "idle must be hide, got #{params['idle'].inspect}" unless params["idle"] == "hide"

          filters[:idle] = true
        end
        tags = tag_filters(params)
        filters[:tags] = tags if tags
        if params.key?("from") || params.key?("to")
          range = [integer(params, "from"), integer(params, "to")]
          raise BadFilter, "the time range's from (#{range[0]}) is after its to (#{range[1]})" if range[0] > range[1]

          filters[:range] = range
        end
        filters
      rescue BadFilter
        raise
      rescue ArgumentError => e # URI's, for a malformed query
        raise BadFilter, "cannot read the query #{query.inspect}: #{e.message}"
      end

      # The label filter's values: each value= given (none: ""), and nil for unset=1; one order,
      # so equal sets are one cache key.
      def self.label_values(pairs, params)
        values = pairs.filter_map { |k, v| v if k == "value" }
        values = [""] if values.empty? && params["unset"] != "1"
        values << nil if params["unset"] == "1"
        values.uniq.sort_by { |v| v.nil? ? [1, ""] : [0, v] }
      end
      private_class_method :label_values

      # tagfocus: a label value matches the regex (a second at most: it is the user's); tagignore:
      # none of the pairs is the sample's (a nil value: the key is not set).
      def self.tag_filters(params)
        focus = params["tagfocus"].to_s
        ignore = params["tagignore"].to_s
        return nil if focus.empty? && ignore.empty?

        regex = begin
          focus.empty? ? nil : Regexp.new(focus, timeout: 1.0)
        rescue RegexpError => e
          raise BadFilter, "tagfocus is not a regular expression: #{e.message}"
        end
        pairs = ignore.empty? ? [] : JSON.parse(ignore)
        unless pairs.is_a?(Array) && pairs.all? { |p| p.is_a?(Array) && p.size == 2 && p[0].is_a?(String) && (p[1].nil? || p[1].is_a?(String)) }
          raise BadFilter, "tagignore must be a JSON list of [key, value or null], got #{ignore[0, 100].inspect}"
        end
        { focus: regex, ignore: pairs }
      rescue JSON::ParserError => e
        raise BadFilter, "tagignore is not JSON: #{e.message.lines.first.to_s.strip[0, 100]}"
      end
      private_class_method :tag_filters

      def self.integer(params, key)
        raise BadFilter, "#{key} is missing (from and to come together)" unless params.key?(key)

        begin
          Integer(params[key], 10)
        rescue ArgumentError, TypeError
          raise BadFilter, "#{key} must be an integer, got #{params[key].inspect}"
        end
      end
      private_class_method :integer

      def initialize(data, label: nil, thread: nil, range: nil, hide: nil, tags: nil, idle: false)
        if range && !(data.is_a?(Native::Profile) ? data.raw? : data[:raw_samples].is_a?(Array))
          raise BadFilter, "a time range (from/to) needs the profile's raw samples, and this profile has none " \
                           "(it was recorded with aggregate: true)"
        end

        @data = data
        @label = label && [label[0], label[1].is_a?(Array) ? label[1] : [label[1]]]
        @thread = thread
        @range = range
        @hide = hide.nil? || hide.empty? ? nil : hide.to_set
        @tags = tags
        @idle = idle ? true : false
      end

      # The Timeline's bins of the kept samples (TimelinePayload), from the model, over the whole
      # profile's time (at least its duration).
      def timeline_bins(bins)
        profile = native_profile
        raise Unavailable, "the timeline needs raw samples (a profile recorded with aggregate: false)" unless profile.raw?

        duration = @data.is_a?(Native::Profile) ? profile.attribute(:duration_ns) : @data[:duration_ns]
        profile.timeline_bins(bins, duration.is_a?(Integer) ? duration : 0, native_select(profile))
      end

      # The profile of the samples the filters keep, each with its kept weight (its part of a
      # range), as a Hash: the model selects them (Native::Profile#selected); the profile itself
      # when no filter is set.
      def data
        return @data unless filtered?

        profile = native_profile
        profile.selected(native_select(profile)).to_h
      end

      # The Source tab's time per line of `path` in the kept samples, from the model
      # (profile/source_lines.hh): {frame_path:, lines: [[line, self_ns, total_ns], ...],
      # lines_recorded:, total_ns:}.
      def source_lines(path)
        profile = native_profile
        profile.source_lines(path, native_select(profile))
      end

      private

      def filtered? = @label || @thread || @range || @hide || @tags || @idle

      # The filters as the model's SampleFilter reads them (Native::CallTree's select:).
      def native_select(profile)
        select = {}
        select[:thread] = @thread if @thread
        select[:hide] = @hide.to_a if @hide
        select[:range] = @range if @range
        select[:idle] = true if @idle
        select[:label_sets] = matching_label_sets(profile.label_sets.map { |set| Payload.string_labels(set) }) if @label || @tags
        select
      end

      # The ids of the label sets the label and tag filters keep, by the model's rule
      # (profile/label_set_match.hh, the page's too); only the tagfocus Regexp is Ruby's.
      def matching_label_sets(sets)
        Native.matching_label_sets(sets, label: @label, focus_values: tag_focus_values(sets), ignore: @tags && @tags[:ignore])
      end

      # The label values the tagfocus Regexp matches, each tried once (nil: no tagfocus).
      def tag_focus_values(sets)
        return nil unless @tags && @tags[:focus]

        Native.label_values(sets).select { |value| @tags[:focus].match?(value) }
      rescue Regexp::TimeoutError
        raise BadFilter, "tagfocus took too long to match (over a second)"
      end

      def native_profile
        Storage.native(@data)
      rescue TypeError, Rperf::Error => e
        raise Unavailable, "cannot build the call tree: #{e.message}"
      end
    end
  end
end
