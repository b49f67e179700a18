// The call tree, the method table and the callgrind encoder on hand-built profiles: exact
// numbers (ruby-prof's examples from its architecture notes: call sites, recursion).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <tuple>

#include "io/encoders.hh"
#include "io/output.hh"
#include "test_profiles.hh"
#include "views/call_tree.hh"
#include "views/method_table.hh"

using namespace rperf;
using namespace rperf::fixtures;

namespace {

// "label(total/self)" of a node and its subtree, children in the tree's order; '*' marks
// recursive nodes: one string to compare a whole tree at once.
std::string shape(const CallTree& t, uint32_t id = CallTree::kRoot) {
  CallTree::Node n = t.node(id);
  std::string out = t.methods()[n.method].label + (n.recursive ? "*" : "") + "(" + std::to_string(n.total_ns) + "/" +
                    std::to_string(n.self_ns) + ")";
  std::vector<uint32_t> children;
  t.children(id, children);
  if (children.empty()) return out;
  out += "[";
  for (size_t i = 0; i < children.size(); i++) {
    if (i > 0) out += " ";
    EXPECT_EQ(t.node(children[i]).parent, id);
    EXPECT_EQ(t.node(children[i]).depth, n.depth + 1);
    out += shape(t, children[i]);
  }
  return out + "]";
}

uint32_t method_named(const CallTree& t, const std::string& label) {
  for (uint32_t m = 0; m < t.methods().size(); m++) {
    if (t.methods()[m].label == label) return m;
  }
  ADD_FAILURE() << "no method " << label;
  return 0;
}

// "label=ns" of each arc of a method's callers or callees, heaviest first.
std::string arcs_text(const CallTree& t, const MethodTable::Arcs& arcs) {
  std::string out;
  for (const auto& [method, ns] : arcs) {
    if (!out.empty()) out += " ";
    out += t.methods()[method].label + "=" + std::to_string(ns);
  }
  return out;
}

// Every arc the slow way: per path, each distinct call (caller, callee) once, its weight added;
// a method's callers heaviest first, then by caller id, its callees heaviest first, then by
// first appearance along the sorted paths.
void arcs_by_hand(const MethodPaths& paths, uint32_t method, MethodTable::Arcs& callers, MethodTable::Arcs& callees) {
  std::map<std::pair<uint32_t, uint32_t>, std::pair<int64_t, size_t>> calls;  // -> (ns, first seen)
  for (uint32_t i : paths.sorted()) {
    std::set<std::pair<uint32_t, uint32_t>> once;
    for (size_t d = 1; d < paths.size(i); d++) {
      auto call = std::make_pair(paths.begin(i)[d - 1], paths.begin(i)[d]);
      if (!once.insert(call).second) continue;
      auto it = calls.emplace(call, std::make_pair(int64_t{0}, calls.size())).first;
      it->second.first += paths.weight(i);
    }
  }
  std::vector<std::tuple<int64_t, size_t, uint32_t>> in, out;  // (-ns, tie, method)
  for (const auto& [call, sum] : calls) {
    if (call.second == method) in.emplace_back(-sum.first, call.first, call.first);
    if (call.first == method) out.emplace_back(-sum.first, sum.second, call.second);
  }
  std::sort(in.begin(), in.end());
  std::sort(out.begin(), out.end());
  callers.clear();
  callees.clear();
  for (const auto& [ns, tie, m] : in) callers.emplace_back(m, -ns);
  for (const auto& [ns, tie, m] : out) callees.emplace_back(m, -ns);
}

std::string callgrind(const Profile& p) {
  std::string s;
  Output out(&s, OutputOptions());
  encode_callgrind(p, out);
  EXPECT_EQ(out.finish(), 0);
  return s;
}

// The seed's example: process calls validate and save, save calls validate and write.
Profile process_validate_save() {
  return make_profile({{"app.rb", "<main>", 20}, {"app.rb", "process", 2}, {"app.rb", "validate", 12}, {"app.rb", "save", 7},
                       {"app.rb", "write", 15}, {"app.rb", "process", 3}, {"app.rb", "save", 8}},
                      {{{2, 1, 0}, 10}, {{1, 0}, 5}, {{2, 3, 5, 0}, 20}, {{4, 6, 5, 0}, 30}, {{3, 5, 0}, 1}});
}

// simple(2) of the seed: each level sleeps, then calls the next.
Profile simple_recursion() {
  return make_profile({{"r.rb", "<main>", 9}, {"r.rb", "simple", 2}, {"r.rb", "sleep", 0}},
                      {{{2, 1, 0}, 100}, {{2, 1, 1, 0}, 100}, {{2, 1, 1, 1, 0}, 100}, {{1, 1, 0}, 3}}, {}, false);
}

}  // namespace

