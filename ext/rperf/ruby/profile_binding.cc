#include "ruby/profile_binding.hh"

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>

#include "profile/idle_wait.hh"
#include "profile/profile_rows.hh"
#include "profile/result_keys.hh"
#include "profile/stack_tree.hh"
#include "profile/transform.hh"
#include "ruby/values.hh"
#include "views/functions.hh"
#include "views/label_state_totals.hh"
#include "views/summary.hh"
#include "views/totals_diff.hh"

namespace rperf {

namespace {

VALUE g_profile_class = Qnil;
ID g_view_link;  // hidden instance variable of a view Hash: its Native::Profile
// Hash views built in this process (Native::Profile.views_built): the tests check that the
// paths nobody reads a Hash from (output:-only stops, children, the CLI) build none.
uint64_t g_views_built = 0;

void holder_mark(void* p) {
  auto* h = static_cast<ProfileHolder*>(p);
  // rb_gc_mark pins: the vectors hold these VALUEs outside Ruby's heap.
  for (VALUE v : {h->view, h->view_samples, h->view_raw, h->view_label_sets, h->view_allocations, h->view_raw_allocations}) rb_gc_mark(v);
  for (VALUE v : h->class_name_values) rb_gc_mark(v);
  for (VALUE v : h->frame_values) rb_gc_mark(v);
  for (VALUE v : h->stack_values) rb_gc_mark(v);
  for (VALUE v : h->label_set_values) rb_gc_mark(v);
}
void holder_free(void* p) { delete static_cast<ProfileHolder*>(p); }
size_t holder_size(const void* p) {
  const auto* h = static_cast<const ProfileHolder*>(p);
  return sizeof(*h) + h->profile.samples.capacity() * sizeof(Sample) + h->profile.frames.size() * sizeof(Frame);
}
const rb_data_type_t kProfileType = {"rperf/profile", {holder_mark, holder_free, holder_size, nullptr, {nullptr}}, nullptr, nullptr, 0};

// Keys of a result Hash that are not attributes (profile/profile_rows.hh has the list).
bool body_key(VALUE key) {
  if (!SYMBOL_P(key)) return false;
  VALUE name = rb_sym2str(key);
  return is_body_key(RSTRING_PTR(name), static_cast<size_t>(RSTRING_LEN(name)));
}

// ---- the view ----------------------------------------------------------------------------

// Results are mutable Arrays, as rperf 0.11's: a frame is one Array shared by the samples that
// hold it (0.11's aggregated samples share them too); its path and label are interned (frozen)
// Strings, as the iseqs' own that 0.11 hands out.
VALUE frame_value(ProfileHolder& h, uint32_t id) {
  VALUE& v = h.frame_values[id];
  if (v) return v;
  const Frame& f = h.profile.frames[id];
  v = h.profile.has_lines ? rb_ary_new_from_args(3, utf8_string(f.path), utf8_string(f.label), INT2NUM(f.line))
                          : rb_ary_new_from_args(2, utf8_string(f.path), utf8_string(f.label));
  return v;
}

// The frozen Array of a stack's frames, kept by the holder (never handed out).
VALUE stack_root(ProfileHolder& h, uint32_t id) {
  VALUE& v = h.stack_values[id];
  if (v) return v;
  FrameSpan frames = h.profile.stacks[id];
  VALUE a = rb_ary_new_capa(static_cast<long>(frames.size()));
  for (uint32_t f : frames) rb_ary_push(a, frame_value(h, f));
  v = rb_ary_freeze(a);
  return v;
}

// Each sample gets an Array of its own: a copy-on-write slice of the stack's frozen Array (no
// copy until the caller changes it; short stacks are embedded copies).
VALUE stack_value(ProfileHolder& h, uint32_t id) {
  VALUE root = stack_root(h, id);
  return rb_ary_subseq(root, 0, RARRAY_LEN(root));
}

// `label_set`: a raw sample's is the user's set, its VM state apart (rperf 0.11).
VALUE sample_value(ProfileHolder& h, const Sample& s, bool raw, uint32_t label_set) {
  VALUE e = rb_ary_new_capa(raw ? 6 : 4);
  rb_ary_push(e, stack_value(h, s.stack));
  rb_ary_push(e, LL2NUM(s.weight_ns));
  rb_ary_push(e, UINT2NUM(s.thread_seq));
  rb_ary_push(e, UINT2NUM(label_set));
  if (raw) {
    rb_ary_push(e, INT2FIX(s.vm_state));
    rb_ary_push(e, LL2NUM(s.time_ns));
  }
  return e;
}

// [frames, count, thread_seq, label_set_id, class_name, retained_count (nil: not measured)(,
// time_ns when raw)]
VALUE allocation_value(ProfileHolder& h, const AllocationSample& a, bool raw) {
  VALUE e = rb_ary_new_capa(raw ? 7 : 6);
  rb_ary_push(e, stack_value(h, a.stack));
  rb_ary_push(e, LL2NUM(a.count));
  rb_ary_push(e, UINT2NUM(a.thread_seq));
  rb_ary_push(e, UINT2NUM(a.label_set));
  rb_ary_push(e, h.class_name_values[a.type]);
  rb_ary_push(e, h.profile.retained_measured ? LL2NUM(a.retained) : Qnil);
  if (raw) rb_ary_push(e, LL2NUM(a.time_ns));
  return e;
}

int append_remaining(VALUE key, VALUE value, VALUE ordered) {
  if (rb_hash_lookup2(ordered, key, Qundef) == Qundef) rb_hash_aset(ordered, key, value);
  return ST_CONTINUE;
}

// The view's keys in rperf 0.11's order (profile/result_keys.hh), ours after them.
VALUE in_order(VALUE all, const std::vector<const char*>& order) {
  VALUE ordered = rb_hash_new();
  for (const char* key : order) {
    VALUE v = rb_hash_lookup2(all, sym(key), Qundef);
    if (v != Qundef) rb_hash_aset(ordered, sym(key), v);
  }
  rb_hash_foreach(all, append_remaining, ordered);
  return ordered;
}

VALUE build_view(VALUE self, ProfileHolder& h) {
  g_views_built++;
  Profile& p = h.profile;
  h.frame_values.assign(p.frames.size(), 0);
  h.stack_values.assign(p.stacks.size(), 0);
  h.shown_samples = p.aggregated_samples();
  VALUE hash = rb_hash_new();
  h.header = p.header.to_json();  // the holder's scratch: a raise below cannot leak it
  for (const JsonValue::Member& m : h.header.members()) rb_hash_aset(hash, ID2SYM(rb_intern(m.first.c_str())), json_to_ruby(m.second));
  h.header = JsonValue();
  if (!p.header.meta.is_null()) rb_hash_aset(hash, sym("meta"), json_to_ruby(p.header.meta));
  if (!p.header.summary.is_null()) rb_hash_aset(hash, sym("summary"), json_to_ruby(p.header.summary));

  h.view_samples = rb_ary_new_capa(static_cast<long>(h.shown_samples.size()));
  for (const Sample& s : h.shown_samples) rb_ary_push(h.view_samples, sample_value(h, s, false, s.label_set));
  rb_hash_aset(hash, sym("aggregated_samples"), h.view_samples);
  if (p.timestamps) {
    h.view_raw = rb_ary_new_capa(static_cast<long>(p.samples.size()));
    UserLabelSets user_sets(p);
    for (const Sample& s : p.samples) rb_ary_push(h.view_raw, sample_value(h, s, true, user_sets.of(s)));
    rb_hash_aset(hash, sym("raw_samples"), h.view_raw);
  }
  h.label_set_values.assign(p.label_sets.size(), 0);
  h.view_label_sets = rb_ary_new_capa(static_cast<long>(p.label_sets.size()));
  for (uint32_t i = 0; i < p.label_sets.size(); i++) {
    h.label_set_values[i] = label_set_to_ruby(p.label_sets[i]);
    rb_ary_push(h.view_label_sets, h.label_set_values[i]);
  }
  rb_hash_aset(hash, sym("label_sets"), h.view_label_sets);
  if (p.has_allocations()) {
    h.class_name_values.assign(p.class_names.size(), Qnil);
    for (uint32_t i = 0; i < p.class_names.size(); i++) h.class_name_values[i] = utf8_string(p.class_names[i]);
    h.shown_allocations = p.aggregated_allocations();
    h.view_allocations = rb_ary_new_capa(static_cast<long>(h.shown_allocations.size()));
    for (const AllocationSample& a : h.shown_allocations) rb_ary_push(h.view_allocations, allocation_value(h, a, false));
    rb_hash_aset(hash, sym("allocation_samples"), h.view_allocations);
    if (p.timestamps) {
      h.view_raw_allocations = rb_ary_new_capa(static_cast<long>(p.allocations.size()));
      for (const AllocationSample& a : p.allocations) rb_ary_push(h.view_raw_allocations, allocation_value(h, a, true));
      rb_hash_aset(hash, sym("raw_allocation_samples"), h.view_raw_allocations);
    }
  }

  rb_hash_aset(hash, sym("unique_frames"), SIZET2NUM(used_frame_count(p)));
  rb_hash_aset(hash, sym("unique_stacks"), SIZET2NUM(p.stacks.size()));
  VALUE starts = rb_ary_new();
  h.ids = start_line_frames(p);  // the holder's scratch: a raise below cannot leak it
  for (uint32_t i : h.ids) {
    const Frame& f = p.frames[i];
    rb_ary_push(starts, rb_ary_new_from_args(3, utf8_string(f.path), utf8_string(f.label), INT2NUM(f.start_line)));
  }
  rb_hash_aset(hash, sym("function_start_lines"), starts);
  hash = in_order(hash, result_key_order(p));
  rb_ivar_set(hash, g_view_link, self);
  h.view = hash;
  return hash;
}

// ---- recognising an unchanged view ---------------------------------------------------------

bool same_int(VALUE v, int64_t expected) {
  int64_t i;
  return int64_of(v, i) && i == expected;
}

bool same_bytes(VALUE v, const std::string& expected) {
  return RB_TYPE_P(v, T_STRING) && static_cast<size_t>(RSTRING_LEN(v)) == expected.size() &&
         memcmp(RSTRING_PTR(v), expected.data(), expected.size()) == 0;
}

// A sample's frames as built: the same frame Arrays in the same order (still sharing the
// stack's buffer unless the caller changed it).
bool stack_unchanged(ProfileHolder& h, VALUE frames, uint32_t stack) {
  VALUE root = h.stack_values[stack];
  if (!root || !RB_TYPE_P(frames, T_ARRAY) || RARRAY_LEN(frames) != RARRAY_LEN(root)) return false;
  const VALUE* mine = RARRAY_CONST_PTR(frames);
  const VALUE* built = RARRAY_CONST_PTR(root);
  return mine == built || std::equal(mine, mine + RARRAY_LEN(root), built);
}

// Every frame Array handed out still holds its path, label (and line): they are shared and
// mutable, so `frame[1] = ...` would otherwise go unnoticed (the bytes are compared, not the
// objects: a frozen String is never changed, an equal new one is the same frame).
bool frames_unchanged(ProfileHolder& h) {
  for (size_t i = 0; i < h.frame_values.size(); i++) {
    VALUE v = h.frame_values[i];
    if (!v) continue;
    const Frame& f = h.profile.frames[i];
    long len = h.profile.has_lines ? 3 : 2;
    if (!RB_TYPE_P(v, T_ARRAY) || RARRAY_LEN(v) != len || !same_bytes(RARRAY_AREF(v, 0), f.path) ||
        !same_bytes(RARRAY_AREF(v, 1), f.label) || (len == 3 && !same_int(RARRAY_AREF(v, 2), f.line))) {
      return false;
    }
  }
  return true;
}

bool sample_unchanged(ProfileHolder& h, VALUE e, const Sample& s, bool raw, uint32_t label_set) {
  if (!RB_TYPE_P(e, T_ARRAY) || RARRAY_LEN(e) != (raw ? 6 : 4)) return false;
  return stack_unchanged(h, RARRAY_AREF(e, 0), s.stack) && same_int(RARRAY_AREF(e, 1), s.weight_ns) &&
         same_int(RARRAY_AREF(e, 2), s.thread_seq) && same_int(RARRAY_AREF(e, 3), label_set) &&
         (!raw || (same_int(RARRAY_AREF(e, 4), s.vm_state) && same_int(RARRAY_AREF(e, 5), s.time_ns)));
}

bool samples_unchanged(ProfileHolder& h, VALUE ary, VALUE expected, const std::vector<Sample>& samples, bool raw) {
  if (ary != expected || !RB_TYPE_P(ary, T_ARRAY) || RARRAY_LEN(ary) != static_cast<long>(samples.size())) return false;
  UserLabelSets user_sets(h.profile);
  for (size_t i = 0; i < samples.size(); i++) {
    const Sample& s = samples[i];
    if (!sample_unchanged(h, RARRAY_AREF(ary, static_cast<long>(i)), s, raw, raw ? user_sets.of(s) : s.label_set)) return false;
  }
  return true;
}

bool allocations_unchanged(ProfileHolder& h, VALUE ary, VALUE expected, const std::vector<AllocationSample>& all, bool raw) {
  if (ary != expected) return false;
  if (NIL_P(ary)) return true;
  if (!RB_TYPE_P(ary, T_ARRAY) || RARRAY_LEN(ary) != static_cast<long>(all.size())) return false;
  for (size_t i = 0; i < all.size(); i++) {
    VALUE e = RARRAY_AREF(ary, static_cast<long>(i));
    const AllocationSample& a = all[i];
    if (!RB_TYPE_P(e, T_ARRAY) || RARRAY_LEN(e) != (raw ? 7 : 6) || !stack_unchanged(h, RARRAY_AREF(e, 0), a.stack) ||
        !same_int(RARRAY_AREF(e, 1), a.count) || !same_int(RARRAY_AREF(e, 2), a.thread_seq) ||
        !same_int(RARRAY_AREF(e, 3), a.label_set) || RARRAY_AREF(e, 4) != h.class_name_values[a.type] ||
        (h.profile.retained_measured ? !same_int(RARRAY_AREF(e, 5), a.retained) : !NIL_P(RARRAY_AREF(e, 5))) || (raw && !same_int(RARRAY_AREF(e, 6), a.time_ns))) {
      return false;
    }
  }
  return true;
}

// True when `hash` is this profile's view with its samples and label sets as built.
bool view_unchanged(ProfileHolder& h, VALUE hash) {
  if (NIL_P(h.view) || !frames_unchanged(h)) return false;
  if (!allocations_unchanged(h, rb_hash_lookup(hash, sym("allocation_samples")), h.view_allocations, h.shown_allocations, false) ||
      !allocations_unchanged(h, rb_hash_lookup(hash, sym("raw_allocation_samples")), h.view_raw_allocations, h.profile.allocations, true)) {
    return false;
  }
  VALUE sets = rb_hash_lookup(hash, sym("label_sets"));
  if (sets != h.view_label_sets || RARRAY_LEN(sets) != static_cast<long>(h.label_set_values.size())) return false;
  for (size_t i = 0; i < h.label_set_values.size(); i++) {
    if (RARRAY_AREF(sets, static_cast<long>(i)) != h.label_set_values[i]) return false;
  }
  if (!samples_unchanged(h, rb_hash_lookup(hash, sym("aggregated_samples")), h.view_samples, h.shown_samples, false)) return false;
  if (!h.profile.timestamps) return NIL_P(rb_hash_lookup(hash, sym("raw_samples")));
  return samples_unchanged(h, rb_hash_lookup(hash, sym("raw_samples")), h.view_raw, h.profile.samples, true);
}

// ---- converting any result Hash -------------------------------------------------------------

// Remembers recently seen frame and stack Arrays by identity: a Hash from stop/load shares
// them, so most lookups end here; a foreign Hash with distinct objects falls through to the
// content tables, which hash the bytes in place (no allocation for a known frame).
// When objects are not shared (every lookup misses), it switches itself off after a while:
// probing it would only add a cache miss per frame.
struct IdentityCache {
  static constexpr size_t kSize = 1 << 16;
  std::vector<std::pair<VALUE, uint32_t>> slots = std::vector<std::pair<VALUE, uint32_t>>(kSize, {0, 0});
  uint64_t lookups = 0, hits = 0;
  bool enabled = true;
  void prefetch(VALUE v) const {
    if (enabled) __builtin_prefetch(&slots[mix64(v) & (kSize - 1)]);
  }
  uint32_t* find(VALUE v) {
    if (!enabled) return nullptr;
    if (++lookups == 65536 && hits * 10 < lookups) enabled = false;
    auto& s = slots[mix64(v) & (kSize - 1)];
    if (s.first != v) return nullptr;
    hits++;
    return &s.second;
  }
  void put(VALUE v, uint32_t id) {
    if (enabled) slots[mix64(v) & (kSize - 1)] = {v, id};
  }
};

// A frame of the stack being converted that its identity did not resolve: its key, read in
// place from its Strings, and the hash of it.
struct PendingFrame {
  VALUE frame;
  const char* path;
  const char* label;
  size_t path_len, label_len;
  int32_t line;
  uint64_t hash;
  uint32_t index;  // in the stack
};

struct Converter {
  Converter(ProfileHolder& holder, bool raw) : h(holder), rows(holder.profile, raw) {}

