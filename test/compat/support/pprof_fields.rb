# frozen_string_literal: true

require "zlib"

module CompatProbe
  # Just enough of the protobuf wire format to describe a pprof profile written by either gem
  # (independent of both, so it can judge them): field number => list of values, where a
  # varint is an Integer and a length-delimited field is a binary String.
  module PprofFields
    module_function

    def fields(bytes)
      out = Hash.new { |h, k| h[k] = [] }
      pos = 0
      while pos < bytes.bytesize
        key, pos = varint(bytes, pos)
        number = key >> 3
        case key & 7
        when 0 then value, pos = varint(bytes, pos)
        when 2
          len, pos = varint(bytes, pos)
          value = bytes.byteslice(pos, len)
          pos += len
        when 1 then value, pos = [bytes.byteslice(pos, 8).unpack1("Q<"), pos + 8]
        when 5 then value, pos = [bytes.byteslice(pos, 4).unpack1("L<"), pos + 4]
        else raise ArgumentError, "wire type #{key & 7} at #{pos}"
        end
        out[number] << value
      end
      out
    end

    def varint(bytes, pos)
      value = 0
      shift = 0
      loop do
        byte = bytes.getbyte(pos)
        pos += 1
        value |= (byte & 0x7f) << shift
        shift += 7
        return [value, pos] if byte < 0x80
      end
    end

    def packed(bytes)
      values = []
      pos = 0
      while pos < bytes.bytesize
        v, pos = varint(bytes, pos)
        values << v
      end
      values
    end

    def int(value) = value.is_a?(String) ? packed(value) : [value]

    # A readable summary: sample types, period, comments, label keys (and whether they carry
    # str or num), line numbers, which optional fields are set.
    def describe(gzipped_or_raw)
      raw = gzipped_or_raw.byteslice(0, 2) == "\x1f\x8b".b ? Zlib.gunzip(gzipped_or_raw) : gzipped_or_raw
      top = fields(raw)
      strings = top[6].map { |s| s.dup.force_encoding(Encoding::UTF_8) }
      str = ->(i) { strings[i] }
      value_type = ->(bytes) { f = fields(bytes); "#{str.(f[1].first || 0)}/#{str.(f[2].first || 0)}" }
      labels = Hash.new { |h, k| h[k] = [] }
      top[2].each do |sample|
        fields(sample)[3].each do |label|
          l = fields(label)
          labels[str.(l[1].first)] << (l[2].first ? "str" : "num")
        end
      end
      lines = top[4].flat_map { |loc| fields(loc)[4].map { |line| fields(line)[2].first || 0 } }
      functions = top[5].map { |f| fields(f) }
      {
        "string_table_0" => strings.first,
        "sample_type" => top[1].map(&value_type),
        "period_type" => top[11].map(&value_type),
        "period" => top[12].first,
        "default_sample_type" => top[14].first && str.(top[14].first),
        "comments" => top[13].map(&str),
        "doc_url" => top[15].first && str.(top[15].first),
        "time_nanos_set" => !top[9].empty?,
        "duration_nanos_set" => !top[10].empty?,
        "samples" => top[2].size,
        "values_per_sample" => top[2].map { |s| fields(s)[2].flat_map { |v| int(v) }.size }.uniq,
        "label_keys" => labels.transform_values(&:uniq),
        "mappings" => top[3].size,
        "locations" => top[4].size,
        "functions" => functions.size,
        "lines_nonzero" => lines.count(&:positive?),
        "function_system_name_set" => functions.count { |f| f[3].first.to_i.positive? },
        "function_start_line_set" => functions.count { |f| f[5].first.to_i.positive? },
      }
    end
  end
end