TEST(CallTree, OneNodePerCallPathOneMethodPerMethod) {
  Profile p = process_validate_save();
  CallTree t(p, {});
  EXPECT_EQ(shape(t), "[root](66/0)[<main>(66/0)[process(66/5)[save(51/1)[write(30/30) validate(20/20)] validate(10/10)]]]");
  EXPECT_EQ(t.total_ns(), 66);
  int validate_nodes = 0;
  for (uint32_t id = 0; id < t.size(); id++) validate_nodes += t.methods()[t.node(id).method].label == "validate";
  EXPECT_EQ(validate_nodes, 2);
  // Lines differ (process at 2 and 3): still one method, starting at its lowest sampled line.
  EXPECT_EQ(t.methods()[method_named(t, "process")].line, 2);
  EXPECT_EQ(t.node(2).depth, 2u);
  EXPECT_EQ(t.node(2).parent, 1u);

  MethodTable mt(t);
  uint32_t validate = method_named(t, "validate"), process = method_named(t, "process");
  EXPECT_EQ(mt.entries()[validate].self_ns, 30);
  EXPECT_EQ(mt.entries()[validate].total_ns, 30);
  EXPECT_FALSE(mt.entries()[validate].recursive);
  EXPECT_EQ(arcs_text(t, mt.callers(validate)), "save=20 process=10");
  EXPECT_EQ(arcs_text(t, mt.callees(validate)), "");
  EXPECT_EQ(mt.entries()[process].total_ns, 66);
  EXPECT_EQ(arcs_text(t, mt.callees(process)), "save=51 validate=10");
  EXPECT_EQ(arcs_text(t, mt.callers(process)), "<main>=66");
  // The root is no method: no caller of <main>, no entry.
  EXPECT_EQ(mt.callers(method_named(t, "<main>")).size(), 0u);
  EXPECT_EQ(mt.entries()[kRootMethod].total_ns, 0);
}

TEST(CallTree, RecursionCountsTotalsOnce) {
  Profile p = simple_recursion();
  CallTree t(p, {});
  EXPECT_EQ(shape(t), "[root](303/0)[<main>(303/0)[simple(303/0)[simple*(203/3)[simple*(100/0)[sleep(100/100)] sleep(100/100)] sleep(100/100)]]]");
  MethodTable mt(t);
  uint32_t simple = method_named(t, "simple"), sleep = method_named(t, "sleep");
  EXPECT_EQ(mt.entries()[simple].total_ns, 303);  // not 303 + 203 + 100
  EXPECT_EQ(mt.entries()[simple].self_ns, 3);
  EXPECT_TRUE(mt.entries()[simple].recursive);
  EXPECT_FALSE(mt.entries()[sleep].recursive);
  EXPECT_EQ(mt.entries()[sleep].total_ns, 300);
  EXPECT_EQ(arcs_text(t, mt.callers(simple)), "<main>=303 simple=203");
  EXPECT_EQ(arcs_text(t, mt.callees(simple)), "sleep=300 simple=203");
  EXPECT_EQ(arcs_text(t, mt.callers(sleep)), "simple=300");
}

TEST(CallTree, MutualRecursion) {
  Profile p = make_profile({{"m.rb", "<main>"}, {"m.rb", "a"}, {"m.rb", "b"}},
                           {{{2, 1, 2, 1, 0}, 7}, {{1, 2, 1, 0}, 5}, {{2, 1, 0}, 3}}, {}, false);
  CallTree t(p, {});
  EXPECT_EQ(shape(t), "[root](15/0)[<main>(15/0)[a(15/0)[b(15/3)[a*(12/5)[b*(7/7)]]]]]");
  MethodTable mt(t);
  uint32_t a = method_named(t, "a"), b = method_named(t, "b");
  EXPECT_EQ(mt.entries()[a].total_ns, 15);
  EXPECT_EQ(mt.entries()[b].total_ns, 15);
  EXPECT_EQ(mt.entries()[a].self_ns, 5);
  EXPECT_EQ(mt.entries()[b].self_ns, 10);
  EXPECT_TRUE(mt.entries()[a].recursive);
  EXPECT_TRUE(mt.entries()[b].recursive);
  EXPECT_EQ(arcs_text(t, mt.callees(a)), "b=15");
  EXPECT_EQ(arcs_text(t, mt.callers(a)), "<main>=15 b=12");
  EXPECT_EQ(arcs_text(t, mt.callees(b)), "a=12");
}

