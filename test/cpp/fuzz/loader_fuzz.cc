// The loader's fuzz entry point: bytes -> load_json_profile or load_pprof_profile (told apart as
// Rperf.load tells them), then every model view the Viewer and the CLI build from a loaded
// profile (idle totals, stack tree, timeline bins, stack charts, call tree, method table,
// function totals, summary, encoders), so a value a reader let through reaches the code that
// would index or size something with it. Built with the C++ tests (and with ASan + UBSan in
// tmp/cpp-asan: script/asan runs it).
//
// LLVMFuzzerTestOneInput is libFuzzer's entry (clang++ -fsanitize=fuzzer,address -DRPERF_LIBFUZZER).
// Without libFuzzer, main() is a plain driver with its own seeded mutations:
//   rperf_loader_fuzz FILE...                          each file once
//   rperf_loader_fuzz --runs N [--seed S] FILE...      and N mutations of each (byte flips,
//                                                      truncations, splices, boundary integers)
// A case that fails is a crash (a sanitizer report); the failing mutation is saved as
// loader_fuzz-crash-<seed>-<run> in the working directory before it runs.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "io/encoders.hh"
#include "io/loader.hh"
#include "io/output.hh"
#include "profile/idle_wait.hh"
#include "profile/stack_tree.hh"
#include "profile/transform.hh"
#include "views/call_tree.hh"
#include "views/functions.hh"
#include "views/method_table.hh"
#include "views/stack_chart.hh"
#include "views/summary.hh"
#include "views/timeline_bins.hh"
#include "views/totals_diff.hh"

namespace {

void exercise(const rperf::Profile& p) {
  using namespace rperf;
  auto idle = std::make_shared<IdleSamples>(p);
  thread_idle_totals(p);
  StackTreeOptions tree_options;
  tree_options.max_samples = 1000;
  tree_options.max_timeline = 1000;
  tree_options.raw = p.timestamps;
  tree_options.idle = idle.get();
  std::vector<AllocationSample> allocations = p.aggregated_allocations();
  tree_options.allocations = &allocations;
  build_stack_tree(p, p.aggregated_samples(), tree_options);
  SampleFilter all;
  bin_timeline(p, all, 600, p.header.duration_ns.value_or(0));
  stack_charts(p, all, p.header.duration_ns.value_or(0));
  CallTreeOptions call_options;
  call_options.separate_threads = true;
  CallTree tree(p, call_options);
  MethodTable table(tree);
  FunctionTotals totals = function_totals(p, true);
  function_rows(p, totals);
  allocation_totals(p, true);
  summarize(p);
  encode_text(p, 20);
  encode_allocation_text(p, 20);
  encode_pprof(p, {});
  std::string json;
  {
    OutputOptions o;
    o.threads = 1;
    Output out(&json, o);
    encode_json(p, JsonValue(), out);
  }
  Profile folded = p;
  fold_lines(folded);
  aggregate(folded);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const char* bytes = reinterpret_cast<const char*>(data);
  rperf::Profile p;
  std::string error;
  bool loaded = rperf::sniff_file_kind(bytes, size) == rperf::FileKind::kPprof ? rperf::load_pprof_profile(bytes, size, p, error)
                                                                               : rperf::load_json_profile(bytes, size, p, error);
  if (loaded) exercise(p);
  return 0;
}

#ifndef RPERF_LIBFUZZER

namespace {

// Integers a hostile file puts where a count, an id or a time goes.
const char* const kBoundaries[] = {"-1", "-2", "0", "2147483647", "2147483648", "4294967295", "4294967296", "-2147483649",
                                   "9223372036854775807", "9223372036854775808", "-9223372036854775808", "1000000000000",
                                   "18446744073709551616", "1e308", "99999999999999999999999999999999"};

std::string mutate(const std::string& in, std::mt19937_64& rng) {
  std::string s = in;
  auto pick = [&](size_t n) { return n ? static_cast<size_t>(rng() % n) : 0; };
  switch (rng() % 5) {
    case 0:  // byte flips
      for (int i = 0, n = 1 + static_cast<int>(rng() % 8); i < n && !s.empty(); i++) s[pick(s.size())] ^= static_cast<char>(1 + rng() % 255);
      break;
    case 1:  // truncation
      s.resize(pick(s.size() + 1));
      break;
    case 2: {  // a splice: a run of the input copied over another place
      if (s.empty()) break;
      size_t from = pick(s.size()), len = 1 + pick(std::min<size_t>(s.size() - from, 64)), to = pick(s.size());
      s.insert(to, in.substr(from, len));
      break;
    }
    default: {  // a boundary integer in place of a number of the text
      std::vector<std::pair<size_t, size_t>> numbers;
      for (size_t i = 0; i < s.size();) {
        if ((s[i] >= '0' && s[i] <= '9') || (s[i] == '-' && i + 1 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '9')) {
          size_t j = i + 1;
          while (j < s.size() && s[j] >= '0' && s[j] <= '9') j++;
          numbers.emplace_back(i, j - i);
          i = j;
        } else {
          i++;
        }
      }
      if (numbers.empty()) break;
      auto [at, len] = numbers[pick(numbers.size())];
      s.replace(at, len, kBoundaries[pick(std::size(kBoundaries))]);
    }
  }
  return s;
}

bool read_file(const char* path, std::string& out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  out.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  return true;
}

void run(const std::string& bytes) { LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()); }

}  // namespace

int main(int argc, char** argv) {
  uint64_t runs = 0, seed = 1;
  std::vector<const char*> files;
  for (int i = 1; i < argc; i++) {
    if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) runs = std::strtoull(argv[++i], nullptr, 10);
    else if (std::strcmp(argv[i], "--seed") == 0 && i + 1 < argc) seed = std::strtoull(argv[++i], nullptr, 10);
    else files.push_back(argv[i]);
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: %s [--runs N] [--seed S] FILE...\n", argv[0]);
    return 2;
  }
  std::mt19937_64 rng(seed);
  uint64_t cases = 0;
  for (const char* path : files) {
    std::string in;
    if (!read_file(path, in)) {
      std::fprintf(stderr, "%s: cannot read\n", path);
      return 2;
    }
    run(in);
    cases++;
    // A gzip file's bytes are mutated as they are, or its content (the readers take both).
    std::string inflated, error;
    const char* content = in.data();
    size_t content_len = in.size();
    if (!rperf::inflate_if_gzip(content, content_len, inflated, error)) content_len = 0;
    std::string plain(content, content_len);
    for (uint64_t r = 0; r < runs; r++) {
      std::string m = mutate(rperf::is_gzip(in.data(), in.size()) && !plain.empty() && rng() % 2 ? plain : in, rng);
      std::string name = "loader_fuzz-crash-" + std::to_string(seed) + "-" + std::to_string(cases);
      {
        std::ofstream keep(name, std::ios::binary);  // the case about to run, for a crash
        keep << m;
      }
      run(m);
      std::remove(name.c_str());
      cases++;
    }
  }
  std::printf("loader_fuzz: %llu cases, seed %llu\n", static_cast<unsigned long long>(cases), static_cast<unsigned long long>(seed));
  return 0;
}

#endif
