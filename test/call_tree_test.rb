# frozen_string_literal: true

require_relative "test_helper"
require "json"
require "stringio"
require "rperf/cli"

# The call-tree views (Rperf::CallTree, Rperf::MethodTable), their printers, and callgrind
# output read by callgrind_annotate: exact on hand-built profiles, with tolerances on real ones.
class CallTreeTest < Minitest::Test

  # The seed's example (ruby-prof's architecture notes): process calls validate then save,
  # save calls validate then write. Frames [path, label, line]; samples leaf first.
  def seed_profile
    main = ["app.rb", "<main>", 20]
    process = ["app.rb", "Object#process", 2]
    validate = ["app.rb", "Object#validate", 12]
    save = ["app.rb", "Object#save", 7]
    write = ["app.rb", "Object#write", 15]
    {
      mode: :wall, frequency: 1000,
      aggregated_samples: [
        [[validate, process, main], 10_000_000, 1, 0],
        [[process, main], 5_000_000, 1, 0],
        [[validate, save, process, main], 20_000_000, 1, 0],
        [[write, save, process, main], 30_000_000, 1, 1],
        [[save, process, main], 1_000_000, 2, 0],
      ],
      label_sets: [{}, { endpoint: "/w" }],
    }
  end

  def test_seed_example_two_validate_nodes_one_validate_method_with_two_callers
    tree = Rperf::CallTree.new(seed_profile)
    nodes = tree.visit.select { |_, event| event == :enter }.map(&:first)
    validates = nodes.select { |n| n.name == "Object#validate" }
    assert_equal 2, validates.size
    assert_equal [["Object#save", 20_000_000], ["Object#process", 10_000_000]], validates.map { |n| [n.parent.name, n.total_ns] }.sort_by { |_, ns| -ns }
    assert_equal 66_000_000, tree.total_ns
    assert_equal "[root]", tree.root.name
    assert_nil tree.root.parent
    process = tree.root.children.first.children.first
    assert_equal Rperf::MethodRef.new("Object#process", "app.rb", 2), process.method
    assert_equal [66_000_000, 5_000_000, 2], [process.total_ns, process.self_ns, process.depth]
    assert_equal %w[Object#save Object#validate], process.children.map(&:name)
    refute process.recursive?

    table = Rperf::MethodTable.new(seed_profile)
    validate = table["Object#validate"]
    assert_equal [30_000_000, 30_000_000], [validate.self_ns, validate.total_ns]
    assert_equal [["Object#save", 20_000_000, 2 / 3r], ["Object#process", 10_000_000, 1 / 3r]],
                 validate.callers.map { |a| [a.method.name, a.total_ns, a.share.rationalize(1e-9)] }
    assert_empty validate.callees
    # The heaviest n arcs and the count of all (what the viewer sends).
    assert_equal [[["Object#save", 20_000_000]], 2], validate.heaviest(:callers, 1).then { |arcs, n| [arcs.map { |a| [a.method.name, a.total_ns] }, n] }
    assert_equal validate.callers, validate.heaviest(:callers, 5)[0]
    assert_equal [[], 0], validate.heaviest(:callees, 5)
    assert_raises(ArgumentError) { validate.heaviest(:siblings, 1) }
    assert_equal [["Object#save", 51_000_000], ["Object#validate", 10_000_000]], table["Object#process"].callees.map { |a| [a.method.name, a.total_ns] }
    assert_equal %w[Object#process <main> Object#save Object#validate Object#write], table.map(&:name) # total, then self
  end

  def test_threads_and_filter
    tree = Rperf::CallTree.new(seed_profile, threads: :separate)
    assert_equal ["[thread 1]", "[thread 2]"], tree.root.children.map(&:name)
    assert_equal [65_000_000, 1_000_000], tree.root.children.map(&:total_ns)
    filtered = Rperf::CallTree.new(seed_profile, filter: { endpoint: "/w" })
    assert_equal 30_000_000, filtered.total_ns
    assert_equal 0, Rperf::CallTree.new(seed_profile, filter: { "endpoint" => "/nothing" }).total_ns
    assert_raises(ArgumentError) { Rperf::CallTree.new(seed_profile, threads: :all) }
    assert_raises(ArgumentError) { Rperf::CallTree.new(seed_profile, max_depth: -1) }
  end

  # inverted: true, the bottom-up tree: the running functions are the roots (total = self time),
  # each child a caller of the one above; with the filters as the top-down tree's.
  def test_inverted_tree_roots_are_the_running_functions
    tree = Rperf::CallTree.new(seed_profile, inverted: true)
    assert_equal 66_000_000, tree.total_ns
    assert_equal [["Object#validate", 30_000_000], ["Object#write", 30_000_000], ["Object#process", 5_000_000], ["Object#save", 1_000_000]],
                 tree.root.children.map { |n| [n.name, n.total_ns] }
    validate = tree.root.children.first
    assert_equal [["Object#save", 20_000_000], ["Object#process", 10_000_000]], validate.children.map { |n| [n.name, n.total_ns] }
    assert_equal ["Object#write"], Rperf::CallTree.new(seed_profile, inverted: true, filter: { endpoint: "/w" }).root.children.map(&:name)
    separate = Rperf::CallTree.new(seed_profile, inverted: true, threads: :separate)
    assert_equal [["[thread 1]", 65_000_000], ["[thread 2]", 1_000_000]], separate.root.children.map { |n| [n.name, n.total_ns] }
  end

  def test_max_depth_limits_visit_and_printing_not_totals
    tree = Rperf::CallTree.new(seed_profile, max_depth: 2)
    entered = tree.visit.select { |_, e| e == :enter }.map(&:first)
    assert_equal [0, 1, 2], entered.map(&:depth).uniq.sort
    assert_equal 66_000_000, entered.last.total_ns # process, with everything below it
    events = tree.visit(max_depth: 1).map { |n, e| [n.name, e] }
    assert_equal [["[root]", :enter], ["<main>", :enter], ["<main>", :exit], ["[root]", :exit]], events
    out = StringIO.new
    Rperf::CallTreeReport.tree(tree, out)
    assert_match(/^\s+66\.0\s+5\.0\s+100\.0%\s{6}Object#process \(app\.rb:2\)$/, out.string)
    refute_match(/validate/, out.string)
    assert_equal 30_000_000, tree.method_table["Object#validate"].total_ns
  end

  def test_recursion_is_counted_once_on_a_hand_built_profile
    simple = ["r.rb", "Object#simple", 1]
    sleep_frame = ["<internal:kernel>", "Kernel#sleep", 0]
    main = ["r.rb", "<main>", 9]
    data = { mode: :wall, frequency: 1000, label_sets: [{}], aggregated_samples: [
      [[sleep_frame, simple, main], 100, 1, 0],
      [[sleep_frame, simple, simple, main], 100, 1, 0],
      [[sleep_frame, simple, simple, simple, main], 100, 1, 0],
    ] }
    table = Rperf::MethodTable.new(data)
    assert_equal 300, table["Object#simple"].total_ns
    assert table["Object#simple"].recursive?
    assert_equal [["<main>", 300], ["Object#simple", 200]], table["Object#simple"].callers.map { |a| [a.method.name, a.total_ns] }
    simples = table.tree.visit.select { |n, e| e == :enter && n.name == "Object#simple" }.map(&:first)
    assert_equal [300, 200, 100], simples.map(&:total_ns)
    assert_equal [false, true, true], simples.map(&:recursive?)
  end

  # --- real programs -----------------------------------------------------------------------

  SEED_PROGRAM = <<~RUBY
    def validate = sleep(0.03)
    def write = sleep(0.03)
    def save
      validate
      write
    end
    def process
      validate
      save
    end
    now = -> { Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond) }
    elapsed = {}
    data = Rperf.start(mode: :wall, frequency: 500, aggregate: false) do
      t0 = now.call
      process
      elapsed["Object#process"] = now.call - t0
    end
    Rperf.save(ARGV[0], data)
    puts JSON.generate(elapsed)
  RUBY

  # The profile a program saves, and the wall time it measured around each method it names.
  def profile_of(code)
    Dir.mktmpdir do |dir|
      path = File.join(dir, "p.json.gz")
      out, err, status = run_ruby("require 'rperf'\nrequire 'json'\n#{code}", path)
      assert status.success?, err
      [Rperf.load(path), JSON.parse(out)]
    end
  end

  # A method's total is its measured wall time within its boundary samples (test_helper).
  def assert_total_is_measured(data, elapsed, name, total_ns)
    inside = ->(s) { frame?(s, name) }
    assert_in_delta elapsed.fetch(name), total_ns, boundary_weight(data, 1, &inside), "#{name}'s total vs its measured time"
  end

  def test_seed_program_validate_from_two_call_sites
    data, elapsed = profile_of(SEED_PROGRAM)
    tree = Rperf::CallTree.new(data)
    validates = tree.visit.select { |n, e| e == :enter && n.name == "Object#validate" }.map(&:first)
    assert_equal 2, validates.size
    assert_equal %w[Object#process Object#save], validates.map { |n| n.parent.name }.sort
    entry = tree.method_table["Object#validate"]
    assert_equal %w[Object#process Object#save], entry.callers.map { |a| a.method.name }.sort
    assert_equal entry.total_ns, entry.callers.sum(&:total_ns)
    # Sleeping waits outside the GVL: a [GVL blocked] leaf under Kernel#sleep.
    sleeps = validates.flat_map(&:children)
    assert_equal ["Kernel#sleep"], sleeps.map(&:name).uniq
    assert_includes sleeps.flat_map(&:children).map(&:name), "[GVL blocked]"
    process = tree.method_table["Object#process"]
    assert_operator elapsed["Object#process"], :>=, 90_000_000
    assert_total_is_measured data, elapsed, "Object#process", process.total_ns
  end

  RECURSIVE_PROGRAM = <<~RUBY
    def simple(n)
      sleep(0.04)
      return if n == 0
      simple(n - 1)
    end
    def ping(n) = (sleep(0.02); n.zero? ? nil : pong(n))
    def pong(n) = (sleep(0.02); ping(n - 1))
    now = -> { Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond) }
    elapsed = {}
    data = Rperf.start(mode: :wall, frequency: 500, aggregate: false) do
      t0 = now.call
      simple(2)
      t1 = now.call
      ping(2)
      elapsed["Object#ping"] = now.call - t1
      elapsed["Object#simple"] = t1 - t0
    end
    Rperf.save(ARGV[0], data)
    puts JSON.generate(elapsed)
  RUBY

  def test_recursion_total_is_the_outer_duration_not_the_sum
    data, elapsed = profile_of(RECURSIVE_PROGRAM)
    tree = Rperf::CallTree.new(data)
    table = tree.method_table
    simples = tree.visit.select { |n, e| e == :enter && n.name == "Object#simple" }.map(&:first)
    assert_equal [false, true, true], simples.map(&:recursive?)
    simple = table["Object#simple"]
    assert_equal simples.first.total_ns, simple.total_ns # the outermost call only
    assert_total_is_measured data, elapsed, "Object#simple", simple.total_ns
    assert_operator simples.sum(&:total_ns), :>, simple.total_ns * 1.6 # what a naive sum would say
    assert simple.recursive?
    assert_equal 1, (simple.callees.count { |a| a.method.name == "Object#simple" })
    # Mutual recursion: ping -> pong -> ping -> pong -> ping, each counted once.
    ping = table["Object#ping"]
    pong = table["Object#pong"]
    assert ping.recursive? && pong.recursive?
    assert_total_is_measured data, elapsed, "Object#ping", ping.total_ns
    assert_operator pong.total_ns, :<, ping.total_ns
    assert_equal %w[Object#ping Object#pong], tree.visit.select { |n, e| e == :enter && n.recursive? && n.name.start_with?("Object#p") }.map { |n, _| n.name }.uniq.sort
  end

  # --- printers ----------------------------------------------------------------------------

  def test_graph_printer_callers_above_callees_below
    out = StringIO.new
    Rperf::CallTreeReport.graph(Rperf::MethodTable.new(seed_profile), out)
    block = out.string.split(/^-+\n/).find { |b| b =~ /^\s+\S+%\s+\S+%.*Object#save \(app\.rb:7\)$/ }
    lines = block.lines.map(&:strip)
    assert_match(/^51\.0\s+100\.0%\s+Object#process/, lines[0])        # caller
    assert_match(/^77\.3%\s+1\.5%\s+51\.0\s+1\.0\s+Object#save/, lines[1]) # the method
    assert_match(/^30\.0\s+58\.8%\s+Object#write/, lines[2])           # callees
    assert_match(/^20\.0\s+39\.2%\s+Object#validate/, lines[3])
  end

  def rperf_report(*args)
    out = StringIO.new
    err = StringIO.new
    status = Rperf::CLI.run(["report", *args], out: out, err: err)
    [out.string, err.string, status]
  end

  def test_report_views
    Dir.mktmpdir do |dir|
      file = File.join(dir, "p.json.gz")
      Rperf.save(file, seed_profile)
      out, err, status = rperf_report("--tree", file)
      assert_equal 0, status, err
      assert_equal 9, out.lines.size # header, columns, [root] and 6 nodes
      assert_match(/^\s+20\.0\s+20\.0\s+30\.3%\s{10}Object#validate \(app\.rb:12\)$/, out)
      out, = rperf_report("--tree", "--max-depth", "2", file)
      assert_equal 5, out.lines.size
      out, = rperf_report("--tree", "--min-percent", "40", file)
      assert_equal ["[root]", "<main>", "Object#process", "Object#save", "Object#write"], out.lines.drop(2).map { |l| l.split[3] }
      out, = rperf_report("--graph", file)
      assert_equal 5, out.scan(/^-{78}$/).size
      out, = rperf_report("--callers", "validate", file)
      assert_match(/Object#save.*\n.*Object#process.*\n.*Object#validate \(app\.rb:12\)\n\z/, out)
      out, = rperf_report("--callees", "Object#save", file)
      assert_match(/Object#save \(app\.rb:7\)\n.*Object#write.*\n.*Object#validate.*\n\z/, out)
      _, err, status = rperf_report("--callers", "nothing", file)
      assert_equal [1, "No method matching \"nothing\" in the profile\n"], [status, err]
      out, = rperf_report("--format", "callgrind", file)
      assert_match(/\A# callgrind format\n.*^totals: 66000000\n\z/m, out)
      target = File.join(dir, "callgrind.out.app")
      _, err, status = rperf_report("-o", target, file)
      assert_equal [0, "wrote #{target}\n"], [status, err]
      assert_equal out, File.read(target)
    end
  end

  # --- callgrind ---------------------------------------------------------------------------

  # callgrind_annotate --inclusive=yes: {"file:function" => inclusive cost} and the program total.
  def annotate(path)
    skip "callgrind_annotate not installed (Debian: valgrind)" unless system("command -v callgrind_annotate >/dev/null")
    Dir.mktmpdir do |cwd| # it strips its working directory from file names
      out, err, status = Open3.capture3("callgrind_annotate", "--inclusive=yes", "--threshold=100", "--auto=no", path, chdir: cwd)
      assert status.success?, err
      refute_match(/WARNING/, err)
      total = out[/^\s*([\d,]+)\s+\(100\.0%\)\s+PROGRAM TOTALS/, 1].delete(",").to_i
      costs = out.scan(/^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.+)$/).to_h { |cost, name| [name.strip, cost.delete(",").to_i] }
      [total, costs.except("PROGRAM TOTALS")]
    end
  end

  def assert_callgrind_agrees(data)
    Dir.mktmpdir do |dir|
      path = File.join(dir, "callgrind.out.test")
      Rperf.save(path, data)
      assert_match(/\A# callgrind format\n/, File.read(path))
      total, costs = annotate(path)
      table = Rperf::MethodTable.new(data)
      assert_equal table.total_ns, total
      expected = table.to_h { |e| ["#{e.method.path.empty? ? '???' : e.method.path}:#{e.name}", e.total_ns] }
      assert_equal expected.merge("???:[root]" => table.total_ns), costs
    end
  end

  def test_callgrind_annotate_reads_our_totals
    assert_callgrind_agrees(seed_profile)
    assert_callgrind_agrees(profile_of(RECURSIVE_PROGRAM).first)
  end

  # speedscope's callgrind importer (its npm package, in headless Chromium) rebuilds the same
  # totals from the calls' inclusive costs on a profile without recursion.
  def test_speedscope_imports_our_callgrind
    skip "speedscope/Chromium not installed (script/bootstrap consumers)" unless File.exist?(File.join(ROOT, "node_modules/speedscope")) && File.exist?(ENV.fetch("CHROMIUM", "/usr/bin/chromium"))
    Dir.mktmpdir do |dir|
      path = File.join(dir, "callgrind.out.seed")
      Rperf.save(path, seed_profile)
      out, err, status = Open3.capture3("node", File.join(ROOT, "test/consumers/speedscope_import.js"), path, chdir: ROOT)
      assert status.success?, err
      seen = JSON.parse(out)
      assert_equal [[], []], [seen["errors"], seen["external"]]
      assert_includes seen["log"], "Importing as Callgrind profile"
      rows = seen["text"].split("Symbol Name\n", 2).last.lines.map(&:strip).each_slice(3)
      shown = rows.to_h { |total, self_ns, name| [name, [total, self_ns].map { |v| v[/\A[\d,]+/].delete(",").to_i }] }
      expected = Rperf::MethodTable.new(seed_profile).to_h { |e| [e.name, [e.total_ns, e.self_ns]] }
      assert_equal expected.merge("[root]" => [66_000_000, 0]), shown
    end
  end

  def test_save_and_format_callgrind
    Dir.mktmpdir do |dir|
      path = File.join(dir, "profile.out")
      Rperf.save(path, seed_profile, format: :callgrind)
      body = File.read(path)
      assert_includes body, "events: wall_ns\n"
      assert_includes body, "fn=(3) Object#process\n"
      assert_match(/^totals: 66000000$/, body)
      # A session's output: callgrind.out.* names the format.
      out = File.join(dir, "callgrind.out.run")
      _o, err, status = run_ruby("require 'rperf'; Rperf.start(mode: :wall, output: ARGV[0]); sleep 0.02; Rperf.stop", out)
      assert status.success?, err
      # Named where it is first mentioned: as a function, or as a callee when a sample of
      # Rperf.start's own work comes first (under load its setup takes a tick or more).
      assert_match(/\A# callgrind format\n.*^c?fn=\(\d+\) Kernel#sleep$/m, File.read(out))
    end
  end
end
