# frozen_string_literal: true

require_relative "test_helper"

# The Viewer page's model is committed built (lib/rperf/viewer/assets/page_model.wasm), so a gem
# or a checkout needs only a C++17 compiler. This checks that the committed module is exactly
# what script/build-page-model makes of the sources now: a change to page/, profile/, views/ or util/
# that was not rebuilt and committed fails here, with what to run.
class PageModelBuildTest < Minitest::Test
  include RubyIndependentTest
  COMMITTED = File.join(ROOT, "lib/rperf/viewer/assets/page_model.wasm")

  def test_the_committed_page_model_is_the_build_of_the_sources
    skip "em++ missing: script/bootstrap consumers installs emscripten" unless system("command -v em++ >/dev/null 2>&1")
    Dir.mktmpdir("rperf-wasm") do |dir|
      built = File.join(dir, "page_model.wasm")
      out, status = Open3.capture2e(File.join(ROOT, "script/build-page-model"), built)
      assert status.success?, out
      assert File.binread(built) == File.binread(COMMITTED),
             "lib/rperf/viewer/assets/page_model.wasm is not the build of the sources: run script/bootstrap wasm and commit it"
    end
  end

  def test_the_page_model_is_tracked_by_git
    tracked, = Open3.capture2("git", "-C", ROOT, "ls-files", "--error-unmatch", "lib/rperf/viewer/assets/page_model.wasm")
    assert_equal "lib/rperf/viewer/assets/page_model.wasm\n", tracked
  end
end
