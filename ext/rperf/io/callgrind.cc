// Callgrind format (KCachegrind, QCachegrind, callgrind_annotate): for each method, its self
// cost by line and its calls, each with the call site's line and an inclusive cost.
//
// Readers take a called function's inclusive cost as the sum of the costs of the calls into it
// (callgrind_annotate --inclusive=yes does exactly that), so each sample is charged once per
// method, to the call into the method's outermost occurrence: recursion is counted once, and
// every method's inclusive cost is its total of the method table. A synthetic [root] method
// calls each stack's outermost frame, so every real method is a called one and [root]'s
// inclusive cost (self + calls) is the profile's total. Call counts are sample counts: a
// sampling profiler does not see calls.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "io/encoders.hh"
#include "io/output.hh"
#include "views/method_paths.hh"

namespace rperf {

namespace {

struct SelfCost {
  uint32_t method;
  int32_t line;
  int64_t ns;
};

struct CallCost {
  uint32_t caller;
  int32_t line;  // in the caller
  uint32_t callee;
  int64_t ns;
  int64_t samples;
};

// Names are one line each; a file name is never empty.
std::string callgrind_name(const std::string& s, const char* if_empty) {
  if (s.empty()) return if_empty;
  std::string out = valid_utf8(s);
  for (char& c : out) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return out;
}

// Name compression of the format: "(id) name" the first time, "(id)" afterwards. Files get
// their ids by path, once per method.
class NameWriter {
 public:
  NameWriter(Output& out, const std::vector<Method>& methods)
      : out_(out), methods_(methods), file_of_method_(methods.size(), 0), fn_seen_(methods.size(), false) {
    std::unordered_map<std::string, uint32_t> file_ids;
    for (size_t m = 0; m < methods.size(); m++) {
      file_of_method_[m] = file_ids.emplace(methods[m].path, static_cast<uint32_t>(file_ids.size() + 1)).first->second;
    }
    file_seen_.assign(file_ids.size() + 1, false);
  }

  void file(const char* key, uint32_t m) {
    out_.append(key);
    uint32_t id = file_of_method_[m];
    write(id, file_seen_[id], methods_[m].path);
    file_seen_[id] = true;
  }
  void function(const char* key, uint32_t m) {
    out_.append(key);
    write(m + 1, fn_seen_[m], methods_[m].label);
    fn_seen_[m] = true;
  }

 private:
  void write(uint32_t id, bool seen, const std::string& name) {
    out_.append('(');
    out_.append_int(id);
    out_.append(')');
    if (!seen) {
      out_.append(' ');
      out_.append(callgrind_name(name, "???"));
    }
    out_.append('\n');
  }

  Output& out_;
  const std::vector<Method>& methods_;
  std::vector<uint32_t> file_of_method_;
  std::vector<bool> file_seen_;
  std::vector<bool> fn_seen_;
};

}  // namespace

void encode_callgrind(const Profile& p, Output& out) {
  MethodStacks stacks(p);
  const std::vector<Method>& methods = stacks.methods();
  std::vector<SelfCost> selfs;
  std::vector<CallCost> calls;
  HashIndex self_index, call_index;
  auto add_self = [&](uint32_t method, int32_t line, int64_t ns) {
    uint64_t h = mix64((static_cast<uint64_t>(method) << 32) | static_cast<uint32_t>(line));
    uint32_t id = self_index.find(h, [&](uint32_t i) { return selfs[i].method == method && selfs[i].line == line; });
    if (id == HashIndex::kNotFound) {
      self_index.insert(h, static_cast<uint32_t>(selfs.size()));
      selfs.push_back(SelfCost{method, line, ns});
    } else {
      selfs[id].ns += ns;
    }
  };
  auto add_call = [&](uint32_t caller, int32_t line, uint32_t callee, int64_t ns) {
    uint64_t h = mix64(mix64((static_cast<uint64_t>(caller) << 32) | static_cast<uint32_t>(line)) ^ callee);
    uint32_t id = call_index.find(h, [&](uint32_t i) { return calls[i].caller == caller && calls[i].line == line && calls[i].callee == callee; });
    if (id == HashIndex::kNotFound) {
      call_index.insert(h, static_cast<uint32_t>(calls.size()));
      calls.push_back(CallCost{caller, line, callee, ns, 1});
    } else {
      calls[id].ns += ns;
      calls[id].samples++;
    }
  };

  std::vector<CallSite> sites;
  std::vector<uint64_t> seen(methods.size(), 0);  // == sample_no: charged in this sample already
  uint64_t sample_no = 0;
  int64_t total = 0;
  for (const Sample& s : p.samples) {
    sample_no++;
    total += s.weight_ns;
    stacks.stack_of(s, sites);
    CallSite caller{kRootMethod, 0};
    for (const CallSite& site : sites) {
      if (seen[site.method] != sample_no) {
        seen[site.method] = sample_no;
        add_call(caller.method, caller.line, site.method, s.weight_ns);
      }
      caller = site;
    }
    add_self(caller.method, caller.line, s.weight_ns);
  }
  std::sort(selfs.begin(), selfs.end(), [](const SelfCost& a, const SelfCost& b) {
    return a.method != b.method ? a.method < b.method : a.line < b.line;
  });
  std::sort(calls.begin(), calls.end(), [](const CallCost& a, const CallCost& b) {
    if (a.caller != b.caller) return a.caller < b.caller;
    return a.line != b.line ? a.line < b.line : a.callee < b.callee;
  });

  std::string event = p.mode() + "_ns";
  out.append("# callgrind format\nversion: 1\ncreator: rperf\npositions: line\nevent: " + event + " : " +
             (p.mode() == "wall" ? "wall time" : "CPU time") + " (ns)\nevents: " + event + "\n");
  NameWriter names(out, methods);
  size_t next_self = 0, next_call = 0;
  for (uint32_t m = 0; m < methods.size() && !out.failed(); m++) {
    bool has_self = next_self < selfs.size() && selfs[next_self].method == m;
    bool has_calls = next_call < calls.size() && calls[next_call].caller == m;
    if (!has_self && !has_calls) continue;
    out.append('\n');
    names.file("fl=", m);
    names.function("fn=", m);
    // A method without self cost still gets a line of its own (cost 0): callgrind_annotate
    // stumbles over source files that have calls but no cost lines.
    if (!has_self && methods[m].line > 0) {
      out.append_int(methods[m].line);
      out.append(" 0\n");
    }
    for (; next_self < selfs.size() && selfs[next_self].method == m; next_self++) {
      out.append_int(selfs[next_self].line);
      out.append(' ');
      out.append_int(selfs[next_self].ns);
      out.append('\n');
    }
    for (; next_call < calls.size() && calls[next_call].caller == m; next_call++) {
      const CallCost& c = calls[next_call];
      names.file("cfi=", c.callee);
      names.function("cfn=", c.callee);
      out.append("calls=");
      out.append_int(c.samples);
      out.append(' ');
      out.append_int(methods[c.callee].line);
      out.append('\n');
      out.append_int(c.line);
      out.append(' ');
      out.append_int(c.ns);
      out.append('\n');
    }
  }
  out.append("\ntotals: ");
  out.append_int(total);
  out.append('\n');
}

}  // namespace rperf