  ProfileHolder& h;
  ProfileRows rows;  // checks and adds each row (as the JSON loader's and the pprof reader's)
  IdentityCache frames_seen, stacks_seen;
  std::vector<PendingFrame> pending;  // reused from stack to stack

  bool fail(const char* what) {
    h.error = what;
    return false;
  }
  bool fail(const std::string& what) {
    h.error = what;
    return false;
  }
  // "<array>[<row>]: <what>"
  bool fail_row(const char* array, long row, const std::string& what) { return fail(std::string(array) + "[" + std::to_string(row) + "]: " + what); }

  // A stack's frames are looked up together, in passes, so that the cache misses of one
  // frame's lookup (identity slot, index slot, key offset, key bytes) overlap with the
  // others' instead of following each other: with a large table they are most of the cost.
  bool stack(VALUE frames, uint32_t& id) {
    if (uint32_t* known = stacks_seen.find(frames)) {
      id = *known;
      return true;
    }
    if (!RB_TYPE_P(frames, T_ARRAY)) return fail("a sample's frames must be an Array");
    long n = RARRAY_LEN(frames);
    const VALUE* values = RARRAY_CONST_PTR(frames);
    h.ids.resize(static_cast<size_t>(n));
    pending.clear();
    for (long i = 0; i < n; i++) frames_seen.prefetch(values[i]);
    for (long i = 0; i < n; i++) {
      VALUE f = values[i];
      if (uint32_t* known = frames_seen.find(f)) {
        h.ids[static_cast<size_t>(i)] = *known;
        continue;
      }
      if (!RB_TYPE_P(f, T_ARRAY) || RARRAY_LEN(f) < 2 || RARRAY_LEN(f) > 3) return fail("a frame must be [path, label] or [path, label, line]");
      VALUE path = RARRAY_AREF(f, 0), label = RARRAY_AREF(f, 1);
      if (!RB_TYPE_P(path, T_STRING) || !RB_TYPE_P(label, T_STRING)) return fail("a frame's path and label must be Strings");
      int32_t line = 0;
      if (RARRAY_LEN(f) == 3) {
        VALUE l = RARRAY_AREF(f, 2);
        line = FIXNUM_P(l) ? static_cast<int32_t>(FIX2LONG(l)) : 0;
        h.profile.has_lines = true;
      }
      PendingFrame p{f, RSTRING_PTR(path), RSTRING_PTR(label), static_cast<size_t>(RSTRING_LEN(path)), static_cast<size_t>(RSTRING_LEN(label)), line, 0,
                     static_cast<uint32_t>(i)};
      p.hash = FrameTable::hash(p.path, p.path_len, p.label, p.label_len, line);
      h.profile.frames.prefetch(p.hash);
      pending.push_back(p);
    }
    FrameTable& table = h.profile.frames;
    for (const PendingFrame& p : pending) table.prefetch_offset(p.hash);
    for (const PendingFrame& p : pending) table.prefetch_key(p.hash);
    for (const PendingFrame& p : pending) {
      uint32_t f = table.intern_hashed(p.hash, p.path, p.path_len, p.label, p.label_len, p.line);
      h.ids[p.index] = f;
      frames_seen.put(p.frame, f);
    }
    id = h.profile.stacks.intern(h.ids);
    if (RB_OBJ_FROZEN(frames)) stacks_seen.put(frames, id);  // a mutable Array may change under the same identity
    return true;
  }

