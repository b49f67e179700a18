// Ruby binding of the call tree and the method table (views/call_tree.hh, method_table.hh):
// Rperf::Native::CallTree owns both, and the method paths they are built from. Ruby sees
// numbers: nodes and methods by id, which lib/rperf/api/call_tree.rb wraps in objects when asked (a
// large profile's tree has millions of nodes; a printer looks at a few).
#include <ruby/ruby.h>
#include <ruby/thread.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <new>

#include "profile/frame_category.hh"
#include "profile/idle_wait.hh"
#include "profile/thread_names.hh"
#include "profile/transform.hh"
#include "ruby/profile_binding.hh"
#include "ruby/values.hh"
#include "util/utf8.hh"
#include "views/call_tree.hh"
#include "views/method_table.hh"
#include "views/source_lines.hh"
#include "views/timeline_bins.hh"

namespace rperf {

namespace {

// The method paths are built with the object; the tree and the method table each on first
// use, from them (a method table never needs the tree).
struct CallTreeHolder {
  // What the paths' build needs once the GVL is released; owned here so a Ruby exception
  // leaks nothing.
  const Profile* profile = nullptr;
  CallTreeOptions options;
  bool out_of_memory = false;
  std::shared_ptr<const MethodPaths> paths;
  std::unique_ptr<CallTree> tree;
  std::unique_ptr<MethodTable> table;
  std::vector<uint32_t> children;  // #children's scratch: held here while Ruby may raise
};

void holder_free(void* p) { delete static_cast<CallTreeHolder*>(p); }
size_t holder_size(const void* p) {
  const auto* h = static_cast<const CallTreeHolder*>(p);
  size_t size = sizeof(*h);
  if (h->paths) size += h->paths->method_count_on_paths() * sizeof(uint32_t) + h->paths->count() * (sizeof(size_t) + sizeof(int64_t) + sizeof(uint32_t));
  if (h->tree) size += h->tree->bytes();
  if (h->table) size += h->table->bytes();
  return size;
}
const rb_data_type_t kCallTreeType = {"rperf/call_tree", {nullptr, holder_free, holder_size, nullptr, {nullptr}}, nullptr, nullptr, 0};
VALUE g_call_tree_class = Qnil;
VALUE g_node_info_class = Qnil;     // Native::CallTree::NodeInfo: a node's fields by name
VALUE g_method_entry_class = Qnil;  // Native::CallTree::MethodEntry: a method table entry's
VALUE g_method_info_class = Qnil;   // Native::CallTree::MethodInfo: a method's label, path, line

CallTreeHolder* holder(VALUE self) { return static_cast<CallTreeHolder*>(rb_check_typeddata(self, &kCallTreeType)); }

// Runs `build` on the holder (a rb_thread_call_without_gvl function), noting a failed
// allocation for the caller to raise once no C++ frame is left.
template <void (*build)(CallTreeHolder&)>
void* run_build(void* arg) {
  auto* h = static_cast<CallTreeHolder*>(arg);
  try {
    build(*h);
  } catch (const std::bad_alloc&) {
    h->out_of_memory = true;
  }
  return nullptr;
}

void raise_if_out_of_memory(CallTreeHolder* h) {
  if (!h->out_of_memory) return;
  h->out_of_memory = false;
  rb_memerror();
}

void build_paths(CallTreeHolder& h) { h.paths = std::make_shared<const MethodPaths>(*h.profile, h.options); }
void build_tree(CallTreeHolder& h) { h.tree.reset(new CallTree(h.paths)); }
void build_table(CallTreeHolder& h) { h.table.reset(new MethodTable(h.paths)); }

const MethodPaths& paths_of(VALUE self) { return *holder(self)->paths; }

// The tree and the table are built holding the GVL: another thread asking for the same view
// meanwhile waits for it instead of building it too.
const CallTree& tree_of(VALUE self) {
  CallTreeHolder* h = holder(self);
  if (!h->tree) {
    run_build<build_tree>(h);
    raise_if_out_of_memory(h);
  }
  return *h->tree;
}

const MethodTable& table_of(VALUE self) {
  CallTreeHolder* h = holder(self);
  if (!h->table) {
    run_build<build_table>(h);
    raise_if_out_of_memory(h);
  }
  return *h->table;
}

uint32_t checked_id(VALUE id, size_t count, const char* what) {
  long i = NUM2LONG(id);
  if (i < 0 || static_cast<size_t>(i) >= count) rb_raise(rb_eIndexError, "rperf: no %s %ld", what, i);
  return static_cast<uint32_t>(i);
}

// A sorted Array of thread_seqs or label set ids, into `ids` (owned by a Ruby object: the
// conversions may raise).
void read_ids(VALUE ary, const char* what, std::vector<uint32_t>& ids) {
  if (!RB_TYPE_P(ary, T_ARRAY)) rb_raise(rb_eTypeError, "rperf: %s must be an Array of Integers", what);
  for (long i = 0; i < RARRAY_LEN(ary); i++) ids.push_back(NUM2UINT(RARRAY_AREF(ary, i)));
  std::sort(ids.begin(), ids.end());
}

// `select`: {thread: N, hide: [N, ...], label_sets: [id, ...], range: [from_ns, to_ns],
// idle: true (the idle samples left out: the profile's IdleSamples, made once per profile)},
// each optional (SampleFilter in profile/sample_filter.hh), into the holder's filter.
void read_select(VALUE select, ProfileHolder* holder, SampleFilter& f) {
  Check_Type(select, T_HASH);
  const Profile& p = holder->profile;
  f.hide_idle = RTEST(rb_hash_lookup(select, ID2SYM(rb_intern("idle"))));
  if (f.hide_idle) without_cxx_exceptions([&] { f.share_idle(idle_samples_of(holder)); });
  VALUE thread = rb_hash_lookup(select, ID2SYM(rb_intern("thread")));
  VALUE hide = rb_hash_lookup(select, ID2SYM(rb_intern("hide")));
  VALUE sets = rb_hash_lookup(select, ID2SYM(rb_intern("label_sets")));
  VALUE range = rb_hash_lookup(select, ID2SYM(rb_intern("range")));
  if (!NIL_P(thread)) {
    f.by_thread = true;
    f.thread = NUM2UINT(thread);
  }
  if (!NIL_P(hide)) read_ids(hide, "hide:", f.hidden_threads);
  if (!NIL_P(sets)) {
    f.by_label_sets = true;
    read_ids(sets, "label_sets:", f.label_sets);
  }
  if (!NIL_P(range)) {
    if (!RB_TYPE_P(range, T_ARRAY) || RARRAY_LEN(range) != 2) rb_raise(rb_eTypeError, "rperf: range: must be [from_ns, to_ns]");
    if (!p.timestamps) rb_raise(rb_eArgError, "rperf: a time range needs the profile's raw samples (aggregate: false)");
    f.by_range = true;
    f.from_ns = NUM2LL(RARRAY_AREF(range, 0));
    f.to_ns = NUM2LL(RARRAY_AREF(range, 1));
  }
}

// One option of Native::CallTree.build's Hash, or Qnil.
VALUE build_option(VALUE options, const char* name) { return rb_hash_lookup(options, ID2SYM(rb_intern(name))); }

// Native::CallTree.build(profile, {threads: :merge|:separate, filter:, select:, inverted:}) ->
// CallTree. filter: nil or a Hash of labels every sample kept must carry (values compared as
// Strings); select: nil or the Viewer's filters (read_select); inverted: the bottom-up tree.
VALUE call_tree_s_build(VALUE klass, VALUE profile, VALUE options) {
  ProfileHolder* p = holder_of(profile);
  Check_Type(options, T_HASH);
  static const char* const kKeys[] = {"threads", "filter", "select", "inverted"};
  VALUE keys = rb_funcall(options, rb_intern("keys"), 0);
  for (long i = 0; i < RARRAY_LEN(keys); i++) {
    bool known = false;
    for (const char* k : kKeys) known = known || RARRAY_AREF(keys, i) == ID2SYM(rb_intern(k));
    if (!known) rb_raise(rb_eArgError, "rperf: unknown call tree option %" PRIsVALUE, rb_inspect(RARRAY_AREF(keys, i)));
  }
  VALUE threads = build_option(options, "threads"), filter = build_option(options, "filter"), select = build_option(options, "select");
  if (!NIL_P(threads) && threads != ID2SYM(rb_intern("merge")) && threads != ID2SYM(rb_intern("separate"))) {
    rb_raise(rb_eArgError, "rperf: threads: must be :merge or :separate");
  }
  if (!NIL_P(filter)) Check_Type(filter, T_HASH);
  auto* h = new CallTreeHolder();
  VALUE obj = TypedData_Wrap_Struct(klass, &kCallTreeType, h);
  h->options.separate_threads = threads == ID2SYM(rb_intern("separate"));
  h->options.inverted = RTEST(build_option(options, "inverted"));
  if (!NIL_P(select)) read_select(select, p, h->options.filter);
  if (!NIL_P(filter)) merge_ruby_labels(filter, h->options.filter.labels);
  h->profile = &p->profile;
  // Other threads go on while the paths are built; `profile` stays alive (guarded below).
  rb_thread_call_without_gvl(run_build<build_paths>, h, nullptr, nullptr);
  h->profile = nullptr;
  raise_if_out_of_memory(h);
  RB_GC_GUARD(profile);
  return obj;
}

VALUE call_tree_method_count(VALUE self) { return SIZET2NUM(paths_of(self).methods().size()); }

// #method_info(id) -> Native::CallTree::MethodInfo (label, path, line)
VALUE call_tree_method_info(VALUE self, VALUE id) {
  const std::vector<Method>& methods = paths_of(self).methods();
  const Method& m = methods[checked_id(id, methods.size(), "method")];
  return rb_struct_new(g_method_info_class, utf8_string(m.label), utf8_string(m.path), INT2NUM(m.line));
}

VALUE call_tree_node_count(VALUE self) { return SIZET2NUM(tree_of(self).size()); }

// #total_ns -> the weight of the samples kept (the root's total), without building the tree.
VALUE call_tree_total_ns(VALUE self) { return LL2NUM(paths_of(self).total_ns()); }

// #node(id) -> Native::CallTree::NodeInfo (method_id, parent_id: nil for the root, total_ns,
// self_ns, recursive, depth).
VALUE call_tree_node(VALUE self, VALUE id) {
  const CallTree& t = tree_of(self);
  uint32_t node = checked_id(id, t.size(), "node");
  CallTree::Node n = t.node(node);
  VALUE parent = n.parent == CallTree::kNoNode ? Qnil : UINT2NUM(n.parent);
  return rb_struct_new(g_node_info_class, UINT2NUM(n.method), parent, LL2NUM(n.total_ns), LL2NUM(n.self_ns), n.recursive ? Qtrue : Qfalse,
                       UINT2NUM(n.depth));
}

// #children(id) -> node ids, heaviest first. Sorted into the holder's scratch vector: no C++
// object of this frame is alive when a Ruby call may raise.
VALUE call_tree_children(VALUE self, VALUE id) {
  const CallTree& t = tree_of(self);
  uint32_t node = checked_id(id, t.size(), "node");
  std::vector<uint32_t>& ids = holder(self)->children;
  without_cxx_exceptions([&] { t.children(node, ids); });
  VALUE out = rb_ary_new_capa(static_cast<long>(ids.size()));
  for (uint32_t child : ids) rb_ary_push(out, UINT2NUM(child));
  return out;
}

// The entries of `ids` as Native::CallTree::MethodEntry (method_id, self_ns, total_ns, recursive).
VALUE entries_value(const MethodTable& mt, const std::vector<uint32_t>& ids) {
  VALUE out = rb_ary_new_capa(static_cast<long>(ids.size()));
  for (uint32_t id : ids) {
    const MethodTable::Entry& e = mt.entries()[id];
    rb_ary_push(out, rb_struct_new(g_method_entry_class, UINT2NUM(id), LL2NUM(e.self_ns), LL2NUM(e.total_ns), e.recursive ? Qtrue : Qfalse));
  }
  return out;
}

struct IdsQuery {  // owned by a Ruby object: the conversions may raise
  std::vector<uint32_t> ids;
};
void ids_query_free(void* p) { delete static_cast<IdsQuery*>(p); }
const rb_data_type_t kIdsQueryType = {"rperf/ids_query", {nullptr, ids_query_free, nullptr, nullptr, {nullptr}}, nullptr, nullptr, 0};

// #method_entries -> [MethodEntry, ...] of the methods sampled in MethodTable::order (heaviest
// total first, then self; then label and path, as String#<=>).
VALUE call_tree_method_entries(VALUE self) {
  const MethodTable& mt = table_of(self);
  auto* q = new IdsQuery();
  VALUE owner = TypedData_Wrap_Struct(rb_cObject, &kIdsQueryType, q);
  without_cxx_exceptions([&] { q->ids = mt.order(paths_of(self).methods()); });
  VALUE out = entries_value(mt, q->ids);
  RB_GC_GUARD(owner);
  return out;
}

// #heaviest_entries(min_ns, max_methods) -> [[MethodEntry, ...], method_count]: the entries
// MethodTable::heaviest picks, in the table's order, and how many the table has.
VALUE call_tree_heaviest_entries(VALUE self, VALUE min_ns, VALUE max_methods) {
  int64_t min = NUM2LL(min_ns);
  size_t max = NUM2SIZET(max_methods);
  const MethodTable& mt = table_of(self);
  auto* q = new IdsQuery();
  VALUE owner = TypedData_Wrap_Struct(rb_cObject, &kIdsQueryType, q);
  size_t count = 0;
  without_cxx_exceptions([&] {
    q->ids = mt.order(paths_of(self).methods());
    count = q->ids.size();
    q->ids = mt.heaviest(q->ids, min, max);
  });
  VALUE out = rb_ary_new_from_args(2, entries_value(mt, q->ids), SIZET2NUM(count));
  RB_GC_GUARD(owner);
  return out;
}

// Flat pairs: a method with thousands of callers costs no Array per caller. `limit` keeps the
// heaviest only: the viewer sends a few of a method's thousands.
VALUE pairs_value(const MethodTable::Arcs& arcs, size_t limit) {
  size_t count = std::min(arcs.size(), limit);
  VALUE out = rb_ary_new_capa(2 * static_cast<long>(count));
  for (size_t k = 0; k < count; k++) {
    rb_ary_push(out, UINT2NUM(arcs[k].first));
    rb_ary_push(out, LL2NUM(arcs[k].second));
  }
  return out;
}

size_t arc_limit(VALUE limit) {  // nil: all
  if (NIL_P(limit)) return SIZE_MAX;
  long n = NUM2LONG(limit);
  if (n < 0) rb_raise(rb_eArgError, "rperf: limit must be >= 0 (got %ld)", n);
  return static_cast<size_t>(n);
}

// The table with its arcs (made on first use).
const MethodTable& arcs_of(VALUE self) {
  const MethodTable& mt = table_of(self);
  without_cxx_exceptions([&] { mt.make_arcs(); });
  return mt;
}

// #callers(method_id, limit = nil) / #callees(method_id, limit = nil) -> [method_id, ns,
// method_id, ns, ...], heaviest first.
VALUE call_tree_callers(int argc, VALUE* argv, VALUE self) {
  VALUE method, limit;
  rb_scan_args(argc, argv, "11", &method, &limit);
  const MethodTable& mt = arcs_of(self);
  return pairs_value(mt.callers(checked_id(method, mt.entries().size(), "method")), arc_limit(limit));
}
VALUE call_tree_callees(int argc, VALUE* argv, VALUE self) {
  VALUE method, limit;
  rb_scan_args(argc, argv, "11", &method, &limit);
  const MethodTable& mt = arcs_of(self);
  return pairs_value(mt.callees(checked_id(method, mt.entries().size(), "method")), arc_limit(limit));
}

// #heaviest_arcs(method_ids, limit) -> per method [callers, callees, caller_count,
// callee_count]: the `limit` heaviest of each as #callers/#callees give them, and how many there
// are, without making every arc (MethodTable::arcs_of): what the Viewer's methods tab sends.
struct ArcsQuery {  // owned by a Ruby object: the conversions may raise
  std::vector<uint32_t> methods;
  std::vector<MethodTable::MethodArcs> arcs;
};
void arcs_query_free(void* p) { delete static_cast<ArcsQuery*>(p); }
const rb_data_type_t kArcsQueryType = {"rperf/arcs_query", {nullptr, arcs_query_free, nullptr, nullptr, {nullptr}}, nullptr, nullptr, 0};

VALUE call_tree_heaviest_arcs(VALUE self, VALUE method_ids, VALUE limit) {
  Check_Type(method_ids, T_ARRAY);
  const size_t n = arc_limit(limit);
  const MethodTable& mt = table_of(self);
  auto* q = new ArcsQuery();
  VALUE owner = TypedData_Wrap_Struct(rb_cObject, &kArcsQueryType, q);
  for (long i = 0; i < RARRAY_LEN(method_ids); i++) q->methods.push_back(checked_id(RARRAY_AREF(method_ids, i), mt.entries().size(), "method"));
  without_cxx_exceptions([&] { q->arcs = mt.arcs_of(q->methods, n); });
  VALUE out = rb_ary_new_capa(static_cast<long>(q->arcs.size()));
  for (const MethodTable::MethodArcs& a : q->arcs) {
    rb_ary_push(out, rb_ary_new_from_args(4, pairs_value(a.callers, n), pairs_value(a.callees, n),
                                          SIZET2NUM(a.caller_count), SIZET2NUM(a.callee_count)));
  }
  RB_GC_GUARD(owner);
  return out;
}

// #arc_counts(method_id) -> [callers, callees]: how many, without listing them.
VALUE call_tree_arc_counts(VALUE self, VALUE method) {
  const MethodTable& mt = arcs_of(self);
  uint32_t m = checked_id(method, mt.entries().size(), "method");
  return rb_ary_new_from_args(2, SIZET2NUM(mt.callers(m).size()), SIZET2NUM(mt.callees(m).size()));
}

// Native::Profile#timeline_bins(bins, min_end_ns, select): the Timeline tab's bins
// (views/timeline_bins.hh) of the samples `select` keeps (read_select; nil: all) ->
// {end_ns:, bins:, bin_ns:, kept_ns:, threads: [[thread_seq, [running, blocked, wait, gc]], ...]
// (each state an Array of ns per bin, rounded, or nil when all zero), leaf_names: [...],
// top: [[leaf name index, ...] per bin]}.
struct TimelineQuery {  // owned by a Ruby object: read_select and the conversions may raise
  SampleFilter filter;
  TimelineBins bins;
};
void timeline_query_free(void* p) { delete static_cast<TimelineQuery*>(p); }
const rb_data_type_t kTimelineQueryType = {"rperf/timeline_query", {nullptr, timeline_query_free, nullptr, nullptr, {nullptr}}, nullptr, nullptr, 0};

// A file's duration as the axis's least end: an Integer past int64 (a damaged file's header) is
// the largest, a negative one nothing; no RangeError.
int64_t min_end_of(VALUE min_end_ns) {
  if (RB_TYPE_P(min_end_ns, T_BIGNUM)) return RBIGNUM_POSITIVE_P(min_end_ns) ? INT64_MAX : 0;
  return NUM2LL(min_end_ns);
}

VALUE profile_timeline_bins(VALUE self, VALUE bins, VALUE min_end_ns, VALUE select) {
  ProfileHolder* p = holder_of(self);
  if (!p->profile.timestamps) rb_raise(rb_eArgError, "rperf: the timeline needs the profile's raw samples (aggregate: false)");
  long count = NUM2LONG(bins);
  if (count < 1 || count > 100000) rb_raise(rb_eArgError, "rperf: bins must be 1 to 100000, got %ld", count);
  int64_t min_end = min_end_of(min_end_ns);
  auto* q = new TimelineQuery();
  VALUE owner = TypedData_Wrap_Struct(0, &kTimelineQueryType, q);
  if (!NIL_P(select)) read_select(select, p, q->filter);
  without_cxx_exceptions([&] { q->bins = bin_timeline(p->profile, q->filter, static_cast<uint32_t>(count), min_end); });
  const TimelineBins& t = q->bins;
  VALUE threads = rb_ary_new_capa(static_cast<long>(t.threads.size()));
  for (size_t i = 0; i < t.threads.size(); i++) {
    VALUE states = rb_ary_new_capa(kTimelineStates);
    for (int s = 0; s < kTimelineStates; s++) {
      bool any = false;
      for (uint32_t b = 0; b < t.bins && !any; b++) any = t.at(i, s, b) > 0;
      if (!any) {
        rb_ary_push(states, Qnil);
        continue;
      }
      VALUE ns = rb_ary_new_capa(t.bins);
      for (uint32_t b = 0; b < t.bins; b++) rb_ary_push(ns, LL2NUM(std::llround(t.at(i, s, b))));
      rb_ary_push(states, ns);
    }
    rb_ary_push(threads, rb_ary_new_from_args(2, UINT2NUM(t.threads[i]), states));
  }
  VALUE names = rb_ary_new_capa(static_cast<long>(t.leaf_names.size()));
  for (const std::string& name : t.leaf_names) rb_ary_push(names, utf8_string(name));
  VALUE top = rb_ary_new_capa(t.bins);
  for (const std::vector<uint32_t>& leaves : t.top) {
    VALUE ids = rb_ary_new_capa(static_cast<long>(leaves.size()));
    for (uint32_t id : leaves) rb_ary_push(ids, UINT2NUM(id));
    rb_ary_push(top, ids);
  }
  VALUE out = rb_hash_new();
  rb_hash_aset(out, sym("end_ns"), LL2NUM(t.end_ns));
  rb_hash_aset(out, sym("bins"), UINT2NUM(t.bins));
  rb_hash_aset(out, sym("bin_ns"), DBL2NUM(t.bin_ns));
  rb_hash_aset(out, sym("kept_ns"), LL2NUM(t.kept_ns));
  rb_hash_aset(out, sym("threads"), threads);
  rb_hash_aset(out, sym("leaf_names"), names);
  rb_hash_aset(out, sym("top"), top);
  RB_GC_GUARD(owner);
  RB_GC_GUARD(self);
  return out;
}

// Native::Profile#selected(select) -> a new Native::Profile of the samples `select` keeps
// (read_select), each with its kept weight (select_samples in profile/transform.hh).
struct SelectQuery {  // owned by a Ruby object: read_select may raise
  SampleFilter filter;
};
void select_query_free(void* p) { delete static_cast<SelectQuery*>(p); }
const rb_data_type_t kSelectQueryType = {"rperf/select_query", {nullptr, select_query_free, nullptr, nullptr, {nullptr}}, nullptr, nullptr, 0};

VALUE profile_selected(VALUE self, VALUE select) {
  ProfileHolder* p = holder_of(self);
  auto* q = new SelectQuery();
  VALUE owner = TypedData_Wrap_Struct(0, &kSelectQueryType, q);
  read_select(select, p, q->filter);
  ProfileHolder* out = new_profile_holder();
  VALUE obj = wrap_profile(out);  // owns `out` from here
  without_cxx_exceptions([&] {
    out->profile = p->profile;
    select_samples(out->profile, q->filter);
  });
  RB_GC_GUARD(owner);
  RB_GC_GUARD(self);
  return obj;
}

// Native::Profile#frame_path?(path) -> whether `path` is exactly one of the profile's frame paths
// (views/source_lines.hh): the only files the Viewer's Source tab may read.
VALUE profile_frame_path_p(VALUE self, VALUE path) {
  ProfileHolder* p = holder_of(self);
  StringValue(path);
  bool found = false;
  without_cxx_exceptions([&] { found = has_frame_path(p->profile, std::string(RSTRING_PTR(path), static_cast<size_t>(RSTRING_LEN(path)))); });
  RB_GC_GUARD(path);
  return found ? Qtrue : Qfalse;
}

// Native::Profile#thread_totals -> [[thread_seq, total_ns, idle_ns, name(, ractor)], ...] by
// thread_seq: each thread's samples and the idle ones among them (profile/idle_wait.hh), for the
// Viewer's Threads tab and "hide idle threads", its last Thread#name (profile/thread_names.hh; nil
// without one), and for another Ractor's thread a fifth element, its Ractor's id.
struct ThreadTotalsQuery {  // owned by a Ruby object: the conversions may raise
  std::vector<ThreadIdleTotal> totals;
  std::vector<std::string> names;
};
void thread_totals_query_free(void* p) { delete static_cast<ThreadTotalsQuery*>(p); }
const rb_data_type_t kThreadTotalsQueryType = {"rperf/thread_totals_query", {nullptr, thread_totals_query_free, nullptr, nullptr, {nullptr}}, nullptr, nullptr, 0};

VALUE profile_thread_totals(VALUE self) {
  ProfileHolder* p = holder_of(self);
  auto* q = new ThreadTotalsQuery();
  VALUE owner = TypedData_Wrap_Struct(0, &kThreadTotalsQueryType, q);
  without_cxx_exceptions([&] {
    q->totals = thread_idle_totals(p->profile);
    const ThreadNames names(p->profile);
    for (const ThreadIdleTotal& t : q->totals) q->names.push_back(valid_utf8(names.of(t.thread_seq)));
  });
  VALUE out = rb_ary_new_capa(static_cast<long>(q->totals.size()));
  for (size_t i = 0; i < q->totals.size(); i++) {
    const ThreadIdleTotal& t = q->totals[i];
    const std::string& name = q->names[i];
    VALUE name_value = name.empty() ? Qnil : rb_utf8_str_new(name.data(), static_cast<long>(name.size()));
    VALUE row = rb_ary_new_from_args(4, UINT2NUM(t.thread_seq), LL2NUM(t.total_ns), LL2NUM(t.idle_ns), name_value);
    if (!t.ractor.empty()) rb_ary_push(row, rb_utf8_str_new(t.ractor.data(), static_cast<long>(t.ractor.size())));
    rb_ary_push(out, row);
  }
  RB_GC_GUARD(owner);
  return out;
}

// Native.frame_categories([[label, path], ...]): each frame's category name
// (FRAME_CATEGORIES, profile/frame_category.hh), for the Viewer's colours.
VALUE g_category_names = Qnil;

bool category_of(VALUE label, VALUE path, FrameCategory& out) {
  try {
    out = frame_category(std::string_view(RSTRING_PTR(label), RSTRING_LEN(label)), std::string_view(RSTRING_PTR(path), RSTRING_LEN(path)));
    return true;
  } catch (const std::bad_alloc&) {
    return false;
  }
}

VALUE native_frame_categories(VALUE, VALUE frames) {
  Check_Type(frames, T_ARRAY);
  long n = RARRAY_LEN(frames);
  VALUE out = rb_ary_new_capa(n);
  for (long i = 0; i < n; i++) {
    VALUE frame = rb_ary_entry(frames, i);
    Check_Type(frame, T_ARRAY);
    VALUE label = rb_obj_as_string(rb_ary_entry(frame, 0));
    VALUE path = rb_obj_as_string(rb_ary_entry(frame, 1));
    FrameCategory c;
    if (!category_of(label, path, c)) rb_memerror();
    rb_ary_push(out, rb_ary_entry(g_category_names, static_cast<long>(c)));
    RB_GC_GUARD(label);
    RB_GC_GUARD(path);
  }
  return out;
}

}  // namespace

void init_call_tree_binding(VALUE native) {
  // Registered before the Array is made: each String made below may run the GC, which must
  // see the Array (registered only after the loop, it was swept mid-fill and a push onto the
  // freed slot raised NoMemoryError at `require "rperf"`, one start in a few hundred).
  rb_gc_register_address(&g_category_names);
  g_category_names = rb_ary_new();
  for (int c = 0; c < static_cast<int>(FrameCategory::kCount); c++) {
    rb_ary_push(g_category_names, rb_str_freeze(rb_str_new_cstr(frame_category_name(static_cast<FrameCategory>(c)))));
  }
  rb_define_const(native, "FRAME_CATEGORIES", rb_ary_freeze(g_category_names));
  rb_define_singleton_method(native, "frame_categories", RUBY_METHOD_FUNC(native_frame_categories), 1);
  g_call_tree_class = rb_define_class_under(native, "CallTree", rb_cObject);
  g_node_info_class = rb_struct_define_under(g_call_tree_class, "NodeInfo", "method_id", "parent_id", "total_ns", "self_ns", "recursive", "depth",
                                             nullptr);
  g_method_info_class = rb_struct_define_under(g_call_tree_class, "MethodInfo", "label", "path", "line", nullptr);
  g_method_entry_class = rb_struct_define_under(g_call_tree_class, "MethodEntry", "method_id", "self_ns", "total_ns", "recursive", nullptr);
  rb_undef_alloc_func(g_call_tree_class);
  rb_define_singleton_method(g_call_tree_class, "build", RUBY_METHOD_FUNC(call_tree_s_build), 2);
  rb_define_method(g_call_tree_class, "method_count", RUBY_METHOD_FUNC(call_tree_method_count), 0);
  rb_define_method(g_call_tree_class, "method_info", RUBY_METHOD_FUNC(call_tree_method_info), 1);
  rb_define_method(g_call_tree_class, "node_count", RUBY_METHOD_FUNC(call_tree_node_count), 0);
  rb_define_method(g_call_tree_class, "total_ns", RUBY_METHOD_FUNC(call_tree_total_ns), 0);
  rb_define_method(g_call_tree_class, "node", RUBY_METHOD_FUNC(call_tree_node), 1);
  rb_define_method(g_call_tree_class, "children", RUBY_METHOD_FUNC(call_tree_children), 1);
  rb_define_method(g_call_tree_class, "method_entries", RUBY_METHOD_FUNC(call_tree_method_entries), 0);
  rb_define_method(g_call_tree_class, "callers", RUBY_METHOD_FUNC(call_tree_callers), -1);
  rb_define_method(g_call_tree_class, "callees", RUBY_METHOD_FUNC(call_tree_callees), -1);
  rb_define_method(g_call_tree_class, "arc_counts", RUBY_METHOD_FUNC(call_tree_arc_counts), 1);
  rb_define_method(g_call_tree_class, "heaviest_entries", RUBY_METHOD_FUNC(call_tree_heaviest_entries), 2);
  rb_define_method(g_call_tree_class, "heaviest_arcs", RUBY_METHOD_FUNC(call_tree_heaviest_arcs), 2);
  // The Viewer's other queries over a filter's samples; here beside read_select.
  rb_define_method(profile_class(), "timeline_bins", RUBY_METHOD_FUNC(profile_timeline_bins), 3);
  rb_define_method(profile_class(), "selected", RUBY_METHOD_FUNC(profile_selected), 1);
  rb_define_method(profile_class(), "frame_path?", RUBY_METHOD_FUNC(profile_frame_path_p), 1);
  rb_define_method(profile_class(), "thread_totals", RUBY_METHOD_FUNC(profile_thread_totals), 0);
}

}  // namespace rperf
