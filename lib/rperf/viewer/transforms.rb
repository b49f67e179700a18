# frozen_string_literal: true

require "json"
require_relative "payload"
require_relative "sample_filter"

module Rperf
  class Viewer
    # Transforms of the profile's stacks, the page's "focus / merge / drop a function" and
    # "collapse recursion", applied here once to the profile every view is built from (the
    # snapshot's payload, its timeline, the server's trees, tables, sandwich, stack chart and
    # source), in the order given:
    #
    #   ["focus", name, path]  only the samples with the function, each stack cut at its
    #                          outermost call: the function is the root
    #   ["merge", name, path]  the function's frames removed: its time goes to its callers
    #   ["drop", name, path]   the samples with the function removed
    #   ["recursion"]          a function calling itself directly is one frame
    #   ["app"]                app code first: each run of gem and stdlib frames is one
    #                          [framework] frame (profile/transform.hh, kAppFirst)
    #
    # Frames are compared at method level (name and path, as Payload's): a frame with a line
    # matches whatever its line.
    module Transforms
      OPS = %w[focus merge drop].freeze
      SINGLE = [["recursion"], ["app"]].freeze
      MAX = 32

      # ?transforms=[[op, name, path], ["recursion"], ["app"], ...] (JSON) -> the list, or nil for none.
      def self.parse(text)
        return nil if text.nil? || text.empty?

        list = JSON.parse(text)
        valid = list.is_a?(Array) && list.size <= MAX && list.all? do |t|
          t.is_a?(Array) && ((t.size == 3 && OPS.include?(t[0]) && t[1].is_a?(String) && t[2].is_a?(String)) || SINGLE.include?(t))
        end
        raise SampleFilter::BadFilter, "transforms must be a JSON list (at most #{MAX}) of [focus|merge|drop, name, path], [\"recursion\"] or [\"app\"]" unless valid

        list.empty? ? nil : list
      rescue JSON::ParserError => e
        raise SampleFilter::BadFilter, "transforms is not JSON: #{e.message.lines.first.to_s.strip[0, 100]}"
      end

      # The profile with its time and allocation samples' stacks transformed, as its Hash view:
      # the model does it (Native::Profile#transformed, profile/transform.hh).
      def self.apply(data, list)
        return data if list.nil? || list.empty?

        Storage.native(data).transformed(list).to_h # a profile's own view is its native profile
      rescue TypeError, Rperf::Error => e
        raise SampleFilter::Unavailable, "cannot transform this profile: #{e.message}"
      end
    end
  end
end
