# frozen_string_literal: true

require_relative "payload"
require_relative "sample_filter"

module Rperf
  class Viewer
    # The stack chart of one thread (the page's Stack chart tab), merged here so the page only
    # draws it (issue 27: merging 125,000 rows in the page took seconds). From the profile's raw
    # samples (aggregate: false) in time order, each a column of its stack over
    # [time - weight, time]: a frame that stays at its depth across samples with no gap longer
    # than a sample is one cell. A sample's VM state (GVL blocked or wait, GC) is a leaf cell.
    #
    #   thread:, total_ns:, samples: (rows merged), end_ns: (the last sample's time of any
    #   thread, or the duration: every thread on the same axis)
    #   frames: [[name, path, category], ...]   the cells' frames (method level, Payload.category)
    #   cells, in the order they open, one entry per cell in each column:
    #     dx:  the cell's start minus the previous cell's (the first: minus 0)
    #     w:   its width (ns), from its first sample's start to its last's end
    #     d:   its depth (0: the root frame); its parent is the last cell before it one above
    #     f:   its frame, or -1 - VM state (1 GVL blocked, 2 GVL wait, 3 GC: VM_STATES)
    #     gap: w minus its samples' weight (time it stayed open across short gaps)
    class StackChartPayload
      VM_STATES = %w[running blocked wait gc].freeze

      # The cells of one thread (the label filter applies; time ranges and hidden threads are
      # the page's zoom and thread list).
      def self.build(data, thread: nil, label: nil, tags: nil, **_filters)
        raise SampleFilter::BadFilter, "the stack chart needs thread=" if thread.nil?

        unless data[:raw_samples].is_a?(Array)
          raise SampleFilter::Unavailable, "the stack chart needs raw samples (a profile recorded with aggregate: false)"
        end

        rows = SampleFilter.new(data, label: label, thread: thread, tags: tags).raw_samples
        new(data).build(thread, rows)
      end

      # {thread_seq => cells} of every thread, no filter (a file's page holds these).
      def self.threads(data)
        raw = data[:raw_samples]
        return {} unless raw.is_a?(Array)

        chart = new(data)
        raw.group_by { |s| s[2] }.sort_by(&:first).to_h { |seq, rows| [seq, chart.build(seq, rows)] }
      end

      # A label set's VM state: an index into VM_STATES, as the page's STATES.
      def self.vm_state(set)
        return 0 unless set.is_a?(Hash)

        labels = set.to_h { |k, v| [k.to_s, v.to_s] }
        if labels.key?("%GVL")
          return 1 if labels["%GVL"] == "blocked"
          return 2 if labels["%GVL"] == "wait"
        end
        labels.key?("%GC") ? 3 : 0
      end

      # A recorded raw sample's own VM state (its 5th of 6 elements: 1 GVL blocked, 2 GVL wait, 3/4
      # GC mark/sweep; its label set is the user's) as an index into VM_STATES; nil when running
      # or not recorded (a Hash built by hand says it with its label set).
      def self.recorded_state(sample)
        return nil unless sample.size > 5

        state = sample[4].to_i
        state.positive? ? [state, 3].min : nil
      end

      def initialize(data)
        @states = (data[:label_sets] || [{}]).map { |set| StackChartPayload.vm_state(set) }
        raw = data[:raw_samples] || []
        @end_ns = raw.reduce([data[:duration_ns].to_i, 1].max) { |m, s| (t = s.last.to_i) > m ? t : m }
      end

      def build(thread, rows)
        frames = []
        frame_index = {}
        path_of = {}.compare_by_identity # a raw stack Array (shared by its samples) => frame ids, root first
        dx = []
        ws = []   # a cell's start while it is open, its width once closed
        ds = []
        fs = []
        gaps = []
        open_cell = []  # per depth: the open cell's index
        open_frame = [] # per depth: its frame id
        open_acc = []   # per depth: the weight summed when it opened
        acc = 0
        last_end = -Float::INFINITY
        last_x = 0
        prev_stack = nil
        prev_state = -1
        count = 0
        states = @states
        rows.sort_by(&:last).each do |sample|
          stack = sample[0]
          weight = sample[1]
          next unless weight.positive?

          state = StackChartPayload.recorded_state(sample) || states[sample[3].to_i] || 0
          time = sample.last.to_i
          from = time - weight
          continues = from - last_end <= weight
          count += 1
          if continues && state == prev_state && stack.equal?(prev_stack)
            acc += weight
            last_end = time
            next
          end
          path = path_of[stack] ||= frame_ids(stack, frames, frame_index)
          path += [-1 - state] if state.positive?
          d = 0
          open = open_frame.size
          if continues
            size = path.size
            d += 1 while d < size && d < open && open_frame[d] == path[d]
          end
          if d < open # the cells from depth d on close where the last sample ended
            (open - 1).downto(d) do |k|
              i = open_cell[k]
              w = last_end - ws[i]
              ws[i] = w
              gaps[i] = w - (acc - open_acc[k])
            end
            open_cell.pop(open - d)
            open_frame.pop(open - d)
            open_acc.pop(open - d)
          end
          opened_at = acc
          acc += weight
          while d < path.size
            open_cell << dx.size
            open_frame << path[d]
            open_acc << opened_at
            dx << from - last_x
            last_x = from
            ws << from
            ds << d
            fs << path[d]
            gaps << 0
            d += 1
          end
          last_end = time
          prev_stack = stack
          prev_state = state
        end
        (open_cell.size - 1).downto(0) do |k|
          i = open_cell[k]
          w = last_end - ws[i]
          ws[i] = w
          gaps[i] = w - (acc - open_acc[k])
        end
        { thread: thread, total_ns: acc, samples: count, end_ns: @end_ns, frames: frames,
          dx: dx, w: ws, d: ds, f: fs, gap: gaps }
      end

      private

      # Frames come leaf first; a stack without frames is Payload's "(no Ruby frames)".
      def frame_ids(stack, frames, frame_index)
        list = stack.empty? ? [[Payload::NO_FRAMES[1], Payload::NO_FRAMES[0]]] : stack.reverse
        list.map do |frame|
          name = Payload.utf8(frame[1])
          path = Payload.utf8(frame[0])
          frame_index[[name, path]] ||= (frames << [name, path, Payload.category(name, path)]).size - 1
        end
      end
    end
  end
end
