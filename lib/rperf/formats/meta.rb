# frozen_string_literal: true

require "time"

module Rperf
  # The "meta" object of a profile file (rperf 0.11's fields): when and where it was made, the
  # Ruby and rperf versions, the git commit of the working directory, and labels from
  # RPERF_META_LABELS. The summary next to it is computed by the native model.
  module Meta
    FORMAT_VERSION = 1
    TOP_METHODS_LIMIT = 50

    module_function

    def build_meta(data)
      meta = {
        format_version: FORMAT_VERSION,
        created_at: Time.now.utc.iso8601,
        ruby_version: RUBY_VERSION,
        rperf_version: VERSION,
        mode: (data[:mode] || :cpu).to_s,
      }
      hostname = safe_hostname
      meta[:hostname] = hostname if hostname
      git = git_from_env_or_collect
      meta[:git] = git if git
      labels = labels_from_env
      meta[:labels] = labels if labels && !labels.empty?
      meta
    end

    # total_ms, cpu_ms, gc_*, allocated/freed objects, maxrss_mb, samples, top_methods: computed
    # by the native model (views/summary.cc), the same object a JSON file carries.
    def build_summary(data)
      Storage.native(data).summary
    end

    def top_methods(data, limit: TOP_METHODS_LIMIT)
      Table.report_rows(data, limit: limit).reject { |r| r[:method] == "(other)" }.map do |r|
        { name: r[:method], self_pct: r[:self_pct].round(1), total_pct: r[:total_pct].round(1) }
      end
    end

    # The file name of `rperf record --snapshot-dir`: rperf-<sha7>-<UTC time>.json.gz, or
    # rperf-nogit-<time>-<pid>.json.gz outside a repository.
    def snapshot_filename(git, time: Time.now.utc, pid: Process.pid)
      stamp = time.utc.strftime("%Y%m%dT%H%M%SZ")
      sha = git.is_a?(Hash) ? git[:sha].to_s[0, 7] : ""
      sha.empty? ? "rperf-nogit-#{stamp}-#{pid}.json.gz" : "rperf-#{sha}-#{stamp}.json.gz"
    end

    # {meta:, summary:} of a file, read from its head only (nil when it has none).
    def read(path)
      Storage.read_meta(path)
    end

    def safe_hostname
      require "socket"
      Socket.gethostname
    rescue StandardError
      nil
    end

    # RPERF_META_GIT (set by the CLI before exec, so a chdir in the profiled program cannot point
    # at another repository; "null" = not a repository), else collected once per process.
    def git_from_env_or_collect
      if ENV.key?("RPERF_META_GIT")
        value = ENV["RPERF_META_GIT"].to_s
        return nil if value.empty? || value == "null"

        require "json"
        parsed = JSON.parse(value, symbolize_names: true)
        return parsed.is_a?(Hash) ? parsed : nil
      end
      @git ||= [collect_git]
      @git.first
    rescue JSON::ParserError
      nil
    end

    # sha, branch, subject, committed_at, dirty. CI checkouts (GITHUB_SHA) may be detached or
    # shallow: their variables come first.
    def collect_git(dir = Dir.pwd)
      ci_sha = ENV["GITHUB_SHA"]
      if ci_sha&.match?(/\A\h{7,64}\z/)  # validated: it is passed to git as an argument
        git = { sha: ci_sha, dirty: false }
        branch = [ENV["GITHUB_HEAD_REF"], ENV["GITHUB_REF_NAME"]].find { |b| b && !b.empty? }
        git[:branch] = branch if branch
        add_commit_info(git, dir, ci_sha)
        return git
      end
      sha = git_capture(dir, "rev-parse", "HEAD")
      return nil if sha.nil? || sha.empty?

      git = { sha: sha }
      branch = git_capture(dir, "rev-parse", "--abbrev-ref", "HEAD")
      git[:branch] = branch if branch && !branch.empty? && branch != "HEAD"
      add_commit_info(git, dir, sha)
      status = git_capture(dir, "status", "--porcelain")
      git[:dirty] = !status.empty? if status
      git
    end

    def add_commit_info(git, dir, sha)
      subject = git_capture(dir, "log", "-1", "--format=%s", sha)
      committed_at = git_capture(dir, "log", "-1", "--format=%cI", sha)
      git[:subject] = subject if subject && !subject.empty?
      git[:committed_at] = committed_at if committed_at && !committed_at.empty?
    end

    # Through Native.capture (posix_spawn): IO.popen would fork the whole process, ~0.1 s per
    # command when it holds a large profile.
    def git_capture(dir, *args)
      out, ok = Native.capture(["git", "-C", dir.to_s, *args])
      ok ? out.strip : nil
    rescue SystemCallError
      nil
    end

    def labels_from_env
      value = ENV["RPERF_META_LABELS"]
      return nil unless value

      require "json"
      labels = JSON.parse(value)
      labels.is_a?(Hash) ? labels : nil
    rescue JSON::ParserError
      nil
    end
  end
end
