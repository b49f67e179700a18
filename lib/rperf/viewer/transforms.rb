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
    #
    # Frames are compared at method level (name and path, as Payload's): a frame with a line
    # matches whatever its line.
    module Transforms
      OPS = %w[focus merge drop].freeze
      MAX = 32

      # ?transforms=[[op, name, path], ["recursion"], ...] (JSON) -> the list, or nil for none.
      def self.parse(text)
        return nil if text.nil? || text.empty?

        list = JSON.parse(text)
        valid = list.is_a?(Array) && list.size <= MAX && list.all? do |t|
          t.is_a?(Array) && ((t.size == 3 && OPS.include?(t[0]) && t[1].is_a?(String) && t[2].is_a?(String)) || t == ["recursion"])
        end
        raise SampleFilter::BadFilter, "transforms must be a JSON list (at most #{MAX}) of [focus|merge|drop, name, path] or [\"recursion\"]" unless valid

        list.empty? ? nil : list
      rescue JSON::ParserError => e
        raise SampleFilter::BadFilter, "transforms is not JSON: #{e.message.lines.first.to_s.strip[0, 100]}"
      end

      # The profile with its time and allocation samples' stacks transformed (a new Hash).
      def self.apply(data, list)
        return data if list.nil? || list.empty?

        stack_of = {}.compare_by_identity # the samples of a stack share its Array: each is done once
        transform = lambda do |stack|
          stack_of.fetch(stack) { stack_of[stack] = list.reduce(stack) { |s, t| s && step(s, t) } }
        end
        rows = ->(samples) { samples&.filter_map { |s| (st = transform.(s[0])) && [st, *s.drop(1)] } }
        out = data.merge(aggregated_samples: rows.(data[:aggregated_samples]) || [])
        %i[raw_samples allocation_samples raw_allocation_samples].each do |key|
          out[key] = rows.(data[key]) if data[key].is_a?(Array)
        end
        out
      end

      # One transform of a leaf-first stack; nil: the sample goes.
      def self.step(stack, transform)
        op, name, path = transform
        match = ->(frame) { Payload.utf8(frame[1]) == name && Payload.utf8(frame[0]) == path }
        case op
        when "focus"
          at = stack.rindex(&match) # the outermost call
          at && stack[0..at]
        when "merge" then stack.reject(&match)
        when "drop" then stack.any?(&match) ? nil : stack
        when "recursion"
          stack.each_with_index.reject { |frame, i| i.positive? && same?(frame, stack[i - 1]) }.map(&:first)
        end
      end

      def self.same?(a, b) = a[0] == b[0] && a[1] == b[1]
      private_class_method :step, :same?
    end
  end
end
