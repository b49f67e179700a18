# frozen_string_literal: true

require "rperf"
require "rperf/viewer"
require "rperf/cli"
require "fileutils"
require "json"
require "stringio"
require "zlib"

module Rperf
  # A seeded mutational fuzzer of every file rperf reads: valid files of each format (.json,
  # .json.gz, .pb.gz, rperf 0.11.1's files, and a Hash handed to Rperf.save) mutated by byte
  # flips, truncations, splices and boundary integers put in place of a number, each case fed
  # to Rperf.load, `rperf report --top` and `--html`, `rperf diff` and the Viewer's snapshot
  # route in a forked child with limits. A case fails on a signal, a run over TIME_LIMIT, an
  # address space past MEMORY_LIMIT beyond the child's start (setrlimit), or an exception that
  # is not one of rperf's documented errors (Rperf::Error; TypeError for a Hash the model
  # refuses). Case n of seed s is the same case on every machine (its own Random from both);
  # a failing case is kept in the findings directory with what happened.
  class Fuzzer
    TIME_LIMIT = 10
    MEMORY_LIMIT = 1 << 30
    # Integers a hostile file puts where an id, a count or a time goes.
    BOUNDARIES = [-1, -2, 0, 2**31 - 1, 2**31, 2**32 - 1, 2**32, -(2**31) - 1, 2**63 - 1, 2**63, -(2**63), 10**12,
                  2**64, 10**30].freeze
    PPROF_BOUNDARIES = [0, 1, 2**31, 2**32 - 1, 2**32, 2**63 - 1, 2**63, 2**64 - 1, 2**64 - 2, 10**12].freeze
    FIXTURES_0_11 = File.expand_path("../compat/fixtures/written_by_0.11.1", __dir__)
    SNAPSHOT_ENV = { "REQUEST_METHOD" => "GET", "PATH_INFO" => "/rperf/snapshots/1", "REMOTE_ADDR" => "127.0.0.1" }.freeze

    Finding = Struct.new(:seed, :case_number, :seed_file, :mutation, :what, :path, keyword_init: true) do
      def to_s = "seed #{seed} case #{case_number} (#{mutation} of #{File.basename(seed_file)}): #{what}\n  kept as #{path}"
    end

    attr_reader :cases, :findings

    def initialize(seed:, dir:, findings_dir:, log: nil)
      @seed = seed
      @dir = dir
      @findings_dir = findings_dir
      @log = log
      @cases = 0
      @findings = []
      FileUtils.mkdir_p(@dir)
      @corpus = build_corpus(File.join(@dir, "corpus"))
      @hashes = @corpus.select { |f| f.end_with?(".json") }.map { |f| [f, Rperf.load(f)] }
      @base_limit = address_space
    end

    # Runs cases from `first` until `count` have run or `seconds` have passed, whichever is first.
    def run(count: nil, seconds: nil, first: 0)
      deadline = seconds && monotonic + seconds
      n = first
      loop do
        break if count && @cases >= count
        break if deadline && monotonic > deadline

        run_case(n)
        n += 1
      end
      self
    end

    # One case: its file made, then fed to every reader in a child.
    def run_case(n)
      rng = Random.new((@seed * 1_000_003) + n)
      kind = rng.rand(6)
      if kind.zero?
        source, hash = @hashes[rng.rand(@hashes.size)]
        mutation, data = mutate_hash(hash, rng)
        run_child(n, source, mutation) { |_dir| save_hash(data) }
      else
        source = @corpus[rng.rand(@corpus.size)]
        mutation, bytes = mutate_file(File.binread(source), rng)
        run_child(n, source, mutation, bytes: bytes)
      end
      @cases += 1
    end

    def self.extension(path) = path[/\.(json|json\.gz|pb\.gz)\z/]

    private

    def monotonic = Process.clock_gettime(Process::CLOCK_MONOTONIC)

    def address_space
      File.read("/proc/self/status")[/^VmSize:\s+(\d+)/, 1].to_i * 1024
    rescue SystemCallError
      0
    end

    # --- the corpus: valid files of every format ---------------------------------------------

    def build_corpus(dir)
      FileUtils.mkdir_p(dir)
      files = []
      { "aggregated" => aggregated_profile, "raw" => raw_profile, "allocations" => allocation_profile }.each do |name, data|
        %w[json json.gz pb.gz].each do |ext|
          path = File.join(dir, "#{name}.#{ext}")
          Rperf.save(path, data)
          files << path
        end
      end
      Dir[File.join(FIXTURES_0_11, "*")].sort.each do |f|
        path = File.join(dir, "0.11.1-#{File.basename(f)}")
        FileUtils.cp(f, path)
        files << path
      end
      files
    end

    FRAMES = [["/app/a.rb", "A#run", 3], ["/app/b.rb", "B.work", 10], ["/gems/puma/server.rb", "Puma::Server#process", 40],
              ["<internal:kernel>", "Kernel#sleep", 0], ["/app/c.rb", "block in C#each", 7]].freeze

    def stack(*ids) = ids.map { |i| FRAMES[i].dup }

    def aggregated_profile
      { mode: :cpu, frequency: 1000, sampling_count: 12, start_time_ns: 1_700_000_000_000_000_000, duration_ns: 50_000_000,
        label_sets: [{}, { endpoint: "/a" }, { endpoint: "/b", n: 3, "%GVL": "blocked" }],
        aggregated_samples: [[stack(0, 1), 4_000_000, 1, 0], [stack(1, 2), 2_000_000, 2, 1], [stack(3, 4, 2), 9_000_000, 2, 2],
                             [[], 1_000_000, 3, 1], [stack(4), 500_000, 1, 0]],
        function_start_lines: [["/app/a.rb", "A#run", 1], ["/app/b.rb", "B.work", 8]] }
    end

    def raw_profile
      { mode: :wall, frequency: 1000, sampling_count: 5, start_time_ns: 1_700_000_000_000_000_000, duration_ns: 20_000_000,
        label_sets: [{}, { job: "x" }],
        aggregated_samples: [[stack(0, 1), 3_000_000, 1, 0], [stack(3), 2_000_000, 2, 1]],
        raw_samples: [[stack(0, 1), 1_000_000, 1, 0, 0, 1_000_000], [stack(0, 1), 2_000_000, 1, 0, 0, 3_000_000],
                      [stack(3), 2_000_000, 2, 1, 1, 4_000_000], [stack(2, 4), 500_000, 2, 1, 2, 9_000_000]] }
    end

    def allocation_profile
      { mode: :cpu, frequency: 1000, sampling_count: 2, duration_ns: 10_000_000, allocation_interval: 64, allocation_sample_count: 3,
        label_sets: [{}], aggregated_samples: [[stack(0), 2_000_000, 1, 0]],
        allocation_samples: [[stack(0, 1), 128, 1, 0, "String", 64], [stack(4), 64, 2, 0, "Array", 0]] }
    end

    # --- mutations ---------------------------------------------------------------------------

    # [what was done, the bytes]. A gzip file is mutated as it is or in its content (then
    # compressed again, or left plain: the readers take both).
    def mutate_file(bytes, rng)
      content = gunzip(bytes)
      gz = !content.nil?
      if gz && rng.rand(4).positive?
        mutation, out = mutate_content(content, rng)
        return rng.rand(5).zero? ? ["#{mutation} (plain)", out] : ["#{mutation} (gzip)", gzip(out)]
      end
      mutate_bytes(bytes, rng)
    end

    def mutate_content(content, rng)
      json = content.lstrip.start_with?("{")
      case rng.rand(5)
      when 0, 1, 2 then json ? substitute_json(content, rng) : substitute_varint(content, rng)
      else mutate_bytes(content, rng)
      end
    end

    def mutate_bytes(bytes, rng)
      s = bytes.b
      return ["empty", s] if s.empty?

      case rng.rand(3)
      when 0
        n = 1 + rng.rand(8)
        n.times { s.setbyte(rng.rand(s.bytesize), s.getbyte(rng.rand(s.bytesize)) ^ (1 + rng.rand(255))) }
        ["#{n} byte flips", s]
      when 1
        at = rng.rand(s.bytesize)
        ["truncated at #{at}", s.byteslice(0, at)]
      else
        from = rng.rand(s.bytesize)
        len = 1 + rng.rand([s.bytesize - from, 64].min)
        to = rng.rand(s.bytesize)
        ["splice of #{len} bytes from #{from} to #{to}", s.byteslice(0, to) + s.byteslice(from, len) + s.byteslice(to..)]
      end
    end

    NUMBER_OR_STRING = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/

    # A boundary integer in place of one (or a few) of the JSON's numbers.
    def substitute_json(text, rng)
      s = text.dup.force_encoding(Encoding::BINARY)
      numbers = []
      s.scan(NUMBER_OR_STRING) { numbers << Regexp.last_match.offset(0) unless Regexp.last_match(0).start_with?('"') }
      return mutate_bytes(s, rng) if numbers.empty?

      picks = numbers.sample(1 + rng.rand(2), random: rng).sort.reverse
      values = picks.map do |(from, to)|
        value = BOUNDARIES[rng.rand(BOUNDARIES.size)]
        s[from...to] = value.to_s
        "#{value} at byte #{from}"
      end
      ["numbers #{values.join(', ')}", s]
    end

    # A boundary integer in place of one of the protobuf's varints.
    def substitute_varint(bytes, rng)
      varints = []
      scan_message(bytes.b, 0, bytes.bytesize, varints, 0)
      return mutate_bytes(bytes, rng) if varints.empty?

      from, len = varints[rng.rand(varints.size)]
      value = PPROF_BOUNDARIES[rng.rand(PPROF_BOUNDARIES.size)]
      s = bytes.b
      ["varint #{value} at byte #{from}", s.byteslice(0, from) + encode_varint(value) + s.byteslice((from + len)..)]
    end

    # The varints (offset, length) of a protobuf message and of what parses as messages inside it.
    def scan_message(s, from, to, out, depth)
      at = from
      while at < to
        key, at = read_varint(s, at, to)
        return false unless key

        case key & 7
        when 0
          start = at
          _, at = read_varint(s, at, to)
          return false unless at

          out << [start, at - start]
        when 2
          len, at = read_varint(s, at, to)
          return false if len.nil? || at + len > to

          nested = []
          out.concat(nested) if depth < 4 && len.positive? && scan_message(s, at, at + len, nested, depth + 1)
          at += len
        when 1 then at += 8
        when 5 then at += 4
        else return false
        end
      end
      at == to
    end

    def read_varint(s, at, to)
      value = 0
      shift = 0
      while at < to && shift < 70
        byte = s.getbyte(at)
        at += 1
        value |= (byte & 0x7f) << shift
        return [value, at] if byte < 0x80

        shift += 7
      end
      [nil, nil]
    end

    def encode_varint(value)
      value &= (2**64) - 1
      out = +"".b
      loop do
        byte = value & 0x7f
        value >>= 7
        out << (value.zero? ? byte : byte | 0x80).chr
        return out if value.zero?
      end
    end

    # A copy of a loaded profile Hash with a boundary integer in place of one of its rows' numbers.
    def mutate_hash(hash, rng)
      data = deep_copy(hash)
      rows = %i[aggregated_samples raw_samples allocation_samples].filter_map { |k| data[k] if data[k].is_a?(Array) && !data[k].empty? }
      return ["Hash unchanged", data] if rows.empty?

      list = rows[rng.rand(rows.size)]
      row = list[rng.rand(list.size)]
      field = 1 + rng.rand(row.size - 1)
      value = BOUNDARIES[rng.rand(BOUNDARIES.size)]
      row[field] = value unless row[field].is_a?(String)
      ["Hash row field #{field} = #{value}", data]
    end

    # A plain copy (the loaded Hash is linked to its native profile: Marshal refuses it).
    def deep_copy(value)
      case value
      when Hash then value.to_h { |k, v| [k, deep_copy(v)] }
      when Array then value.map { |v| deep_copy(v) }
      when String then value.dup
      else value
      end
    end

    def gunzip(bytes)
      return nil unless bytes.b.start_with?("\x1f\x8b".b)

      Zlib::GzipReader.new(StringIO.new(bytes)).read
    rescue Zlib::Error
      nil
    end

    def gzip(bytes)
      io = StringIO.new(+"".b)
      gz = Zlib::GzipWriter.new(io)
      gz.write(bytes)
      gz.close
      io.string
    end

    # --- a case in a child -------------------------------------------------------------------

    # The child's work, stage by stage; each stage's name goes to the parent first, so a crash
    # names the stage it happened in.
    def exercise(path, seed_file, dir, report)
      out = StringIO.new
      stage(report, "Rperf.load")
      data = begin
        Rperf.load(path)
      rescue Rperf::Error
        nil
      end
      if data
        stage(report, "Rperf.save of the loaded Hash")
        Rperf.save(File.join(dir, "saved.json.gz"), data)
      end
      stage(report, "rperf report --top")
      CLI.run(["report", "--top", path], out: out, err: out)
      stage(report, "rperf report --html")
      CLI.run(["report", "--html", "-o", File.join(dir, "report.html"), path], out: out, err: out)
      stage(report, "rperf diff")
      CLI.run(["diff", seed_file, path], out: out, err: out)
      stage(report, "Viewer snapshot")
      viewer = Viewer.new(nil)
      if path.end_with?(".pb.gz")
        return unless data

        viewer.add_snapshot(data)
      else
        viewer.add_snapshot_dir(dir)
      end
      status, _, body = viewer.call(SNAPSHOT_ENV.dup)
      body.each { |_| nil }
      raise "the snapshot answered #{status}" unless [200, 422].include?(status)
    end

    def save_hash(data)
      stage(@report, "Rperf.save of a Hash")
      path = File.join(@case_dir, "case.json")
      Rperf.save(path, data)
      path
    rescue TypeError, Rperf::Error
      nil
    end

    def stage(io, name)
      io.write("stage #{name}\n")
      io.flush
    end

    def run_child(n, seed_file, mutation, bytes: nil, &make)
      @case_dir = File.join(@dir, "case")
      FileUtils.rm_rf(@case_dir)
      FileUtils.mkdir_p(@case_dir)
      ext = self.class.extension(seed_file) || ".json"
      path = File.join(@case_dir, "case#{ext}")
      File.binwrite(path, bytes) if bytes
      reader, writer = IO.pipe
      pid = fork do
        reader.close
        @report = writer
        Process.setrlimit(Process::RLIMIT_AS, @base_limit + MEMORY_LIMIT) if @base_limit.positive?
        $stdout.reopen(File::NULL, "w")
        $stderr.reopen(File.join(@case_dir, "stderr"), "w")
        begin
          path = make.call(@case_dir) if make
          exercise(path, seed_file, @case_dir, writer) if path
          stage(writer, "done")
          exit!(0)
        rescue Exception => e # rubocop:disable Lint/RescueException -- everything that is not documented is a finding
          writer.write("exception #{e.class}: #{e.message.to_s[0, 500]}\n  #{Array(e.backtrace).first(8).join("\n  ")}\n")
          writer.flush
          exit!(3)
        end
      end
      writer.close
      status, timed_out = wait(pid)
      report = reader.read
      reader.close
      what = verdict(status, timed_out, report)
      record(n, seed_file, mutation, what, path) if what
      @log&.call(n, mutation, what)
    end

    def wait(pid)
      deadline = monotonic + TIME_LIMIT
      loop do
        _, status = Process.waitpid2(pid, Process::WNOHANG)
        return [status, false] if status

        if monotonic > deadline
          Process.kill(:KILL, pid)
          return [Process.waitpid2(pid)[1], true]
        end
        sleep 0.005
      end
    end

    def verdict(status, timed_out, report)
      last_stage = report.scan(/^stage (.*)$/).flatten.last
      return "over #{TIME_LIMIT} s in #{last_stage}" if timed_out
      return "signal #{Signal.signame(status.termsig)} in #{last_stage}" if status.signaled?
      return "#{report[/^exception .*/m].strip} (in #{last_stage})" if status.exitstatus == 3
      return "exit #{status.exitstatus} in #{last_stage}" unless status.success?
      return "the child stopped in #{last_stage}" unless last_stage == "done"

      nil
    end

    def record(n, seed_file, mutation, what, path)
      FileUtils.mkdir_p(@findings_dir)
      kept = File.join(@findings_dir, "seed#{@seed}-case#{n}#{self.class.extension(path) || '.json'}")
      FileUtils.cp(path, kept) if File.exist?(path)
      stderr = File.join(@case_dir, "stderr")
      FileUtils.cp(stderr, "#{kept}.stderr") if File.exist?(stderr) && File.size?(stderr)
      finding = Finding.new(seed: @seed, case_number: n, seed_file: seed_file, mutation: mutation, what: what, path: kept)
      File.write("#{kept}.txt", "#{finding}\n")
      @findings << finding
    end
  end
end
