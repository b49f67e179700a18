# frozen_string_literal: true

require_relative "call_tree_payload"
require_relative "sample_filter"

module Rperf
  class Viewer
    # The sandwich of one method (the page's Sandwich tab): the samples the filters keep that
    # have the method on their stack, as two Rperf::CallTree (native, CallTreePayload's shape):
    #
    #   callers: rooted at the method, each child a caller of the one above it, up to the
    #            stack's root: who called it, and how much of its time each path holds
    #   callees: rooted at the method, its calls below it, as in the call tree
    #   total_ns: the method's time (its samples, each once: recursion counts once)
    #   each tree also has categories: [category, ...] per method (Native.frame_categories)
    #
    # The model cuts each sample at the method's outermost call (Native::Profile#transformed:
    # "focus" below it, "callers" above it, read bottom-up), so a recursive method counts once,
    # as MethodTable's total. The callers tree has no VM-state leaves (their time is the method's).
    # The idle samples go before the cut (its "idle" transform): they are idle by their whole stack.
    class SandwichPayload
      def self.build(data, method:, label: nil, thread: nil, range: nil, hide: nil, tags: nil, idle: false, **limits)
        filters = { label: label, thread: thread, range: range, hide: hide, tags: tags }
        name, path = method
        profile = native(data)
        first = idle ? [["idle"]] : []
        callees = SampleFilter.new(profile.transformed([*first, ["focus", name, path]]), **filters).call_tree
        callers = SampleFilter.new(profile.transformed([*first, ["callers", name, path]]), **filters).call_tree(inverted: true)
        { method: [name, path], total_ns: callees.total_ns,
          callers: with_categories(CallTreePayload.of(callers, **limits)),
          callees: with_categories(CallTreePayload.of(callees, **limits)) }
      end

      def self.native(data)
        Storage.native(data) # a profile's own view is its native profile
      rescue TypeError, Rperf::Error => e
        raise SampleFilter::Unavailable, "cannot build the sandwich: #{e.message}"
      end

      # Each method's category (Native.frame_categories), for the page's colours.
      def self.with_categories(tree)
        tree.merge(categories: Native.frame_categories(tree[:methods]))
      end
      private_class_method :native, :with_categories
    end
  end
end
