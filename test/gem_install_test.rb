# frozen_string_literal: true

require_relative "test_helper"
require "fileutils"
require "json"
require "net/http"
require "shellwords"
require "timeout"

# A user's install (issue 45): the gem built from a clean clone of this repository and installed
# with `gem install` where the only toolchain is a C++17 compiler: emscripten's commands on PATH
# record that they were called and fail. The installed `rperf` then profiles the bundled example,
# writes a `--html` Viewer and serves one, and both draw their views in headless Chromium with the
# committed page model (no "page_model.wasm is missing").
class GemInstallTest < Minitest::Test
  include RubyIndependentTest

  EMSCRIPTEN_COMMANDS = %w[em++ emcc emcmake emmake emconfigure].freeze
  CHECK = File.join(ROOT, "test/consumers/viewer_check.js")

  def setup
    @dir = Dir.mktmpdir("rperf-install")
    @called = File.join(@dir, "emscripten-called")
    @fake_bin = File.join(@dir, "fake-bin")
    FileUtils.mkdir_p(@fake_bin)
    EMSCRIPTEN_COMMANDS.each do |name|
      path = File.join(@fake_bin, name)
      File.write(path, "#!/bin/sh\necho \"$0 $*\" >> #{@called.shellescape}\nexit 1\n")
      File.chmod(0o755, path)
    end
    @gem_home = File.join(@dir, "gems")
  end

  def teardown
    if @server
      Process.kill("TERM", @server)
      Process.wait(@server)
    end
    FileUtils.rm_rf(@dir) if @dir # (none when skipped before setup)
    super
  end

  # The installed gem's world: its own GEM_HOME, Puma (to serve) from the gems this suite runs
  # with, no Bundler, no load path of this checkout, fake emscripten first on PATH.
  def env
    puma = Gem::Specification.find_by_name("puma").base_dir
    cleared = ENV.keys.grep(/\A(RPERF_|BUNDLE|RUBYOPT\z|RUBYLIB\z)/).to_h { |k| [k, nil] }
    cleared.merge("GEM_HOME" => @gem_home, "GEM_PATH" => "#{@gem_home}:#{puma}", "MAKEFLAGS" => "-j2",
                  "PATH" => [@fake_bin, RbConfig::CONFIG["bindir"], ENV.fetch("PATH")].join(":"))
  end

  def run!(*cmd, chdir: @dir)
    out, err, status = Open3.capture3(env, *cmd, chdir: chdir)
    assert status.success?, "#{cmd.join(' ')} failed (#{status}):\n#{err}\n#{out}"
    [out, err]
  end

  def installed_rperf = File.join(@gem_home, "bin", "rperf")

  def install_from_clean_clone
    clone = File.join(@dir, "clone")
    run!("git", "clone", "--quiet", "--no-hardlinks", ROOT, clone)
    gem = File.join(@dir, "rperf.gem")
    gem_command = File.join(RbConfig::CONFIG["bindir"], "gem")
    run!(gem_command, "build", "rperf.gemspec", "--output", gem, chdir: clone)
    run!(gem_command, "install", "--local", "--no-document", "--install-dir", @gem_home, gem)
    out, = run!(installed_rperf, "--version")
    assert_equal "rperf #{Rperf::VERSION}\n", out
    # The installed copy is the one that runs, not this checkout's.
    where, = run!(RbConfig.ruby, "-e", 'require "rperf"; print $LOADED_FEATURES.grep(%r{/rperf\.rb\z}).first')
    assert where.start_with?(@gem_home), where
  end

  # What viewer_check.js's static plan read of the page at url (every tab it opens).
  def viewer_check(url)
    out, err, status = Open3.capture3("node", CHECK, url, JSON.generate(static: true), chdir: ROOT)
    assert status.success?, "viewer_check.js failed on #{url}:\n#{err}\n#{out}"
    JSON.parse(out.lines.last)
  end

  def assert_draws_its_views(result, what)
    assert_equal [], result["errors"], what
    assert_equal [], result["external"], "#{what}: nothing requested from elsewhere"
    assert_operator result["flame"], :>, 3, "#{what}: the flame graph drew"
    assert_operator result["icicle"], :>, 3, "#{what}: the icicle drew"
    assert_operator result["top"], :>=, 3, "#{what}: the top table has rows"
    names = result["methods"]["rows"].map { |r| r["name"] }
    assert_includes names, "Object#heavy_work", what
    assert_includes names, "Object#light_work", what
    refute_match(/missing|unavailable/i, result["status"], what)
  end

  # Starts `rperf report FILE --port 0` and returns the address it printed. Its stderr goes to
  # a file, not a pipe: a pipe closed after that line would end the server at its next line.
  def serve(profile)
    log = File.join(@dir, "server.log")
    File.write(log, "")
    @server = Process.spawn(env, installed_rperf, "report", "--port", "0", profile, chdir: @dir, err: [log, "a"], out: File::NULL)
    address = exited = nil
    Timeout.timeout(120) do
      sleep 0.05 until (address = File.read(log)[%r{Serving rperf viewer at (http://127\.0\.0\.1:\d+/)}, 1]) ||
                       (exited = Process.wait2(@server, Process::WNOHANG))
    end
    @server = nil if exited
    address || flunk("the server #{exited ? "exited (#{exited[1]})" : 'said no address'}:\n#{File.read(log)}")
  end

  def test_a_gem_from_a_clean_clone_profiles_writes_and_serves_a_working_viewer_without_emscripten
    install_from_clean_clone
    profile = File.join(@dir, "app.json.gz")
    run!(installed_rperf, "record", "-m", "wall", "--no-aggregate", "-o", profile, RbConfig.ruby, File.join(ROOT, "examples/app.rb"))
    html = File.join(@dir, "app.html")
    run!(installed_rperf, "report", "--html", "-o", html, profile)
    assert_draws_its_views(viewer_check("file://#{html}"), "the --html file")

    url = serve(profile)
    wasm = Net::HTTP.get_response(URI("#{url}assets/page_model.wasm"))
    assert_equal "200", wasm.code
    assert_equal File.binread(File.join(ROOT, "lib/rperf/viewer/assets/page_model.wasm")), wasm.body,
                 "the served page model is the committed one"
    assert_draws_its_views(viewer_check(url), "the served viewer")

    refute File.exist?(@called), "emscripten was called: #{File.exist?(@called) && File.read(@called)}"
  end
end