  bool samples(VALUE ary, bool raw) {
    const char* name = raw ? "raw_samples" : "aggregated_samples";
    if (NIL_P(ary)) return true;  // none (rperf 0.11's result of a run without samples): empty
    if (!RB_TYPE_P(ary, T_ARRAY)) return fail(std::string(name) + " must be an Array");
    h.profile.samples.reserve(static_cast<size_t>(RARRAY_LEN(ary)));
    if (!raw) reserve_stacks(ary);  // raw rows (one per tick) repeat few stacks
    ProfileRows::Kind kind = raw ? ProfileRows::kRaw : ProfileRows::kAggregated;
    for (long i = 0; i < RARRAY_LEN(ary); i++) {
      VALUE e = RARRAY_AREF(ary, i);
      if (!RB_TYPE_P(e, T_ARRAY) || RARRAY_LEN(e) < 2) return fail("a sample must be [frames, weight, thread_seq, label_set_id]");
      uint32_t stack_id;
      int64_t weight, thread = 0, set = ProfileRows::kNoLabels, extra[2];
      size_t extras = 0;
      if (!stack(RARRAY_AREF(e, 0), stack_id)) return false;
      if (!int64_of(RARRAY_AREF(e, 1), weight)) return fail("a sample's weight must be an Integer");
      if (RARRAY_LEN(e) > 2 && !int64_of(RARRAY_AREF(e, 2), thread)) thread = 0;
      // nil: the empty set; else an index into the Hash's label_sets.
      if (RARRAY_LEN(e) > 3 && !NIL_P(RARRAY_AREF(e, 3)) && !int64_of(RARRAY_AREF(e, 3), set)) {
        return fail(rows.row_name(kind, static_cast<size_t>(i)) + ": label_set_id is not an Integer");
      }
      if (raw) {
        while (extras < 2 && RARRAY_LEN(e) > 4 + static_cast<long>(extras) && int64_of(RARRAY_AREF(e, 4 + static_cast<long>(extras)), extra[extras])) extras++;
      }
      if (!rows.sample(stack_id, weight, thread, set, extra, extras)) return fail(rows.error());
    }
    return true;
  }