TEST(CallTree, VmStatesAreLeavesOnce) {
  Profile p = make_profile({{"io.rb", "<main>"}, {"io.rb", "read"}, {"<VM>", "[GVL wait]"}},
                           {{{1, 0}, 4, 1, 0, kGvlBlocked}, {{1, 0}, 6}, {{0}, 2, 1, 0, kGcMark}, {{2, 1, 0}, 5, 1, 0, kGvlWait}}, {}, false);
  CallTree t(p, {});
  // The stack that ends in [GVL wait] already (vm_state_frames) gets no second one.
  EXPECT_EQ(shape(t), "[root](17/0)[<main>(17/0)[read(15/6)[[GVL wait](5/5) [GVL blocked](4/4)] [GC marking](2/2)]]");
  EXPECT_EQ(t.methods()[method_named(t, "[GVL blocked]")].path, "<VM>");
}

// Bottom-up: the running functions are the roots, each child a caller of the one above; a VM
// state is no frame (a stack recorded with its state's frame keeps it, as a root).
TEST(CallTree, InvertedRootsAreTheRunningFunctions) {
  CallTreeOptions inverted;
  inverted.inverted = true;
  EXPECT_EQ(shape(CallTree(process_validate_save(), inverted)),
            "[root](66/0)[validate(30/0)[save(20/0)[process(20/0)[<main>(20/20)]] process(10/0)[<main>(10/10)]] "
            "write(30/0)[save(30/0)[process(30/0)[<main>(30/30)]]] process(5/0)[<main>(5/5)] save(1/0)[process(1/0)[<main>(1/1)]]]");
  Profile p = make_profile({{"io.rb", "<main>"}, {"io.rb", "read"}, {"<VM>", "[GVL wait]"}},
                           {{{1, 0}, 4, 1, 0, kGvlBlocked}, {{1, 0}, 6}, {{0}, 2, 1, 0, kGcMark}, {{2, 1, 0}, 5, 1, 0, kGvlWait}}, {}, false);
  EXPECT_EQ(shape(CallTree(p, inverted)), "[root](17/0)[read(10/0)[<main>(10/10)] [GVL wait](5/0)[read(5/0)[<main>(5/5)]] <main>(2/2)]");
}

TEST(CallTree, ThreadsMergedOrSeparateAndLabelFilter) {
  Profile p = make_profile({{"t.rb", "work"}, {"t.rb", "main"}},
                           {{{0, 1}, 10, 1, 0}, {{0}, 7, 2, 1}, {{}, 1, 2, 0}}, {{}, {{"endpoint", "/a", false}}}, false);
  EXPECT_EQ(shape(CallTree(p, {})), "[root](18/1)[main(10/0)[work(10/10)] work(7/7)]");
  CallTreeOptions separate;
  separate.separate_threads = true;
  CallTree t(p, separate);
  EXPECT_EQ(shape(t), "[root](18/0)[[thread 1](10/0)[main(10/0)[work(10/10)]] [thread 2](8/1)[work(7/7)]]");
  MethodTable mt(t);
  EXPECT_EQ(arcs_text(t, mt.callers(method_named(t, "work"))), "main=10 [thread 2]=7");
  CallTreeOptions filtered;
  filtered.filter.labels = labels({{"endpoint", "/a", false}});
  EXPECT_EQ(shape(CallTree(p, filtered)), "[root](7/0)[work(7/7)]");
}

