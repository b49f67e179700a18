# frozen_string_literal: true

require "zlib"

module Rperf
  # Reads the pprof files rperf writes (profile.proto) back into the result-Hash shape, so
  # `rperf report` and `rperf diff` work on .pb.gz without Go.
  class PprofReader
    # The sample types rperf writes with allocation profiling, after the time type.
    ALLOCATION_TYPES = %w[alloc_objects inuse_objects].freeze
    # The pprof comment that names the allocation interval: written (Storage.pprof_comments)
    # and read (allocation_interval_in) only here.
    ALLOCATION_COMMENT = "allocations: one in "

    def self.read(bytes, path)
      new(bytes, path).profile
    end

    def self.allocation_comment(interval) = "#{ALLOCATION_COMMENT}#{interval}"

    # The interval a comment names, or nil when it is not that comment.
    def self.allocation_interval_in(comment)
      n = comment.delete_prefix(ALLOCATION_COMMENT) if comment.start_with?(ALLOCATION_COMMENT)
      n&.match?(/\A\d+\z/) ? Integer(n, 10) : nil
    end

    def initialize(bytes, path)
      @bytes = bytes.b
      @path = path
    end

    def profile
      strings = []
      samples = []
      locations = {}
      functions = {}
      sample_types = []
      comments = []
      period = nil
      meta = {}
      each_field(@bytes) do |field, value|
        case field
        when 1 then sample_types << value
        when 2 then samples << message(value)
        when 4 then loc = message(value); locations[loc[1]&.first] = loc
        when 5 then fn = message(value); functions[fn[1]&.first] = fn
        when 6 then strings << value.dup.force_encoding(Encoding::UTF_8)
        when 9 then meta[:start_time_ns] = value
        when 10 then meta[:duration_ns] = value
        when 12 then period = value
        when 13 then comments.concat(packed([value]))
        end
      end
      build(strings, samples, locations, functions, sample_types, period, meta, comments)
    rescue FormatError
      raise
    rescue StandardError => e
      bad("#{e.class}: #{e.message}")
    end

    private

    def bad(why) = raise(FormatError.new("not a readable pprof profile (#{why})", path: @path))

    def build(strings, samples, locations, functions, sample_types, period, meta, comments)
      bad("no string table") if strings.empty? || strings.first != ""
      str = ->(i) { strings.fetch(i.to_i) { bad("string index #{i} out of range") } }
      frame_of = Hash.new do |h, loc_id|
        loc = locations[loc_id] or bad("unknown location #{loc_id}")
        line = message(loc[4]&.first || "")
        fn = functions[line[1]&.first] or bad("unknown function #{line[1]&.first}")
        h[loc_id] = [str.(fn[4]&.first), str.(fn[2]&.first), line[2]&.first.to_i].freeze
      end
      types = sample_types.map { |t| str.(message_value(t, 1)) }
      alloc_index = types.index("alloc_objects")
      inuse_index = types.index("inuse_objects")
      # rperf writes both; retained objects alone are not an allocation profile it can show.
      bad("inuse_objects without alloc_objects (rperf writes both sample types)") if inuse_index && !alloc_index
      time_index = types.index { |t| !ALLOCATION_TYPES.include?(t) } || 0
      label_sets = [{}]
      label_index = { {} => 0 }
      aggregated = []
      allocations = []
      samples.each do |s|
        loc_ids = packed(s[1])
        values = packed(s[2])
        seq = 0
        labels = {}
        klass = nil
        (s[3] || []).each do |raw|
          l = message(raw)
          key = str.(l[1]&.first)
          if key == "thread_seq" then seq = l[3]&.first.to_i
          elsif key == "object_class" && alloc_index then klass = str.(l[2]&.first)
          else labels[key.start_with?("%") ? key : key.to_sym] = l[3].empty? ? str.(l[2]&.first) : signed64(l[3].first)
          end
        end
        lsi = label_index[labels] ||= (label_sets << labels).size - 1
        frames = loc_ids.map { |id| frame_of[id] }
        # Allocation samples (rperf's alloc_objects/inuse_objects types) carry no time, time
        # samples no objects.
        allocated = alloc_index ? values[alloc_index].to_i : 0
        retained = inuse_index ? values[inuse_index].to_i : 0
        if allocated.positive? || retained.positive?
          bad("an allocation sample without an object_class label") unless klass
          allocations << [frames, allocated, seq, lsi, klass, retained]
        else
          aggregated << [frames, values[time_index].to_i, seq, lsi]
        end
      end
      mode = types.empty? ? :cpu : types[time_index].to_sym
      data = {
        mode: mode, frequency: period.to_i.positive? ? (1_000_000_000 / period) : 0,
        start_time_ns: meta[:start_time_ns].to_i, duration_ns: meta[:duration_ns].to_i,
        aggregated_samples: aggregated, label_sets: label_sets,
      }
      return data unless alloc_index

      interval, guessed = allocation_interval(comments.map { |c| str.(c) }, allocations)
      data.merge!(allocation_interval_guessed: true) if guessed
      data.merge(allocation_interval: interval,
                 allocation_sample_count: allocations.sum { |a| a[1] } / interval,
                 allocation_samples: allocations)
    end

    # [interval, guessed]: from the comment rperf writes; a file without it (rperf before
    # allocation profiling was readable from pprof) gets the largest interval every count is a
    # multiple of, marked as guessed.
    def allocation_interval(comments, allocations)
      comments.each do |c|
        n = self.class.allocation_interval_in(c) or next
        bad("allocation interval #{n}") unless n.positive?
        return [n, false]
      end
      interval = allocations.reduce(0) { |g, a| g.gcd(a[1]).gcd(a[5]) }
      [interval.positive? ? interval : 1, true]
    end

    def message_value(raw, field) = message(raw)[field]&.first

    # A numeric label's value: an int64 written as a varint (two's complement when negative).
    def signed64(n) = n >= 2**63 ? n - 2**64 : n

    # { field => [values...] } of a message.
    def message(bytes)
      fields = Hash.new { |h, k| h[k] = [] }
      each_field(bytes) { |f, v| fields[f] << v }
      fields
    end

    def packed(values)
      return [] unless values

      values.flat_map do |v|
        next [v] if v.is_a?(Integer)

        out = []
        pos = 0
        while pos < v.bytesize
          n, pos = varint(v, pos)
          out << n
        end
        out
      end
    end

    def each_field(bytes)
      pos = 0
      while pos < bytes.bytesize
        key, pos = varint(bytes, pos)
        field = key >> 3
        case key & 7
        when 0 then value, pos = varint(bytes, pos)
        when 2
          len, pos = varint(bytes, pos)
          bad("truncated") if pos + len > bytes.bytesize
          value = bytes.byteslice(pos, len)
          pos += len
        when 1 then value = bytes.byteslice(pos, 8); pos += 8
        when 5 then value = bytes.byteslice(pos, 4); pos += 4
        else bad("wire type #{key & 7}")
        end
        bad("truncated") if pos > bytes.bytesize
        yield field, value
      end
    end

    def varint(bytes, pos)
      result = 0
      shift = 0
      loop do
        byte = bytes.getbyte(pos) or bad("truncated varint")
        pos += 1
        result |= (byte & 0x7f) << shift
        return [result, pos] if byte < 0x80

        shift += 7
        bad("varint too long") if shift > 63
      end
    end
  end
end