  // Sizes the stack table for every sample's stack being new: regrowing its arrays of millions
  // of ids costs a copy, and on Linux fresh pages and a TLB shootdown per reallocation. When
  // stacks repeat, the ids' room is mostly never touched (address space, not memory); the
  // index's slots (16 bytes a sample) are.
  void reserve_stacks(VALUE ary) {
    size_t stacks = 0, frames = 0;
    for (long i = 0; i < RARRAY_LEN(ary); i++) {
      VALUE e = RARRAY_AREF(ary, i);
      if (!RB_TYPE_P(e, T_ARRAY) || RARRAY_LEN(e) < 1) continue;
      VALUE f = RARRAY_AREF(e, 0);
      if (!RB_TYPE_P(f, T_ARRAY)) continue;
      stacks++;
      frames += static_cast<size_t>(RARRAY_LEN(f));
    }
    h.profile.stacks.reserve(stacks, frames);
  }

  // allocation_samples, or raw_allocation_samples (one more element: the time) when `raw`.
  bool allocations(VALUE ary, bool raw) {
    if (NIL_P(ary)) return true;
    if (!RB_TYPE_P(ary, T_ARRAY)) return fail("allocation_samples must be an Array");
    const char* shape = raw ? "a raw allocation sample must be [frames, count, thread_seq, label_set_id, class_name, retained_count or nil, time_ns]"
                            : "an allocation sample must be [frames, count, thread_seq, label_set_id, class_name, retained_count or nil]";
    for (long i = 0; i < RARRAY_LEN(ary); i++) {
      VALUE e = RARRAY_AREF(ary, i);
      if (!RB_TYPE_P(e, T_ARRAY) || RARRAY_LEN(e) != (raw ? 7 : 6) || !RB_TYPE_P(RARRAY_AREF(e, 4), T_STRING)) return fail(shape);
      uint32_t stack_id;
      int64_t count, thread, set, retained, time_ns = 0;
      if (!stack(RARRAY_AREF(e, 0), stack_id)) return false;
      if (!int64_of(RARRAY_AREF(e, 1), count) || !int64_of(RARRAY_AREF(e, 2), thread) || !int64_of(RARRAY_AREF(e, 3), set) ||
          !(NIL_P(RARRAY_AREF(e, 5)) || int64_of(RARRAY_AREF(e, 5), retained)) || (raw && !int64_of(RARRAY_AREF(e, 6), time_ns))) {
        return fail(shape);
      }
      VALUE name = RARRAY_AREF(e, 4);
      if (NIL_P(RARRAY_AREF(e, 5))) retained = ProfileRows::kNotMeasured;  // retained: false
      if (!rows.allocation(stack_id, count, thread, set, rows.class_name(RSTRING_PTR(name), static_cast<size_t>(RSTRING_LEN(name))), retained, raw,
                           time_ns)) {
        return fail(rows.error());
      }
    }
    return true;
  }

  // `sets`: label_set_pairs of the Hash's label_sets. Equal label sets share one id.
  bool label_sets(VALUE sets) {
    if (NIL_P(sets)) return true;
    if (!RB_TYPE_P(sets, T_ARRAY)) return fail("label_sets must be an Array of Hashes");
    std::vector<LabelEdit> edits;
    for (long i = 0; i < RARRAY_LEN(sets); i++) {
      VALUE pairs = RARRAY_AREF(sets, i);
      if (!RB_TYPE_P(pairs, T_ARRAY)) return fail_row("label_sets", i, "a label set must be a Hash");
      edits.clear();
      long bad;
      // Keys are not checked for UTF-8 here: the encoders replace invalid bytes.
      read_label_pairs(pairs, false, false, edits, bad);  // any key and value (nil too), as given
      LabelSet labels;
      apply_label_edits(edits, labels);
      rows.label_set(labels);
    }
    return true;
  }