// The tree is read off the sorted paths (nothing stored per node): on random profiles with
// few methods (recursion, shared prefixes, equal and empty paths), every node against a tree
// made the obvious way, a map from call path to weights.
TEST(CallTree, MatchesCallPathsCountedOneByOne) {
  std::mt19937 rng(7);
  for (int round = 0; round < 60; round++) {
    std::vector<FrameSpec> frames;
    int method_count = 1 + static_cast<int>(rng() % 5);
    for (int m = 0; m < method_count; m++) frames.push_back({"r.rb", "m" + std::to_string(m), 1 + m});
    std::vector<SampleSpec> samples;
    int sample_count = static_cast<int>(rng() % 40);
    for (int i = 0; i < sample_count; i++) {
      SampleSpec s{{}, 1 + static_cast<int64_t>(rng() % 50)};
      size_t depth = rng() % 7;
      for (size_t d = 0; d < depth; d++) s.frames.push_back(rng() % method_count);
      s.thread_seq = 1 + rng() % 3;
      s.state = rng() % 4 == 0 ? kGvlWait : kRunning;
      samples.push_back(s);
    }
    Profile p = make_profile(frames, samples, {}, false);
    CallTreeOptions options;
    options.separate_threads = round % 2 == 1;
    CallTree t(p, options);
    const MethodPaths& paths = t.paths();
    std::map<std::vector<uint32_t>, std::pair<int64_t, int64_t>> expected;  // call path -> (total, self)
    for (uint32_t i = 0; i < paths.count(); i++) {
      std::vector<uint32_t> path(paths.begin(i), paths.begin(i) + paths.size(i));
      for (size_t d = 0; d <= path.size(); d++) expected[std::vector<uint32_t>(path.begin(), path.begin() + d)].first += paths.weight(i);
      expected[path].second += paths.weight(i);
    }
    ASSERT_EQ(t.size(), expected.size()) << "round " << round;
    std::vector<std::vector<uint32_t>> call_path(t.size());
    for (uint32_t id = 0; id < t.size(); id++) {
      CallTree::Node n = t.node(id);
      if (id == CallTree::kRoot) {
        EXPECT_EQ(n.parent, CallTree::kNoNode);
        EXPECT_EQ(n.method, kRootMethod);
      } else {
        ASSERT_LT(n.parent, id);  // depth-first order
        call_path[id] = call_path[n.parent];
        call_path[id].push_back(n.method);
      }
      const std::vector<uint32_t>& path = call_path[id];
      ASSERT_EQ(expected.count(path), 1u) << "round " << round << " node " << id;
      EXPECT_EQ(n.total_ns, expected[path].first) << "round " << round << " node " << id;
      EXPECT_EQ(n.self_ns, expected[path].second) << "round " << round << " node " << id;
      EXPECT_EQ(n.depth, path.size());
      bool repeated = !path.empty() && std::find(path.begin(), path.end() - 1, path.back()) != path.end() - 1;
      EXPECT_EQ(n.recursive, repeated);
      expected.erase(path);  // each call path once
      std::vector<uint32_t> children;
      t.children(id, children);
      size_t expected_children = 0;
      for (uint32_t c = id + 1; c < t.size(); c++) expected_children += t.node(c).parent == id;
      EXPECT_EQ(children.size(), expected_children);
      for (size_t k = 0; k < children.size(); k++) {
        EXPECT_EQ(t.node(children[k]).parent, id);
        if (k > 0) {
          EXPECT_GE(t.node(children[k - 1]).total_ns, t.node(children[k]).total_ns);
        }
      }
    }
  }
}

TEST(CallTree, StartLineNamesTheMethod) {
  Profile p = process_validate_save();
  for (uint32_t i = 0; i < p.frames.size(); i++) {
    if (p.frames[i].label == "save") p.frames.at(i).start_line = 6;
  }
  CallTree t(p, {});
  EXPECT_EQ(t.methods()[method_named(t, "save")].line, 6);
}

TEST(Callgrind, ExactFile) {
  Profile p = make_profile({{"a.rb", "main", 3}, {"a.rb", "f", 10}, {"b.rb", "g", 20}, {"a.rb", "main", 4}},
                           {{{2, 1, 0}, 5}, {{1, 0}, 2}, {{2, 3}, 1}, {{}, 1}});
  EXPECT_EQ(callgrind(p),
            "# callgrind format\nversion: 1\ncreator: rperf\npositions: line\nevent: wall_ns : wall time (ns)\nevents: wall_ns\n"
            "\nfl=(1) ???\nfn=(1) [root]\n0 1\ncfi=(2) a.rb\ncfn=(2) main\ncalls=3 3\n0 8\n"
            "\nfl=(2)\nfn=(2)\n3 0\ncfi=(2)\ncfn=(3) f\ncalls=2 10\n3 7\ncfi=(3) b.rb\ncfn=(4) g\ncalls=1 20\n4 1\n"
            "\nfl=(2)\nfn=(3)\n10 2\ncfi=(3)\ncfn=(4)\ncalls=1 20\n10 5\n"
            "\nfl=(3)\nfn=(4)\n20 6\n"
            "\ntotals: 9\n");
}

