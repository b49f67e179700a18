# frozen_string_literal: true

module Rperf
  # Post-processing of the native result Hash into the public shape.
  module Result
    VM_STATE_FRAMES = {
      1 => ["<VM>", "[GVL blocked]"].freeze,
      2 => ["<VM>", "[GVL wait]"].freeze,
      3 => ["<VM>", "[GC marking]"].freeze,
      4 => ["<VM>", "[GC sweeping]"].freeze,
    }.freeze

    module_function

    # The native layer reports each sample's VM state (GVL blocked/wait, GC mark/sweep) as a
    # 5th element. Fold it into label sets ("%GVL" => "blocked", ...) as rperf 0.10 does, or,
    # with vm_state_frames, into a synthetic leaf frame for viewers that ignore labels.
    def merge_vm_states!(data, label_sets, vm_state_frames: false)
      table = label_sets.dup
      index = {}
      table.each_with_index { |h, i| index[h] ||= i }
      combined = {}
      convert = lambda do |frames, label_set_id, vm_state|
        return [frames, label_set_id] if vm_state.nil? || vm_state.zero?
        return [[VM_STATE_FRAMES.fetch(vm_state), *frames], label_set_id] if vm_state_frames

        combined[[label_set_id, vm_state]] ||= begin
          key, value = VM_STATE_LABELS.fetch(vm_state)
          merged = (table[label_set_id] || {}).merge(key => value).freeze
          index[merged] ||= (table << merged).size - 1
        end
        [frames, combined[[label_set_id, vm_state]]]
      end

      if (raw = data[:raw_samples])
        data[:raw_samples] = raw.map do |frames, weight, seq, lsi, vm_state, time_ns|
          frames, lsi = convert.call(frames, lsi, vm_state)
          [frames, weight, seq, lsi, time_ns]
        end
        data[:aggregated_samples] = aggregate(data[:raw_samples])
      else
        merged = Hash.new(0)
        data[:aggregated_samples].each do |frames, weight, seq, lsi, vm_state|
          frames, lsi = convert.call(frames, lsi, vm_state)
          merged[[frames, seq, lsi]] += weight
        end
        data[:aggregated_samples] = merged.map { |(frames, seq, lsi), weight| [frames, weight, seq, lsi] }
      end
      data[:label_sets] = table
      data
    end

    # Method-level view of a profile taken with lines: frames [path, label, line] -> [path, label].
    def without_lines(data)
      frames = {}
      strip = ->(stack) { stack.map { |f| frames[f] ||= [f[0], f[1]].freeze } }
      out = data.dup
      merged = Hash.new(0)
      data[:aggregated_samples].each { |stack, w, seq, lsi| merged[[strip.(stack), seq, lsi]] += w }
      out[:aggregated_samples] = merged.map { |(stack, seq, lsi), w| [stack, w, seq, lsi] }
      out[:raw_samples] = data[:raw_samples].map { |stack, *rest| [strip.(stack), *rest] } if data[:raw_samples]
      out[:unique_frames] = frames.size
      out
    end

    def aggregate(raw_samples)
      merged = Hash.new(0)
      raw_samples.each { |frames, weight, seq, lsi| merged[[frames, seq, lsi]] += weight }
      merged.map { |(frames, seq, lsi), weight| [frames, weight, seq, lsi] }
    end

    def gc_delta(base, now)
      return nil unless base

      {
        count: now[:count] - base[:count],
        minor_count: now[:minor_gc_count] - base[:minor_gc_count],
        major_count: now[:major_gc_count] - base[:major_gc_count],
        time_ms: (now[:time] || 0) - (base[:time] || 0),
        allocated_objects: now[:total_allocated_objects] - base[:total_allocated_objects],
        freed_objects: now[:total_freed_objects] - base[:total_freed_objects],
      }
    end

    def maxrss_mb
      File.foreach("/proc/self/status") do |line|
        return (line.split[1].to_i / 1024.0).round if line.start_with?("VmHWM:")
      end
      nil
    rescue SystemCallError
      nil
    end

    def total_weight(data)
      data[:aggregated_samples].sum { |s| s[1] }
    end

    # Leaf weight per frame (cheap: no walk of the whole stacks).
    def flat_by_frame(data)
      flat = Hash.new(0)
      data[:aggregated_samples].each { |frames, weight| flat[frames.first] += weight if frames.first }
      flat
    end

    # Flat (leaf) and cumulative weight per [label, path]. Cumulative counts a function once per
    # sample even when it appears several times in the stack (recursion).
    def flat_and_cumulative(data)
      flat = Hash.new(0)
      cum = Hash.new(0)
      data[:aggregated_samples].each do |frames, weight|
        next if frames.empty?

        leaf = frames.first
        flat[[leaf[1], leaf[0]]] += weight
        frames.map { |f| [f[1], f[0]] }.uniq.each { |key| cum[key] += weight }
      end
      { flat: flat, cum: cum, total_weight: total_weight(data) }
    end
  end
end
