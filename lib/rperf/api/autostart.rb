# frozen_string_literal: true

module Rperf
  # Profiling without code changes: `RPERF_ENABLED=1 ruby app.rb` (the CLI sets these variables
  # and RUBYOPT=-rrperf). Invalid values leave the program running unprofiled, with a message.
  module Autostart
    ENV_KEYS = [*Settings::SAMPLING_ENV.values, *Settings::PROCESS_ENV.values, Settings::INHERIT_ENV,
                *%w[RPERF_ENABLED RPERF_STAT_REPORT RPERF_STAT_IDLE RPERF_STAT_COMMAND RPERF_ORIGINAL_RUBYOPT RPERF_ORIGINAL_RUBYLIB
                    RPERF_SESSION_DIR RPERF_ROOT_PROCESS]].freeze

    module_function

    # RUBYOPT and RUBYLIB that make every Ruby program started with them load rperf first.
    def preload_env(env = ENV)
      lib = File.expand_path("../..", __dir__)
      {
        "RUBYOPT" => ["-rrperf", env["RUBYOPT"]].compact.reject(&:empty?).uniq.join(" "),
        "RUBYLIB" => [lib, env["RUBYLIB"]].compact.reject(&:empty?).uniq.join(File::PATH_SEPARATOR),
      }
    end

    # The settings of an autostarted session: Settings.from_env, with the CLI's default output.
    def settings_from_env(env = ENV)
      settings = Settings.from_env(env)
      # A plain `RPERF_ENABLED=1 ruby -rrperf` profiles this process only (as rperf 0.11); the
      # CLI says RPERF_INHERIT=1 to follow children.
      settings = settings.with(inherit: false) unless Settings.present?(env[Settings::INHERIT_ENV])
      return settings if settings.output || settings.stat

      settings.with(output: "rperf.json.gz")
    end

    # Children of this process are not profiled by the autostarted session (single process):
    # restore the environment the user had before the CLI added to it. Without the CLI (the user
    # set RPERF_ENABLED=1 and RUBYOPT=-rrperf), remove only what loads rperf, as rperf 0.11 does:
    # the `-rrperf` options and rperf's lib directory; the user's other options and load paths stay.
    def restore_child_environment
      %w[RUBYOPT RUBYLIB].each do |key|
        original = ENV.delete("RPERF_ORIGINAL_#{key}")
        value = original.nil? ? without_preload(key, ENV[key]) : original
        if value.nil? || value.empty? then ENV.delete(key) else ENV[key] = value end
      end
      ENV_KEYS.each { |k| ENV.delete(k) }
    end

    def without_preload(key, value)
      return nil if value.nil?

      if key == "RUBYOPT"
        value.split(" ").reject { |o| o == "-rrperf" }.join(" ")
      else
        lib = File.expand_path("../..", __dir__)
        value.split(File::PATH_SEPARATOR).reject { |p| p == lib }.join(File::PATH_SEPARATOR)
      end
    end

    # A spawned child of a profiled root: the session variables name another process.
    def child_session_dir(env = ENV)
      dir = env["RPERF_SESSION_DIR"]
      dir if dir && env["RPERF_ROOT_PROCESS"] != Process.pid.to_s && File.directory?(dir)
    end

    def exec_root_session_dir(env = ENV)
      dir = env["RPERF_SESSION_DIR"]
      dir if dir && env["RPERF_ROOT_PROCESS"] == Process.pid.to_s && File.directory?(dir)
    end

    def orphaned_child?(env = ENV)
      env["RPERF_SESSION_DIR"] && env["RPERF_ROOT_PROCESS"] != Process.pid.to_s
    end

    # The session's end at exit (`rperf record`, RPERF_ENABLED=1): a profile that could not be
    # written (a full disk, its directory gone), or a child's that was lost, makes a program
    # that succeeded exit 1, so the loss is not silent. A failing program keeps its own status.
    # A second Ctrl-C meanwhile is held back until the profile is written (Shutdown).
    def stop_at_exit(ending)
      Shutdown.stop(ending) do
        Session.output_error = nil
        Session.lost_children = 0
        Rperf.stop_without_result
        lost = Session.output_error || Session.lost_children.to_i.positive?
        exit 1 if lost && (ending.nil? || (ending.is_a?(SystemExit) && ending.success?))
      end
    end

    def run
      settings = settings_from_env
      if (dir = child_session_dir)
        # Keep the environment: this child's own children are profiled too.
        Rperf.start_child(dir, settings.with(inherit: true))
        return
      end
      if (dir = exec_root_session_dir)
        # This root exec'd a Ruby program: the new program goes on as the root (same output,
        # same session directory); what ran before exec is not in its profile.
        Stat.configure(ENV)
        Rperf.start_root_after_exec(settings.with(inherit: true), dir)
        return
      end
      if orphaned_child?
        # Spawned after its root finished and merged: nobody would collect this profile.
        restore_child_environment
        return
      end
      Stat.configure(ENV)
      restore_child_environment
      at_exit { Autostart.stop_at_exit($!) } # before start: not among the program's allocations
      Rperf.start(**settings.to_h)
    rescue Error, ArgumentError => e
      restore_child_environment
      warn "rperf: #{e.message}; running without profiling"
    end
  end
end
