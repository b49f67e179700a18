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
      bytes = encode(data, format, gzip: path.to_s.end_with?(".gz"))
      File.binwrite(path, bytes)
      path
    end

    def encode(data, format, gzip: false)
      case format
      when :json
        body = JSON.generate(json_document(data))
        gzip ? Zlib.gzip(body, level: Zlib::DEFAULT_COMPRESSION) : body
      when :text then Report.text(data)
      when :collapsed then Collapsed.encode(data)
      else raise UnknownFormatError, "format #{format} is not available yet"
      end
    end

    # The document starts with meta and summary so read_meta can stop early.
    def json_document(data)
      body = data.dup
      body[:aggregated_samples] = data[:aggregated_samples]
      {
        meta: meta(data),
        summary: summary(data),
        **body,
      }
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
      t = Result.flat_and_cumulative(data)
      {
        total_weight_ns: t[:total_weight],
        sampling_count: data[:sampling_count],
        duration_ns: data[:duration_ns],
        top_functions: t[:flat].sort_by { |_, w| -w }.first(TOP_N).map { |(label, path), w| { label: label, path: path, weight_ns: w } },
      }
    end

    def read_bytes(path)
      raw = File.binread(path)
      raise FormatError.new("empty file", path: path) if raw.empty?

      return raw unless raw.byteslice(0, 2) == "\x1f\x8b".b

      Zlib.gunzip(raw)
    rescue Zlib::Error => e
      raise FormatError.new("corrupt gzip data (#{e.message})", path: path)
    rescue SystemCallError => e
      raise FormatError.new(e.message, path: path)
    end

    def load(path)
      doc = JSON.parse(read_bytes(path), symbolize_names: true)
      raise FormatError.new("not an rperf profile", path: path) unless doc.is_a?(Hash) && doc[:aggregated_samples].is_a?(Array)

      version = doc.dig(:meta, :rperf_version)
      warn "rperf: #{path} was written by rperf #{version || 'unknown'} (this is #{VERSION})" if version != VERSION
      from_json(doc, path)
    rescue JSON::ParserError, EncodingError => e
      raise FormatError.new("invalid JSON (#{e.message.lines.first&.strip})", path: path)
    end

    def from_json(doc, path)
      data = doc.except(:meta, :summary)
      data[:mode] = data[:mode].to_sym if data[:mode].is_a?(String)
      data[:aggregated_samples] = data[:aggregated_samples].map do |frames, weight, seq, lsi|
        raise FormatError.new("malformed sample", path: path) unless frames.is_a?(Array) && weight.is_a?(Integer)

        [frames.map { |f| f.is_a?(Array) ? f.freeze : raise(FormatError.new("malformed frame", path: path)) }, weight, seq, lsi]
      end
      data[:label_sets] = (data[:label_sets] || [{}]).map { |h| h.transform_keys { |k| k.to_s.start_with?("%") ? k.to_s : k } }
      data
    end

    def read_meta(path)
      doc = JSON.parse(read_bytes(path), symbolize_names: true)
      return nil unless doc.is_a?(Hash) && doc[:meta]

      { meta: doc[:meta], summary: doc[:summary] }
    rescue Error, JSON::ParserError
      nil
    end
  end

  # Collapsed stacks: "root;...;leaf weight" per unique stack.
  module Collapsed
    module_function

    def encode(data)
      merged = Hash.new(0)
      data[:aggregated_samples].each do |frames, weight|
        merged[frames.reverse.map { |f| escape(f[1]) }.join(";")] += weight
      end
      merged.map { |stack, w| "#{stack} #{w}\n" }.join
    end

    def escape(name)
      name.gsub(/[;\n\r]/, ";" => ":", "\n" => " ", "\r" => " ")
    end
  end
end