TEST(Callgrind, MethodLevelProfilesPlaceCostsAtTheMethodsLine) {
  Profile p = make_profile({{"a.rb", "main"}, {"a.rb", "f"}}, {{{1, 0}, 5}}, {}, false);
  p.frames.at(1).start_line = 10;
  std::string s = callgrind(p);
  EXPECT_NE(s.find("\nfl=(2)\nfn=(2)\ncfi=(2)\ncfn=(3) f\ncalls=1 10\n0 5\n"), std::string::npos) << s;  // main: no line known
  EXPECT_NE(s.find("\nfl=(2)\nfn=(3)\n10 5\n"), std::string::npos) << s;
}

// What callgrind_annotate --inclusive=yes computes: a called function's inclusive cost is the
// sum of the calls into it; one never called (the root) has self + calls out.
std::map<std::string, int64_t> annotate_inclusive(const std::string& file) {
  std::map<std::string, int64_t> self_and_out, called;
  std::map<std::string, std::string> names;
  std::istringstream in(file);
  std::string line, fn, cfn;
  bool call_cost = false;
  auto name = [&](std::string text) {
    std::string id = text.substr(0, text.find(')') + 1);
    if (text.size() > id.size()) names[id] = text.substr(id.size() + 1);
    return names[id];
  };
  while (std::getline(in, line)) {
    if (line.rfind("fn=", 0) == 0) fn = name(line.substr(3));
    else if (line.rfind("cfn=", 0) == 0) cfn = name(line.substr(4));
    else if (line.rfind("calls=", 0) == 0) call_cost = true;
    else if (!line.empty() && isdigit(static_cast<unsigned char>(line[0]))) {
      int64_t cost = std::stoll(line.substr(line.find(' ') + 1));
      self_and_out[fn] += cost;
      if (call_cost) called[cfn] += cost;
      call_cost = false;
    }
  }
  for (const auto& [f, cost] : called) self_and_out[f] = cost;
  return self_and_out;
}

TEST(Callgrind, InclusiveCostsAreTheMethodTotals) {
  for (const Profile& p : {process_validate_save(), simple_recursion(),
                           make_profile({{"m.rb", "<main>"}, {"m.rb", "a"}, {"m.rb", "b"}},
                                        {{{2, 1, 2, 1, 0}, 7}, {{1, 2, 1, 0}, 5}, {{2, 1, 0}, 3}, {{1}, 4, 1, 0, kGcSweep}}, {}, false)}) {
    CallTree t(p, {});
    MethodTable mt(t);
    std::map<std::string, int64_t> inclusive = annotate_inclusive(callgrind(p));
    EXPECT_EQ(inclusive["[root]"], t.total_ns());
    for (uint32_t m = 1; m < t.methods().size(); m++) {
      EXPECT_EQ(inclusive[t.methods()[m].label], mt.entries()[m].total_ns) << t.methods()[m].label;
    }
  }
}

