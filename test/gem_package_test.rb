# frozen_string_literal: true

require_relative "test_helper"
require "fileutils"
require "rubygems/package"

# What `gem build rperf.gemspec` packages: every C++ source extconf.rb compiles and every
# header they include (the layers live in subdirectories of ext/rperf), the viewer's assets
# with the vendored licenses, the executable, and no build products of this checkout.
class GemPackageTest < Minitest::Test
  def setup
    @dir = Dir.mktmpdir("rperf-gem")
  end

  def teardown
    FileUtils.rm_rf(@dir)
    super
  end

  def build_gem
    gem_file = File.join(@dir, "rperf.gem")
    env = { "RUBYOPT" => nil, "BUNDLE_GEMFILE" => nil, "BUNDLER_SETUP" => nil }
    _out, err, status = Open3.capture3(env, File.join(RbConfig::CONFIG["bindir"], "gem"), "build", "rperf.gemspec",
                                       "--output", gem_file, chdir: ROOT)
    assert status.success?, "gem build failed:\n#{err}"
    Gem::Package.new(gem_file)
  end

  # The sources extconf.rb hands to make, read from the Makefile it writes (run here, in a
  # directory of its own, on this checkout's ext/rperf).
  def compiled_sources
    build = File.join(@dir, "build")
    FileUtils.mkdir_p(build)
    _out, err, status = Open3.capture3(RUBY, File.join(ROOT, "ext/rperf/extconf.rb"), chdir: build)
    assert status.success?, "extconf.rb failed:\n#{err}"
    makefile = File.read(File.join(build, "Makefile"))
    srcs = makefile[/^SRCS = (.*)$/, 1].split.reject { |src| src.start_with?("$(") } # $(ORIG_SRCS): empty
    # mkmf writes base names; VPATH names the layer directories they were found in.
    layers = makefile[/^VPATH = (.*)$/, 1].split(":").filter_map { |d| d[%r{\$\(srcdir\)/(\w+)\z}, 1] }
    srcs.map do |src|
      dir = layers.find { |layer| File.exist?(File.join(ROOT, "ext/rperf", layer, src)) }
      assert dir, "#{src} is in none of #{layers.inspect}"
      "ext/rperf/#{dir}/#{src}"
    end
  end

  def test_gem_packages_every_compiled_source_header_and_viewer_asset
    package = build_gem
    files = package.spec.files
    contents = package.contents

    sources = compiled_sources
    assert_operator sources.size, :>=, 20, sources.inspect
    assert_empty sources - contents, "sources extconf.rb compiles but the gem lacks"
    assert_includes contents, "ext/rperf/extconf.rb"
    assert_equal ["ext/rperf/extconf.rb"], package.spec.extensions

    # Every quoted #include of a packaged C++ file resolves inside the package (relative to
    # ext/rperf, as extconf.rb's -I$(srcdir) has it).
    cxx = contents.grep(/\Aext\/rperf\/.*\.(cc|hh)\z/)
    includes = cxx.flat_map { |f| File.read(File.join(ROOT, f)).scan(/^#include "([^"]+)"/).flatten }.uniq
    assert_operator includes.size, :>, 10
    missing = includes.reject { |inc| contents.include?("ext/rperf/#{inc}") }
    assert_empty missing, "headers included but not packaged"
    tracked = Dir.chdir(ROOT) { Dir["ext/rperf/**/*.{cc,hh}"] }
    assert_empty tracked - contents, "C++ files of the checkout the gem lacks"

    require "rperf/viewer"
    assets = Dir.chdir(ROOT) { Dir["lib/rperf/viewer/assets/**/*"].select { |f| File.file?(f) } }
    ["index.html", "viewer.css", *Rperf::Viewer::SCRIPTS].each do |name|
      assert_includes assets, "lib/rperf/viewer/assets/#{name}"
    end
    assert_empty assets - contents, "viewer assets the gem lacks"
    # Every asset the viewer serves is a file of the gem.
    Rperf::Viewer::ASSET_TYPES.each_key { |name| assert_includes contents, "lib/rperf/viewer/assets/#{name}" }

    assert_includes contents, "exe/rperf"
    assert_equal ["rperf"], package.spec.executables
    assert_empty contents.grep(/\.(so|o|bundle)\z/), "no build products of this checkout"
    assert_equal files.sort, contents.sort
  end
end
