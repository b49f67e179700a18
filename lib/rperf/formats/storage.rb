# frozen_string_literal: true

module Rperf
  # Reading and writing profile files. The native model does the work (io/ in the extension);
  # this module picks the format, names the file in errors, and adds the writer's meta.
  module Storage
    FORMATS = Settings::FORMATS
    HEAD_BYTES = 256 * 1024  # enough compressed input for any meta/summary head
    FIREFOX_PATTERN = /\.firefox\.json(\.gz)?\z/

    module_function

    # As rperf: .json(.gz) is JSON, .collapsed, .txt, .speedscope.json; anything else pprof.
    # Ours: callgrind.out(.*) is callgrind (the name KCachegrind looks for), .firefox.json(.gz)
    # the Firefox Profiler's processed format.
    def detect_format(path)
      return :callgrind if File.basename(path.to_s).start_with?("callgrind.out")

      case path.to_s
      when /\.speedscope\.json\z/ then :speedscope
      when FIREFOX_PATTERN then :firefox
      when /\.json(\.gz)?\z/ then :json
      when /\.collapsed\z/ then :collapsed
      when /\.txt\z/ then :text
      else :pprof
      end
    end

    # `data`: a result Hash (from stop, snapshot, load or built by hand) or a Native::Profile.
    def write(path, data, format = nil)
      write_profile(path, native(data), format ? Settings.format!(format) : detect_format(path))
    end

    # meta: false skips the meta object (a child's intermediate file: the root's output has it).
    def write_profile(path, profile, format, meta: true)
      encode(profile, format, gzip: path.to_s.end_with?(".gz"), path: path.to_s, meta: meta)
      path
    rescue SystemCallError, IOError => e
      raise WriteError.mark(e, path)
    end

    # Any other file rperf writes (the --html page): the String as the file's new content,
    # atomically (a temporary file beside the target's real path, fsync, rename), as profiles
    # are written. A failure raises the Errno marked WriteError (as a profile's save does) and
    # leaves the previous file as it was.
    def write_file(path, string)
      Native.write_file(path.to_s, string)
      path
    rescue SystemCallError, IOError => e
      raise WriteError.mark(e, path)
    end

    def native(data)
      return data if data.is_a?(Native::Profile)
      raise TypeError, "rperf: a profile must be a Hash (got #{data.class})" unless data.is_a?(Hash)

      Native::Profile.from_hash(data)
    end

    # A top-level value of a result: the Hash's own, or the native profile's (meta, summary or
    # an attribute such as :duration_ns), so printers take either without building a Hash.
    def value(data, key)
      return data[key] unless data.is_a?(Native::Profile)

      case key
      when :meta then data.meta
      when :summary then data.saved_summary
      else data.attribute(key)
      end
    end

    # Whether a result has time samples (a Hash's :aggregated_samples is not empty).
    def samples?(data) = data.is_a?(Native::Profile) ? data.samples? : !data[:aggregated_samples].to_a.empty?

    # The encoded file as a String, or nil after writing it to `path`. comments: more pprof
    # comments (Rperf::Continuous's service, host, pid).
    def encode(data, format, gzip: false, path: nil, meta: true, comments: [])
      format = Settings.format!(format)
      profile = native(data)
      options =
        case format
        when :json
          profile.meta = Meta.build_meta(mode: profile.attribute(:mode)) if meta && !profile.meta?
          # Level 1: on large profiles deflate dominates, and level 6 saves only a quarter.
          { level: 1, trailer: { rperf_version: VERSION, pid: Process.pid, ppid: Process.ppid } }
        when :pprof then { comments: pprof_comments(profile) + comments }
        when :text then { top: Table::ROWS_LIMIT }
        when :collapsed, :speedscope then { name: "rperf #{profile.attribute(:mode)}" }
        # The root process's pid names its track; merged children carry their own (%pid).
        when :firefox then { name: "rperf #{profile.attribute(:mode)}", pid: (profile.attribute(:pid) || Process.pid).to_s }
        else {} # callgrind: the encoder's defaults
        end
      gzip = true if format == :pprof
      out = profile.encode(format, options.merge(gzip: gzip, path: path))
      out&.force_encoding(gzip ? Encoding::BINARY : Encoding::UTF_8)
    end

    # The writer adds the allocation interval's comment itself (its reader reads it back).
    def pprof_comments(profile)
      ["rperf #{VERSION}", "mode: #{profile.attribute(:mode)}", "frequency: #{profile.attribute(:frequency)}Hz", "ruby #{RUBY_VERSION}"]
    end

    # A missing or unreadable file raises its Errno (as rperf 0.11); bad content raises FormatError.
    def read_file(path)
      raw = File.binread(path)
      raise FormatError.new("empty file", path: path) if raw.empty?

      raw
    end

    # A json(.gz) profile. The C++ loader builds the native profile; its Hash view shares
    # identical frames (frozen) as a result of Rperf.stop does.
    def load(path, raw = read_file(path)) = load_json(path, raw).to_h

    def load_json(path, raw)
      profile = with_path(path) { Native::Profile.load_json(raw) }
      meta = profile.meta
      warn_about_version(meta.is_a?(Hash) ? meta[:rperf_version] : nil)
      profile
    end

    # Files of this version and older ones (rperf 0.10, 0.11) load silently; a newer writer may
    # have added what this version ignores.
    def warn_about_version(version)
      if version && Gem::Version.correct?(version) && Gem::Version.new(version) > Gem::Version.new(VERSION)
        warn "rperf: warning: file was saved by rperf #{version} (current: #{VERSION})"
      end
    end

    # Native errors do not know the file: add it.
    def with_path(path)
      yield
    rescue FormatError => e
      raise if e.path

      raise FormatError.new(e.message, path: path)
    end

    # A json(.gz) profile, or a .pb.gz profile (as rperf writes them), told apart by content,
    # as its Hash view (Rperf.load).
    def load_any(path) = load_profile(path).to_h

    # The same as the native model, no Hash view: what the CLI's report and diff and the
    # Viewer's files read. Both formats are read natively (io/loader, io/pprof_reader).
    def load_profile(path)
      raw = read_file(path)
      kind = Native.sniff(raw)
      kind = :pprof if kind.nil? && path.to_s.end_with?(".pb.gz", ".pprof")
      return load_json(path, raw) unless kind == :pprof

      with_path(path) { Native::Profile.load_pprof(raw) }
    end

    # Only the head of the file: meta and summary come first, so the body is never read.
    def read_meta(path)
      head = File.open(path, "rb") { |f| f.read(HEAD_BYTES) }
      head && Native.read_meta(head)
    rescue SystemCallError, IOError
      nil
    end
  end
end