// MethodTable::arcs_of (the arcs of a few methods, read off the paths) and callers()/callees()
// (those of every method) against the arcs counted by hand: the same arcs in the same order, on
// random profiles with recursion and equal weights; with a limit, the heaviest as many of them,
// still counted in full; a method named twice, its arcs twice.
TEST(MethodTable, ArcsOfAFewMethodsAreTheirArcsInOrder) {
  std::mt19937 rng(11);
  for (int round = 0; round < 80; round++) {
    std::vector<FrameSpec> frames;
    int method_count = 1 + static_cast<int>(rng() % 6);
    for (int m = 0; m < method_count; m++) frames.push_back({"r.rb", "m" + std::to_string(m), 1 + m});
    std::vector<SampleSpec> samples;
    int sample_count = static_cast<int>(rng() % 40);
    for (int i = 0; i < sample_count; i++) {
      SampleSpec s{{}, 1 + static_cast<int64_t>(rng() % 4)};  // few weights: many ties
      size_t depth = rng() % 7;
      for (size_t d = 0; d < depth; d++) s.frames.push_back(rng() % method_count);
      samples.push_back(s);
    }
    Profile p = make_profile(frames, samples, {}, false);
    CallTree t(p, CallTreeOptions());
    MethodTable mt(t);
    std::vector<uint32_t> chosen;
    for (uint32_t m = 0; m < mt.entries().size(); m++) {
      if (rng() % 2) chosen.push_back(m);
    }
    if (!chosen.empty() && rng() % 2) chosen.push_back(chosen[rng() % chosen.size()]);
    const size_t limit = rng() % 4;
    std::vector<MethodTable::MethodArcs> few = mt.arcs_of(chosen);
    std::vector<MethodTable::MethodArcs> cut = mt.arcs_of(chosen, limit);
    ASSERT_EQ(few.size(), chosen.size());
    ASSERT_EQ(cut.size(), chosen.size());
    for (size_t k = 0; k < chosen.size(); k++) {
      MethodTable::Arcs callers, callees;
      arcs_by_hand(t.paths(), chosen[k], callers, callees);
      EXPECT_EQ(mt.callers(chosen[k]), callers) << "round " << round << " method " << chosen[k];
      EXPECT_EQ(mt.callees(chosen[k]), callees) << "round " << round << " method " << chosen[k];
      EXPECT_EQ(few[k].callers, callers) << "round " << round << " method " << chosen[k];
      EXPECT_EQ(few[k].callees, callees) << "round " << round << " method " << chosen[k];
      EXPECT_EQ(few[k].caller_count, callers.size());
      EXPECT_EQ(few[k].callee_count, callees.size());
      callers.resize(std::min(limit, callers.size()));
      callees.resize(std::min(limit, callees.size()));
      EXPECT_EQ(cut[k].callers, callers) << "round " << round << " limit " << limit;
      EXPECT_EQ(cut[k].callees, callees) << "round " << round << " limit " << limit;
      EXPECT_EQ(cut[k].caller_count, few[k].caller_count);
      EXPECT_EQ(cut[k].callee_count, few[k].callee_count);
    }
  }
}

// MethodTable::view (the Viewer's methods tab) on the seed's example: the entries above the
// threshold in the table's order, each method named once in order of first use, arcs heaviest
// first and cut at max_arcs and at the threshold, their counts whole.
TEST(MethodTable, ViewNamesEachMethodOnceAndCutsArcs) {
  Profile p = process_validate_save();
  CallTree t(p, CallTreeOptions());
  MethodTable mt(t);
  // Totals: process 66 (its two lines are one method), <main> 66, save 51, validate 30, write 30.
  MethodTable::View v = mt.view(t.methods(), 6, 10, 1);
  EXPECT_EQ(5u, v.method_count);
  auto label = [&](uint32_t index) { return t.methods()[v.methods[index]].label; };
  std::vector<std::string> rows;
  for (const MethodTable::View::Row& r : v.rows) {
    std::string row = label(r.method) + " " + std::to_string(r.total_ns) + "/" + std::to_string(r.self_ns) + " <";
    for (const auto& [m, ns] : r.callers) row += label(m) + "=" + std::to_string(ns);
    row += " >";
    for (const auto& [m, ns] : r.callees) row += label(m) + "=" + std::to_string(ns);
    rows.push_back(row + " " + std::to_string(r.caller_count) + "," + std::to_string(r.callee_count));
  }
  // One arc each (max_arcs 1): process's heavier callee is save (51), not validate (10).
  EXPECT_EQ((std::vector<std::string>{"process 66/5 <<main>=66 >save=51 1,2", "<main> 66/0 < >process=66 0,1", "save 51/1 <process=51 >write=30 1,2",
                                      "validate 30/30 <save=20 > 2,0", "write 30/30 <save=30 > 1,0"}),
            rows);
  std::vector<std::string> named;
  for (size_t i = 0; i < v.methods.size(); i++) named.push_back(label(static_cast<uint32_t>(i)));
  EXPECT_EQ((std::vector<std::string>{"process", "<main>", "save", "write", "validate"}), named) << "each once, in order of first use";
  MethodTable::View heavy = mt.view(t.methods(), 60, 10, 20);
  ASSERT_EQ(2u, heavy.rows.size()) << "process and <main> weigh at least 60";
  EXPECT_TRUE(heavy.rows[0].callees.empty()) << "process's callees weigh 51 and 10: under the threshold";
  EXPECT_EQ(2u, heavy.rows[0].callee_count);
  EXPECT_EQ(2u, heavy.methods.size()) << "no arc names a method the rows do not";
}
