# frozen_string_literal: true

require_relative "test_helper"

# The page's JavaScript that runs without a browser (lib/rperf/viewer/assets/page_model.js, its
# generated binding, and viewer_pure.js) under node's own test runner: test/js/*.test.js.
class PageModelJsTest < Minitest::Test
  def test_node_tests_pass
    skip "node missing" unless system("command -v node >/dev/null 2>&1")
    files = Dir[File.join(ROOT, "test/js/*.test.js")].sort
    refute_empty files
    out, status = Open3.capture2e("node", "--test", *files, chdir: ROOT)
    assert status.success?, out
  end
end