  // function_start_lines: [[path, label, line], ...]; other entries are skipped.
  void start_lines(VALUE starts) {
    if (!RB_TYPE_P(starts, T_ARRAY)) return;
    for (long i = 0; i < RARRAY_LEN(starts); i++) {
      VALUE e = RARRAY_AREF(starts, i);
      if (!RB_TYPE_P(e, T_ARRAY) || RARRAY_LEN(e) < 3 || !RB_TYPE_P(RARRAY_AREF(e, 0), T_STRING) ||
          !RB_TYPE_P(RARRAY_AREF(e, 1), T_STRING) || !FIXNUM_P(RARRAY_AREF(e, 2))) continue;
      VALUE path = RARRAY_AREF(e, 0), label = RARRAY_AREF(e, 1);
      rows.start_line(RSTRING_PTR(path), static_cast<size_t>(RSTRING_LEN(path)), RSTRING_PTR(label), static_cast<size_t>(RSTRING_LEN(label)),
                      static_cast<int32_t>(FIX2LONG(RARRAY_AREF(e, 2))));
    }
  }
};

// The Hash's label_sets with each Hash as its label_pairs (every Ruby call of the conversion:
// values' to_s) and anything else as false; not an Array: as it is.
VALUE label_set_pairs(VALUE sets) {
  if (!RB_TYPE_P(sets, T_ARRAY)) return sets;
  VALUE out = rb_ary_new_capa(RARRAY_LEN(sets));
  for (long i = 0; i < RARRAY_LEN(sets); i++) {
    VALUE set = RARRAY_AREF(sets, i);
    rb_ary_push(out, RB_TYPE_P(set, T_HASH) ? label_pairs(set) : Qfalse);
  }
  return out;
}

int attribute_member(VALUE key, VALUE value, VALUE arg) {
  auto* p = reinterpret_cast<Profile*>(arg);
  if (body_key(key) || (!SYMBOL_P(key) && !RB_TYPE_P(key, T_STRING))) return ST_CONTINUE;
  JsonValue v;
  if (!ruby_to_json(value, v)) return ST_CONTINUE;  // not representable in a file: left out
  VALUE name = SYMBOL_P(key) ? rb_sym2str(key) : key;
  p->header.set(std::string(RSTRING_PTR(name), static_cast<size_t>(RSTRING_LEN(name))), std::move(v));  // any value, as given
  return ST_CONTINUE;
}

// The header, meta and summary from the Hash (cheap: a few scalars), replacing the profile's.
void read_header(Profile& p, VALUE hash) {
  p.header = ProfileHeader();
  rb_hash_foreach(hash, attribute_member, reinterpret_cast<VALUE>(&p));
  JsonValue v;
  p.header.meta = ruby_to_json(rb_hash_lookup(hash, sym("meta")), v) ? v : JsonValue();
  p.header.summary = ruby_to_json(rb_hash_lookup(hash, sym("summary")), v) ? v : JsonValue();
}

[[noreturn]] void raise_error(VALUE klass, VALUE message) { rb_exc_raise(rb_exc_new_str(klass, message)); }


VALUE take_error(ProfileHolder& h) {
  VALUE m = rb_str_new(h.error.data(), static_cast<long>(h.error.size()));
  h.error.clear();
  return m;
}

// ---- methods -------------------------------------------------------------------------------

VALUE profile_to_h(VALUE self) {
  ProfileHolder* h = holder_of(self);
  if (!NIL_P(h->view)) return h->view;
  VALUE view = Qnil;
  without_cxx_exceptions([&] { view = build_view(self, *h); });
  return view;
}

// Native::Profile.from_hash(hash) -> Native::Profile: the profile a result Hash came from when
// it is unchanged, else a new one converted from it.
VALUE profile_s_from_hash(VALUE, VALUE hash) {
  Check_Type(hash, T_HASH);
  VALUE linked = rb_attr_get(hash, g_view_link);
  if (rb_typeddata_is_kind_of(linked, &kProfileType)) {
    ProfileHolder* h = holder_of(linked);
    if (view_unchanged(*h, hash)) {
      read_header(h->profile, hash);
      return linked;
    }
  }
  ProfileHolder* h = new_profile_holder();
  VALUE obj = wrap_profile(h);
  bool raw = RB_TYPE_P(rb_hash_lookup(hash, sym("raw_samples")), T_ARRAY);
  bool ok = false;
  VALUE sets = label_set_pairs(rb_hash_lookup(hash, sym("label_sets")));  // before any C++ object
  VALUE starts = rb_hash_lookup(hash, sym("function_start_lines"));
  without_cxx_exceptions([&] {
    Converter c(*h, raw);
    ok = c.label_sets(sets) &&
         c.samples(rb_hash_lookup(hash, sym(raw ? "raw_samples" : "aggregated_samples")), raw) &&
         (raw && RB_TYPE_P(rb_hash_lookup(hash, sym("raw_allocation_samples")), T_ARRAY)
              ? c.allocations(rb_hash_lookup(hash, sym("raw_allocation_samples")), true)
              : c.allocations(rb_hash_lookup(hash, sym("allocation_samples")), false));
    if (ok) {
      c.start_lines(starts);
      c.rows.finish();
    }
  });
  RB_GC_GUARD(sets);
  if (!ok) raise_error(rb_eTypeError, rb_sprintf("rperf: %" PRIsVALUE, take_error(*h)));
  read_header(h->profile, hash);
  return obj;
}

VALUE profile_fold_lines(VALUE self) {
  ProfileHolder* h = holder_of(self);
  if (!NIL_P(h->view)) rb_raise(rb_eRuntimeError, "rperf: the profile's Hash view exists already");
  h->idle.reset();
  without_cxx_exceptions([&] { fold_lines(h->profile); });
  return self;
}

VALUE profile_lines_p(VALUE self) { return holder_of(self)->profile.has_lines ? Qtrue : Qfalse; }

// #merge_child(child, pid): the child's samples labelled %pid=<pid>, counters summed.
VALUE profile_merge_child(VALUE self, VALUE child, VALUE pid) {
  ProfileHolder* h = holder_of(self);
  ProfileHolder* c = holder_of(child);
  if (!NIL_P(h->view)) rb_raise(rb_eRuntimeError, "rperf: the profile's Hash view exists already");
  StringValue(pid);
  h->idle.reset();
  without_cxx_exceptions([&] { merge_child(h->profile, c->profile, std::string(RSTRING_PTR(pid), static_cast<size_t>(RSTRING_LEN(pid)))); });
  return self;
}

// #set_attribute(key, value): a scalar of the result (user_ns, gc_stats, ...).
VALUE profile_set_attribute(VALUE self, VALUE key, VALUE value) {
  ProfileHolder* h = holder_of(self);
  Check_Type(key, T_SYMBOL);
  VALUE name = rb_sym2str(key);
  bool stored;
  {  // no C++ object may be live when rb_raise unwinds
    JsonValue v;
    stored = ruby_to_json(value, v);
    if (stored) h->profile.header.set(std::string(RSTRING_PTR(name), static_cast<size_t>(RSTRING_LEN(name))), std::move(v));
  }
  if (!stored) rb_raise(rb_eTypeError, "rperf: %" PRIsVALUE " cannot be stored in a profile", rb_obj_class(value));
  if (!NIL_P(h->view)) rb_hash_aset(h->view, key, value);
  return value;
}

VALUE profile_set_meta(VALUE self, VALUE meta) {
  ProfileHolder* h = holder_of(self);
  bool stored;
  {  // no C++ object may be live when rb_raise unwinds
    JsonValue v;
    stored = ruby_to_json(meta, v) && (v.is_object() || v.is_null());
    if (stored) h->profile.header.meta = std::move(v);
  }
  if (!stored) rb_raise(rb_eTypeError, "rperf: meta must be a Hash of plain values");
  return meta;
}

// #transformed(list) -> a new Native::Profile: this one with the Viewer's stack transforms
// applied in order (profile/transform.hh). list: [["focus" | "merge" | "drop", label, path] |
// ["recursion"] | ["callers", label, path] (the sandwich's) | ["idle"] (the idle samples removed,
// judged before the transforms after it) | ["app"] (app code first: each run of gem and stdlib
// frames one [framework] frame), ...], labels and paths as the page shows them (valid UTF-8).
VALUE profile_transformed(VALUE self, VALUE list) {
  ProfileHolder* h = holder_of(self);
  Check_Type(list, T_ARRAY);
  // Read whole before any C++ object exists: a bad entry raises with nothing to unwind.
  for (long i = 0; i < RARRAY_LEN(list); i++) {
    VALUE t = RARRAY_AREF(list, i);
    StackTransform::Op op;
    bool ok = RB_TYPE_P(t, T_ARRAY) && (RARRAY_LEN(t) == 1 || RARRAY_LEN(t) == 3) && RB_TYPE_P(RARRAY_AREF(t, 0), T_STRING) &&
              stack_transform_op(std::string_view(RSTRING_PTR(RARRAY_AREF(t, 0)), static_cast<size_t>(RSTRING_LEN(RARRAY_AREF(t, 0)))),
                                 RARRAY_LEN(t) == 3, op) &&
              (RARRAY_LEN(t) == 1 || (RB_TYPE_P(RARRAY_AREF(t, 1), T_STRING) && RB_TYPE_P(RARRAY_AREF(t, 2), T_STRING)));
    if (!ok) rb_raise(rb_eArgError, "rperf: transform %ld must be [focus|merge|drop|callers, label, path], [\"recursion\"], [\"idle\"] or [\"app\"], got %" PRIsVALUE, i, rb_inspect(t));
  }
  ProfileHolder* out = new_profile_holder();
  VALUE obj = wrap_profile(out);  // owns `out` from here: an exception below leaks nothing
  without_cxx_exceptions([&] {
    std::vector<StackTransform> transforms;
    for (long i = 0; i < RARRAY_LEN(list); i++) {
      VALUE t = RARRAY_AREF(list, i);
      StackTransform st;
      VALUE name = RARRAY_AREF(t, 0);
      stack_transform_op(std::string_view(RSTRING_PTR(name), static_cast<size_t>(RSTRING_LEN(name))), RARRAY_LEN(t) == 3, st.op);
      if (RARRAY_LEN(t) == 3) {
        VALUE label = RARRAY_AREF(t, 1), path = RARRAY_AREF(t, 2);
        st.label.assign(RSTRING_PTR(label), static_cast<size_t>(RSTRING_LEN(label)));
        st.path.assign(RSTRING_PTR(path), static_cast<size_t>(RSTRING_LEN(path)));
      }
      transforms.push_back(std::move(st));
    }
    out->profile = h->profile;
    transform_stacks(out->profile, transforms);
  });
  RB_GC_GUARD(list);
  return obj;
}

// #attribute(key) -> a scalar of the result, without building the Hash view.
VALUE profile_attribute(VALUE self, VALUE key) {
  Check_Type(key, T_SYMBOL);
  VALUE name = rb_sym2str(key);
  ProfileHolder* h = holder_of(self);
  {
    std::optional<JsonValue> v = h->profile.header.get(std::string(RSTRING_PTR(name), static_cast<size_t>(RSTRING_LEN(name))));
    h->header = v ? std::move(*v) : JsonValue();  // absent: nil
  }
  VALUE out = json_to_ruby(h->header);  // from the holder: a raise cannot leak it
  h->header = JsonValue();
  return out;
}

VALUE profile_meta_p(VALUE self) { return holder_of(self)->profile.header.meta.is_object() ? Qtrue : Qfalse; }

// #meta -> the file's meta Hash (nil when it has none), without building the Hash view.
VALUE profile_meta(VALUE self) {
  const Profile& p = holder_of(self)->profile;
  return p.header.meta.is_null() ? Qnil : json_to_ruby(p.header.meta);
}

// #saved_summary -> the summary a file carried (the Hash view's :summary), nil when none;
// #summary computes it.
VALUE profile_saved_summary(VALUE self) {
  const Profile& p = holder_of(self)->profile;
  return p.header.summary.is_null() ? Qnil : json_to_ruby(p.header.summary);
}

// #samples? / #allocations? / #raw?: whether the result has time samples, allocation samples,
// raw (timestamped) samples; what a caller of the Hash view asks with its keys.
VALUE profile_samples_p(VALUE self) { return holder_of(self)->profile.samples.empty() ? Qfalse : Qtrue; }
VALUE profile_allocations_p(VALUE self) { return holder_of(self)->profile.has_allocations() ? Qtrue : Qfalse; }
VALUE profile_raw_p(VALUE self) { return holder_of(self)->profile.timestamps ? Qtrue : Qfalse; }

// #label_sets -> [Hash, ...] by label set id (the Hash view's :label_sets), without the view.
VALUE profile_label_sets(VALUE self) {
  ProfileHolder* h = holder_of(self);
  if (!NIL_P(h->view)) return rb_ary_dup(h->view_label_sets);
  VALUE out = rb_ary_new_capa(static_cast<long>(h->profile.label_sets.size()));
  for (uint32_t i = 0; i < h->profile.label_sets.size(); i++) rb_ary_push(out, label_set_to_ruby(h->profile.label_sets[i]));
  return out;
}

// Native::Profile.of_view(hash) -> the profile whose unchanged Hash view `hash` is (its rows
// are the profile's, in the profile's order), else nil; converts nothing.
VALUE profile_s_of_view(VALUE, VALUE hash) {
  if (!RB_TYPE_P(hash, T_HASH)) return Qnil;
  VALUE linked = rb_attr_get(hash, g_view_link);
  if (!rb_typeddata_is_kind_of(linked, &kProfileType)) return Qnil;
  ProfileHolder* h = holder_of(linked);
  return h->view == hash && view_unchanged(*h, hash) ? linked : Qnil;
}

VALUE int_array(const std::vector<uint32_t>& ids) {
  VALUE a = rb_ary_new_capa(static_cast<long>(ids.size()));
  for (uint32_t id : ids) rb_ary_push(a, UINT2NUM(id));
  return a;
}

// #stack_tree(max_samples, max_timeline) -> {frames: [[label, path], ...] (valid UTF-8), frame_lines:
// [method line per frame], parents:,
// node_frames:, rows: [[node, weight_ns, thread_seq, label_set_id], ...], idle_rows: [row index,
// ...], pruned: {samples:, weight_ns:}, total_weight_ns:, timeline: nil without raw samples, else
// {samples: [[node, weight_ns, thread_seq, label_set_id, time_ns], ...], idle: [row index, ...],
// quantum_ns:, source_count:}, allocations: nil without allocation samples, else {classes:
// [name, ...], samples: [[node, objects, thread_seq, label_set_id, class, retained], ...],
// allocated:, retained: (nil: not measured, the rows' retained 0), pruned: {samples:, objects:}},
// line_tree: nil without lines, else {parent: [...], frame: [...], line: [...]} and each time and
// timeline row with its line-level leaf last (-1: none)} of the view's aggregated samples
// (profile/stack_tree.hh), idle as profile/idle_wait.hh says.
VALUE profile_stack_tree(VALUE self, VALUE max_samples, VALUE max_timeline) {
  ProfileHolder* h = holder_of(self);
  StackTreeOptions options;
  options.max_samples = NUM2SIZET(max_samples);
  options.max_timeline = NUM2SIZET(max_timeline);
  options.raw = h->profile.timestamps;
  options.lines = h->profile.has_lines;
  bool viewed = !NIL_P(h->view);
  StackTree* tree = nullptr;
  without_cxx_exceptions([&] {
    std::unique_ptr<StackTree> built(new StackTree());
    std::shared_ptr<const IdleSamples> idle = idle_samples_of(h);
    options.idle = idle.get();
    std::vector<AllocationSample> aggregated;
    if (h->profile.has_allocations()) {
      if (!viewed) aggregated = h->profile.aggregated_allocations();
      options.allocations = viewed ? &h->shown_allocations : &aggregated;
    }
    *built = build_stack_tree(h->profile, viewed ? h->shown_samples : h->profile.aggregated_samples(), options);
    tree = built.release();
  });
  // Only NoMemoryError can be raised below: it would leak this one tree.
  VALUE frames = rb_ary_new_capa(static_cast<long>(tree->frames.size()));
  for (const auto& f : tree->frames) rb_ary_push(frames, rb_ary_new_from_args(2, text_string(f.first), text_string(f.second)));
  VALUE parents = rb_ary_new_capa(static_cast<long>(tree->parents.size()));
  for (int32_t parent : tree->parents) rb_ary_push(parents, INT2FIX(parent));
  VALUE rows = rb_ary_new_capa(static_cast<long>(tree->rows.size()));
  VALUE idle_rows = rb_ary_new();
  for (size_t i = 0; i < tree->rows.size(); i++) {
    const StackTree::Row& r = tree->rows[i];
    VALUE row = rb_ary_new_from_args(4, UINT2NUM(r.node), LL2NUM(r.weight_ns), UINT2NUM(r.thread_seq), UINT2NUM(r.label_set));
    if (options.lines) rb_ary_push(row, INT2FIX(tree->row_line_nodes[i]));
    rb_ary_push(rows, row);
    if (r.idle) rb_ary_push(idle_rows, SIZET2NUM(i));
  }
  VALUE pruned = rb_hash_new();
  rb_hash_aset(pruned, sym("samples"), SIZET2NUM(tree->pruned_samples));
  rb_hash_aset(pruned, sym("weight_ns"), LL2NUM(tree->pruned_weight_ns));
  VALUE timeline = Qnil;
  if (options.raw) {
    VALUE timeline_rows = rb_ary_new_capa(static_cast<long>(tree->timeline.size()));
    VALUE timeline_idle = rb_ary_new();
    for (size_t i = 0; i < tree->timeline.size(); i++) {
      const StackTree::TimelineRow& r = tree->timeline[i];
      VALUE row = rb_ary_new_from_args(5, UINT2NUM(r.node), LL2NUM(r.weight_ns), UINT2NUM(r.thread_seq), UINT2NUM(r.label_set), LL2NUM(r.time_ns));
      if (options.lines) rb_ary_push(row, INT2FIX(r.line_node));
      rb_ary_push(timeline_rows, row);
      if (r.idle) rb_ary_push(timeline_idle, SIZET2NUM(i));
    }
    timeline = rb_hash_new();
    rb_hash_aset(timeline, sym("samples"), timeline_rows);
    rb_hash_aset(timeline, sym("idle"), timeline_idle);
    rb_hash_aset(timeline, sym("quantum_ns"), LL2NUM(tree->timeline_quantum_ns));
    rb_hash_aset(timeline, sym("source_count"), SIZET2NUM(h->profile.samples.size()));
  }
  VALUE allocations = Qnil;
  if (!tree->allocation_rows.empty()) {
    VALUE classes = rb_ary_new_capa(static_cast<long>(tree->allocation_classes.size()));
    for (uint32_t id : tree->allocation_classes) rb_ary_push(classes, text_string(h->profile.class_names[id]));
    VALUE sites = rb_ary_new_capa(static_cast<long>(tree->allocation_rows.size()));
    for (const StackTree::AllocationRow& r : tree->allocation_rows) {
      rb_ary_push(sites, rb_ary_new_from_args(6, UINT2NUM(r.node), LL2NUM(r.objects), UINT2NUM(r.thread_seq), UINT2NUM(r.label_set),
                                              UINT2NUM(r.class_index), LL2NUM(r.retained)));
    }
    VALUE folded = rb_hash_new();
    rb_hash_aset(folded, sym("samples"), SIZET2NUM(tree->pruned_allocations));
    rb_hash_aset(folded, sym("objects"), LL2NUM(tree->pruned_objects));
    allocations = rb_hash_new();
    rb_hash_aset(allocations, sym("classes"), classes);
    rb_hash_aset(allocations, sym("samples"), sites);
    rb_hash_aset(allocations, sym("allocated"), LL2NUM(tree->allocated));
    rb_hash_aset(allocations, sym("retained"), h->profile.retained_measured ? LL2NUM(tree->retained) : Qnil);
    rb_hash_aset(allocations, sym("pruned"), folded);
  }
  VALUE out = rb_hash_new();
  rb_hash_aset(out, sym("frames"), frames);
  rb_hash_aset(out, sym("parents"), parents);
  rb_hash_aset(out, sym("node_frames"), int_array(tree->node_frames));
  VALUE lines = rb_ary_new_capa(static_cast<long>(tree->frame_lines.size()));
  for (int32_t line : tree->frame_lines) rb_ary_push(lines, INT2FIX(line));
  rb_hash_aset(out, sym("frame_lines"), lines);
  rb_hash_aset(out, sym("rows"), rows);
  rb_hash_aset(out, sym("idle_rows"), idle_rows);
  rb_hash_aset(out, sym("pruned"), pruned);
  rb_hash_aset(out, sym("total_weight_ns"), LL2NUM(tree->total_weight_ns));
  rb_hash_aset(out, sym("timeline"), timeline);
  rb_hash_aset(out, sym("allocations"), allocations);
  VALUE line_tree = Qnil;
  if (options.lines) {
    line_tree = rb_hash_new();
    VALUE line_parents = rb_ary_new_capa(static_cast<long>(tree->line_parents.size()));
    for (int32_t parent : tree->line_parents) rb_ary_push(line_parents, INT2FIX(parent));
    VALUE line_lines = rb_ary_new_capa(static_cast<long>(tree->line_lines.size()));
    for (int32_t line : tree->line_lines) rb_ary_push(line_lines, INT2FIX(line));
    rb_hash_aset(line_tree, sym("parent"), line_parents);
    rb_hash_aset(line_tree, sym("frame"), int_array(tree->line_frames));
    rb_hash_aset(line_tree, sym("line"), line_lines);
  }
  rb_hash_aset(out, sym("line_tree"), line_tree);
  delete tree;
  return out;
}

VALUE profile_s_views_built(VALUE) { return ULL2NUM(g_views_built); }

// #summary -> Hash (computed from the profile: rperf 0.11's summary fields).
VALUE profile_summary(VALUE self) {
  JsonValue* summary = new JsonValue();
  VALUE out = Qnil;
  without_cxx_exceptions([&] { *summary = summarize(holder_of(self)->profile); });
  out = json_to_ruby(*summary);  // may raise NoMemoryError only: leaks this one value then
  delete summary;
  return out;
}

VALUE profile_total_weight(VALUE self) { return LL2NUM(holder_of(self)->profile.total_weight()); }

// #sampling_hz -> the rate the timer ran at (Profile::sampling_hz); #overhead_ratio -> the
// profiler's CPU over the process's, nil when not measured (no overhead budget).
VALUE profile_sampling_hz(VALUE self) { return DBL2NUM(holder_of(self)->profile.sampling_hz()); }
VALUE profile_overhead_ratio(VALUE self) {
  const double ratio = holder_of(self)->profile.overhead_ratio();
  return ratio < 0 ? Qnil : DBL2NUM(ratio);
}

// #vm_state_totals -> {running: ns, gvl_blocked: ns, gvl_wait: ns, gc_mark: ns, gc_sweep: ns}:
// every state by its name (profile/vm_state.hh), in the model's order.
VALUE profile_vm_state_totals(VALUE self) {
  int64_t totals[kVmStateCount] = {};
  for (const Sample& s : holder_of(self)->profile.samples) totals[s.vm_state] += s.weight_ns;
  VALUE out = rb_hash_new();
  for (int i = 0; i < kVmStateCount; i++) rb_hash_aset(out, sym(vm_state_names(static_cast<VmState>(i)).name), LL2NUM(totals[i]));
  return out;
}

// [[label, path, self, total], ...] for the functions with weight in `compute(profile)`
// (function_rows).
template <typename Compute>
VALUE totals_to_ruby(VALUE self, Compute&& compute) {
  const Profile& p = holder_of(self)->profile;
  std::vector<FunctionRow>* rows = new (std::nothrow) std::vector<FunctionRow>();
  if (!rows) rb_memerror();
  try {
    *rows = function_rows(p, compute(p));
  } catch (const std::bad_alloc&) {
    delete rows;
    rb_memerror();
  }
  VALUE out = rb_ary_new_capa(static_cast<long>(rows->size()));
  for (const FunctionRow& f : *rows) {
    rb_ary_push(out, rb_ary_new_from_args(4, utf8_string(f.label), utf8_string(f.path), LL2NUM(static_cast<long long>(f.self)),
                                          LL2NUM(static_cast<long long>(f.total))));
  }
  delete rows;  // no Ruby call above raises but NoMemoryError, which would leak only this
  return out;
}

// #function_totals(by_name = false) -> [[label, path, self_ns, total_ns], ...] for functions
// with weight; by_name: a function is its label alone (methods of one name in several files
// are one, a sample counted once in its total), the path that of its first frame.
VALUE profile_function_totals(int argc, VALUE* argv, VALUE self) {
  VALUE by_name;
  rb_scan_args(argc, argv, "01", &by_name);
  const bool merged = RTEST(by_name);
  return totals_to_ruby(self, [merged](const Profile& p) { return function_totals(p, merged); });
}

// #allocation_totals -> [[label, path, self_objects, total_objects], ...]: estimated objects
// allocated by each function (self: as the allocating frame).
VALUE profile_allocation_totals(VALUE self) {
  return totals_to_ruby(self, [](const Profile& p) { return allocation_totals(p); });
}

// #diff_totals(target, allocations) -> [[label, path, base_self, target_self, base_total,
// target_total], ...]: this profile's and `target`'s functions side by side, ranked by change
// (views/totals_diff.hh: `rperf diff`); allocations: by objects allocated.
VALUE profile_diff_totals(VALUE self, VALUE target, VALUE allocations) {
  const Profile& base = holder_of(self)->profile;
  const Profile& other = holder_of(target)->profile;
  const bool by_objects = RTEST(allocations);
  struct Diff {
    std::vector<FunctionRow> base, target;
    std::vector<TotalsDiffRow> rows;
  };
  Diff* d = new (std::nothrow) Diff();
  if (!d) rb_memerror();
  try {
    d->base = function_rows(base, by_objects ? allocation_totals(base) : function_totals(base));
    d->target = function_rows(other, by_objects ? allocation_totals(other) : function_totals(other));
    d->rows = diff_totals(d->base, d->target);
  } catch (const std::bad_alloc&) {
    delete d;
    rb_memerror();
  }
  VALUE out = rb_ary_new_capa(static_cast<long>(d->rows.size()));
  for (const TotalsDiffRow& r : d->rows) {
    const FunctionRow& f = r.target >= 0 ? d->target[r.target] : d->base[r.base];
    VALUE row = rb_ary_new_capa(6);
    rb_ary_push(row, utf8_string(f.label));
    rb_ary_push(row, utf8_string(f.path));
    for (double v : {r.base_self, r.target_self, r.base_total, r.target_total}) rb_ary_push(row, LL2NUM(static_cast<long long>(v)));
    rb_ary_push(out, row);
  }
  delete d;  // no Ruby call above raises but NoMemoryError, which would leak only this
  return out;
}

// #label_state_totals(keys) -> [[[value, ...], {running: ns, gvl_blocked: ns, ...}], ...]: the
// time in each VM state per combination of the values of `keys` (Strings: label keys by their
// text; a value "" where a set has not the key). Rperf::Metrics's series.
VALUE profile_label_state_totals(VALUE self, VALUE keys) {
  const Profile& p = holder_of(self)->profile;
  Check_Type(keys, T_ARRAY);
  for (long i = 0; i < RARRAY_LEN(keys); i++) Check_Type(RARRAY_AREF(keys, i), T_STRING);
  struct Totals {
    std::vector<std::string> keys;
    std::vector<LabelStateTotal> rows;
  };
  Totals* t = new (std::nothrow) Totals();
  if (!t) rb_memerror();
  try {
    for (long i = 0; i < RARRAY_LEN(keys); i++) {
      VALUE key = RARRAY_AREF(keys, i);
      t->keys.emplace_back(RSTRING_PTR(key), static_cast<size_t>(RSTRING_LEN(key)));
    }
    t->rows = label_state_totals(p, t->keys);
  } catch (const std::bad_alloc&) {
    delete t;
    rb_memerror();
  }
  VALUE out = rb_ary_new_capa(static_cast<long>(t->rows.size()));
  for (const LabelStateTotal& row : t->rows) {
    VALUE values = rb_ary_new_capa(static_cast<long>(row.values.size()));
    for (const std::string& v : row.values) rb_ary_push(values, utf8_string(v));
    VALUE states = rb_hash_new();
    for (int i = 0; i < kVmStateCount; i++) rb_hash_aset(states, sym(vm_state_names(static_cast<VmState>(i)).name), LL2NUM(row.weight_ns[i]));
    rb_ary_push(out, rb_ary_new_from_args(2, values, states));
  }
  delete t;  // no Ruby call above raises but NoMemoryError, which would leak only this
  return out;
}

// #allocation_count -> estimated objects allocated in all (0 without allocation profiling).
VALUE profile_allocation_count(VALUE self) {
  int64_t n = 0;
  for (const AllocationSample& a : holder_of(self)->profile.allocations) n += a.count;
  return LL2NUM(n);
}

}  // namespace

VALUE profile_class() { return g_profile_class; }

VALUE wrap_profile(ProfileHolder* holder) { return TypedData_Wrap_Struct(g_profile_class, &kProfileType, holder); }

ProfileHolder* holder_of(VALUE obj) { return static_cast<ProfileHolder*>(rb_check_typeddata(obj, &kProfileType)); }

std::shared_ptr<const IdleSamples> idle_samples_of(ProfileHolder* h) {
  if (!h->idle) h->idle = std::make_shared<const IdleSamples>(h->profile);
  return h->idle;
}

void init_profile_binding(VALUE native) {
  g_view_link = rb_intern("__rperf_native_profile");  // no '@': hidden from instance_variables
  g_profile_class = rb_define_class_under(native, "Profile", rb_cObject);
  rb_undef_alloc_func(g_profile_class);
  rb_define_singleton_method(g_profile_class, "from_hash", RUBY_METHOD_FUNC(profile_s_from_hash), 1);
  rb_define_method(g_profile_class, "to_h", RUBY_METHOD_FUNC(profile_to_h), 0);
  rb_define_method(g_profile_class, "fold_lines!", RUBY_METHOD_FUNC(profile_fold_lines), 0);
  rb_define_method(g_profile_class, "lines?", RUBY_METHOD_FUNC(profile_lines_p), 0);
  rb_define_method(g_profile_class, "merge_child!", RUBY_METHOD_FUNC(profile_merge_child), 2);
  rb_define_method(g_profile_class, "diff_totals", RUBY_METHOD_FUNC(profile_diff_totals), 2);
  rb_define_method(g_profile_class, "set_attribute", RUBY_METHOD_FUNC(profile_set_attribute), 2);
  rb_define_method(g_profile_class, "meta=", RUBY_METHOD_FUNC(profile_set_meta), 1);
  rb_define_method(g_profile_class, "attribute", RUBY_METHOD_FUNC(profile_attribute), 1);
  rb_define_method(g_profile_class, "transformed", RUBY_METHOD_FUNC(profile_transformed), 1);
  rb_define_method(g_profile_class, "meta?", RUBY_METHOD_FUNC(profile_meta_p), 0);
  rb_define_method(g_profile_class, "meta", RUBY_METHOD_FUNC(profile_meta), 0);
  rb_define_method(g_profile_class, "saved_summary", RUBY_METHOD_FUNC(profile_saved_summary), 0);
  rb_define_method(g_profile_class, "samples?", RUBY_METHOD_FUNC(profile_samples_p), 0);
  rb_define_method(g_profile_class, "allocations?", RUBY_METHOD_FUNC(profile_allocations_p), 0);
  rb_define_method(g_profile_class, "raw?", RUBY_METHOD_FUNC(profile_raw_p), 0);
  rb_define_method(g_profile_class, "label_sets", RUBY_METHOD_FUNC(profile_label_sets), 0);
  rb_define_singleton_method(g_profile_class, "of_view", RUBY_METHOD_FUNC(profile_s_of_view), 1);
  rb_define_method(g_profile_class, "stack_tree", RUBY_METHOD_FUNC(profile_stack_tree), 2);
  rb_define_singleton_method(g_profile_class, "views_built", RUBY_METHOD_FUNC(profile_s_views_built), 0);
  rb_define_method(g_profile_class, "summary", RUBY_METHOD_FUNC(profile_summary), 0);
  rb_define_method(g_profile_class, "total_weight", RUBY_METHOD_FUNC(profile_total_weight), 0);
  rb_define_method(g_profile_class, "sampling_hz", RUBY_METHOD_FUNC(profile_sampling_hz), 0);
  rb_define_method(g_profile_class, "overhead_ratio", RUBY_METHOD_FUNC(profile_overhead_ratio), 0);
  rb_define_method(g_profile_class, "vm_state_totals", RUBY_METHOD_FUNC(profile_vm_state_totals), 0);
  rb_define_method(g_profile_class, "function_totals", RUBY_METHOD_FUNC(profile_function_totals), -1);
  rb_define_method(g_profile_class, "allocation_totals", RUBY_METHOD_FUNC(profile_allocation_totals), 0);
  rb_define_method(g_profile_class, "allocation_count", RUBY_METHOD_FUNC(profile_allocation_count), 0);
  rb_define_method(g_profile_class, "label_state_totals", RUBY_METHOD_FUNC(profile_label_state_totals), 1);
}

}  // namespace rperf
