# frozen_string_literal: true

require "json"
require "zlib"
require "socket"
require "time"

module Rperf
  # Reading and writing profile files. The format comes from the file name or `format:`.
  module Storage
    FORMATS = %i[json pprof collapsed text speedscope].freeze
    JSON_FORMAT_VERSION = 1

    module_function

    def check_format!(format)
      return format if FORMATS.include?(format)

      raise UnknownFormatError, "unknown format #{format.inspect} (expected one of #{FORMATS.join(', ')})"
    end

    def detect_format(path)
      case path.to_s
      when /\.pb\.gz\z/, /\.pprof\z/ then :pprof
      when /\.collapsed\z/ then :collapsed
      when /\.txt\z/ then :text
      when /\.speedscope\.json\z/ then :speedscope
      else :json
      end
    end

    def write(path, data, format = nil)
      format = format ? check_format!(format) : detect_format(path)
      # The C++ encoder writes the file itself: no copy of a large body through Ruby.
      encode(data, format, gzip: path.to_s.end_with?(".gz"), path: path.to_s)
      path
    rescue SystemCallError, IOError => e
      raise WriteError.new("cannot write the profile: #{e.message}", path: path)
    end

    # The encoded file as a String, or nil after writing it to `path`.
    def encode(data, format, gzip: false, path: nil)
      format, gzip, options =
        case format
        when :json
          head = JSON.generate(json_head(data)).chomp("}")
          head << "," unless head.end_with?("{")
          # Level 1: on large profiles deflate dominates, and level 6 saves only a quarter.
          [:json, gzip, { head: head, level: 1 }]
        when :pprof then [:pprof, true, { comments: pprof_comments(data) }]
        when :text then [:text, false, { top: TOP_N }]
        when :collapsed, :speedscope then [format, gzip, { name: "rperf #{data[:mode]}" }]
        else raise UnknownFormatError, "unknown format #{format.inspect}"
        end
      out = Native.encode(data, format, gzip, options.merge(path: path))
      out&.force_encoding(gzip ? Encoding::BINARY : Encoding::UTF_8)
    end

    # Everything but the aggregated body (written by the C++ encoder), meta and summary first
    # so read_meta can stop early. raw_samples (aggregate: false) stay, for timelines.
    def json_head(data)
      # rperf_version at the top level too: rperf 0.10 readers look for it there.
      { meta: meta(data), summary: summary(data), rperf_version: VERSION,
        **data.except(:aggregated_samples, :label_sets) }
    end

    def pprof_comments(data)
      ["rperf #{VERSION}", "mode: #{data[:mode]}", "frequency: #{data[:frequency]}Hz", "ruby #{RUBY_VERSION}"]
    end

    def meta(data)
      {
        format_version: JSON_FORMAT_VERSION,
        rperf_version: VERSION,
        ruby_version: RUBY_VERSION,
        mode: data[:mode],
        frequency: data[:frequency],
        pid: Process.pid,
        hostname: (Socket.gethostname rescue nil),
        created_at: Time.now.utc.iso8601(3),
        command_line: [$PROGRAM_NAME, *ARGV].join(" "),
      }
    end

    def summary(data)
      flat = Result.flat_by_frame(data)
      {
        total_weight_ns: Result.total_weight(data),
        sampling_count: data[:sampling_count],
        duration_ns: data[:duration_ns],
        top_functions: flat.max_by(TOP_N) { |_, w| w }.map { |f, w| { label: f[1], path: f[0], weight_ns: w } },
      }
    end

    def read_file(path)
      raw = File.binread(path)
      raise FormatError.new("empty file", path: path) if raw.empty?

      raw
    rescue SystemCallError => e
      raise FormatError.new(e.message, path: path)
    end

    def gzip?(raw) = raw.byteslice(0, 2) == "\x1f\x8b".b

    # The bytes, decompressed when gzipped (ISA-L or zlib, in C++).
    def inflate(raw, path) = gzip?(raw) ? with_path(path) { Native.gunzip(raw) } : raw

    # A json(.gz) profile. The C++ reader builds the result directly: frozen, shared frame
    # arrays and interned strings as from Rperf.stop (JSON.parse would take 6x the time and
    # 3x the memory on large profiles: bench/load_bench.rb).
    def load(path, raw = read_file(path))
      doc = with_path(path) { Native.load_json(raw) }
      raise FormatError.new("not an rperf profile (no aggregated_samples)", path: path) unless doc.is_a?(Hash) && doc.key?(:aggregated_samples)

      data = from_json(doc, path)
      version = doc[:rperf_version] || (doc[:meta].is_a?(Hash) ? doc[:meta][:rperf_version] : nil)
      warn "rperf: #{path} was written by rperf #{version || 'unknown'} (this is #{VERSION})" if version != VERSION
      data
    end

    # Native errors do not know the file: add it.
    def with_path(path)
      yield
    rescue FormatError => e
      raise if e.path

      raise FormatError.new(e.message, path: path)
    end

    # A json(.gz) profile, or a .pb.gz profile (as rperf writes them).
    def load_any(path)
      raw = read_file(path)
      return load(path, raw) unless pprof?(raw, path)

      PprofReader.read(inflate(raw, path), path)
    end

    # Inflates just the start of a gzip file; nil when it is corrupt.
    def first_inflated_byte(raw)
      inflater = Zlib::Inflate.new(Zlib::MAX_WBITS + 16)
      inflater.inflate(raw.byteslice(0, 4096)).byteslice(0, 1)
    rescue Zlib::Error
      nil
    ensure
      inflater&.close
    end

    # pprof files start with field 1 (sample_type, length-delimited): "\n".
    def pprof?(raw, path)
      return true if path.to_s.end_with?(".pb.gz", ".pprof")

      first = gzip?(raw) ? first_inflated_byte(raw) : raw.byteslice(0, 1)
      first == "\n".b
    end

    def from_json(doc, path)
      bad = ->(what) { raise FormatError.new("malformed profile: #{what}", path: path) }
      data = doc.except(:meta, :summary, :rperf_version)
      data[:mode] = data[:mode].to_sym if data[:mode].is_a?(String)
      label_sets = data[:label_sets] || [{}]
      bad.("label_sets is not an array of objects") unless label_sets.is_a?(Array) && label_sets.all?(Hash)
      data[:label_sets] = label_sets.map { |h| h.transform_keys { |k| k.start_with?("%") ? k.to_s : k } }
      starts = data[:function_start_lines]
      bad.("function_start_lines is not a list of [path, label, line]") unless starts.nil? || (starts.is_a?(Array) && starts.all? { |e| e.is_a?(Array) && e.size == 3 })
      samples = data[:aggregated_samples]
      bad.("aggregated_samples is not an array") unless samples.is_a?(Array)
      # Identical frames are one object (Native.load_json): check each once.
      checked = {}.compare_by_identity
      samples.each do |sample|
        bad.("sample is not [frames, weight, thread_seq, label_set_id]") unless sample.is_a?(Array) && sample.size == 4
        frames, weight, seq, lsi = sample
        bad.("sample is not [frames, weight, thread_seq, label_set_id]") unless frames.is_a?(Array) && Integer === weight && Integer === seq && Integer === lsi
        bad.("label_set_id #{lsi} out of range") unless lsi >= 0 && lsi < label_sets.size
        frames.each do |f|
          next if checked[f]
          bad.("frame is not [path, label(, line)]") unless f.is_a?(Array) && f.size.between?(2, 3) &&
                                                          String === f[0] && String === f[1] && (f.size == 2 || Integer === f[2])
          checked[f] = true
        end
      end
      data
    end

    # Reads only the head of the file: meta and summary come first, so the parse stops before
    # the sample body (at most the first chunk that holds both objects is decompressed).
    def read_meta(path)
      head = read_head(path)
      return nil unless head&.start_with?('{"meta":')

      meta_json = balanced_object(head, 8)
      return nil unless meta_json

      meta = JSON.parse(meta_json, symbolize_names: true)
      rest = head[(8 + meta_json.bytesize)..]
      summary = nil
      if rest&.start_with?(',"summary":')
        summary_json = balanced_object(rest, 11)
        summary = JSON.parse(summary_json, symbolize_names: true) if summary_json
      end
      { meta: meta, summary: summary }
    rescue Error, JSON::ParserError, SystemCallError, Zlib::Error
      nil
    end

    HEAD_BYTES = 64 * 1024

    def read_head(path)
      File.open(path, "rb") do |f|
        magic = f.read(2)
        return nil unless magic
        f.rewind
        return f.read(HEAD_BYTES) unless magic == "\x1f\x8b".b

        gz = Zlib::GzipReader.new(f)
        gz.readpartial(HEAD_BYTES) + (gz.eof? ? "" : (gz.read(HEAD_BYTES) || ""))
      end
    end

    # The JSON object starting at byte `from` of `str`, found by brace matching outside strings.
    def balanced_object(str, from)
      depth = 0
      in_string = false
      escaped = false
      i = from
      while i < str.bytesize
        c = str.getbyte(i)
        if in_string
          if escaped then escaped = false
          elsif c == 92 then escaped = true
          elsif c == 34 then in_string = false
          end
        elsif c == 34 then in_string = true
        elsif c == 123 then depth += 1
        elsif c == 125
          depth -= 1
          return str.byteslice(from, i - from + 1) if depth.zero?
        end
        i += 1
      end
      nil
    end
  end
end
