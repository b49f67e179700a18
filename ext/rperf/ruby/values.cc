#include "ruby/values.hh"

#include <ruby/encoding.h>

#include <algorithm>
#include <new>

#include "io/encoders.hh"
#include "profile/label_value.hh"
#include "util/utf8.hh"

namespace rperf {

VALUE sym(const char* name) { return ID2SYM(rb_intern(name)); }

VALUE utf8_string(const std::string& s) { return rb_enc_interned_str(s.data(), static_cast<long>(s.size()), rb_utf8_encoding()); }

VALUE text_string(const std::string& s) {
  if (utf8_valid(s.data(), s.size())) return utf8_string(s);
  std::string valid;
  try {
    valid = valid_utf8(s);
  } catch (const std::bad_alloc&) {
    rb_memerror();
  }
  return utf8_string(valid);
}

namespace {
// A Symbol of the bytes as given: UTF-8, or binary when they are not valid UTF-8 (a damaged
// file's key; rb_intern3 raises EncodingError for invalid UTF-8).
VALUE bytes_symbol(const char* p, size_t len) {
  rb_encoding* enc = utf8_valid(p, len) ? rb_utf8_encoding() : rb_ascii8bit_encoding();
  return ID2SYM(rb_intern3(p, static_cast<long>(len), enc));
}
VALUE key_symbol(const std::string& key) { return bytes_symbol(key.data(), key.size()); }

std::string text_of(VALUE v) {  // String or Symbol
  if (SYMBOL_P(v)) v = rb_sym2str(v);
  return std::string(RSTRING_PTR(v), static_cast<size_t>(RSTRING_LEN(v)));
}

struct HashToJson {
  JsonValue* out;
  int depth;
  bool ok;
};

int hash_member(VALUE key, VALUE value, VALUE arg) {
  auto* ctx = reinterpret_cast<HashToJson*>(arg);
  if (!SYMBOL_P(key) && !RB_TYPE_P(key, T_STRING)) {
    ctx->ok = false;
    return ST_STOP;
  }
  JsonValue v;
  if (!ruby_to_json(value, v, ctx->depth + 1)) {
    ctx->ok = false;
    return ST_STOP;
  }
  ctx->out->set(text_of(key), std::move(v));
  return ST_CONTINUE;
}

}  // namespace

bool int64_of(VALUE v, int64_t& out) {
  if (FIXNUM_P(v)) {
    out = FIX2LONG(v);
    return true;
  }
  if (!RB_TYPE_P(v, T_BIGNUM)) return false;
  int overflow = rb_integer_pack(v, &out, 1, sizeof(out), 0, INTEGER_PACK_LSWORD_FIRST | INTEGER_PACK_NATIVE_BYTE_ORDER | INTEGER_PACK_2COMP);
  return overflow != 2 && overflow != -2;  // +-2: does not fit
}

VALUE json_to_ruby(const JsonValue& v) {
  switch (v.kind()) {
    case JsonValue::Kind::kNull: return Qnil;
    case JsonValue::Kind::kBool: return v.as_bool() ? Qtrue : Qfalse;
    case JsonValue::Kind::kInt: return LL2NUM(v.as_int());
    case JsonValue::Kind::kDouble: return DBL2NUM(v.as_double());
    case JsonValue::Kind::kString: return utf8_string(v.as_string());
    case JsonValue::Kind::kSymbol: return key_symbol(v.as_string());
    case JsonValue::Kind::kArray: {
      VALUE a = rb_ary_new_capa(static_cast<long>(v.items().size()));
      for (const JsonValue& item : v.items()) rb_ary_push(a, json_to_ruby(item));
      return a;
    }
    case JsonValue::Kind::kObject: {
      VALUE h = rb_hash_new();
      for (const JsonValue::Member& m : v.members()) rb_hash_aset(h, key_symbol(m.first), json_to_ruby(m.second));
      return h;
    }
  }
  return Qnil;
}

bool ruby_to_json(VALUE v, JsonValue& out, int depth) {
  if (depth > 64) return false;
  if (NIL_P(v)) out = JsonValue();
  else if (v == Qtrue || v == Qfalse) out = JsonValue::boolean(v == Qtrue);
  else if (RB_INTEGER_TYPE_P(v)) {
    int64_t i;
    if (!int64_of(v, i)) return false;
    out = JsonValue::integer(i);
  } else if (RB_FLOAT_TYPE_P(v)) out = JsonValue::real(RFLOAT_VALUE(v));
  else if (RB_TYPE_P(v, T_STRING)) out = JsonValue::string(text_of(v));
  else if (SYMBOL_P(v)) out = JsonValue::symbol(text_of(v));
  else if (RB_TYPE_P(v, T_ARRAY)) {
    out = JsonValue::array();
    for (long i = 0; i < RARRAY_LEN(v); i++) {
      JsonValue item;
      if (!ruby_to_json(RARRAY_AREF(v, i), item, depth + 1)) return false;
      out.push(std::move(item));
    }
  } else if (RB_TYPE_P(v, T_HASH)) {
    out = JsonValue::object();
    HashToJson ctx{&out, depth, true};
    rb_hash_foreach(v, hash_member, reinterpret_cast<VALUE>(&ctx));
    return ctx.ok;
  } else {
    return false;
  }
  return true;
}

namespace {
int push_label_pair(VALUE key, VALUE value, VALUE pairs) {
  rb_ary_push(pairs, key);
  rb_ary_push(pairs, value);
  return ST_CONTINUE;
}

// Mark the Arrays that plain_label_value makes of Hashes ([g_hash_mark, key, value, ...]) and
// of Integers beyond 64 bits ([g_bignum_mark, decimal String]).
VALUE g_hash_mark = Qnil, g_bignum_mark = Qnil;

VALUE new_mark(VALUE& mark) {
  if (NIL_P(mark)) {
    mark = rb_obj_freeze(rb_obj_alloc(rb_cObject));
    rb_gc_register_mark_object(mark);
  }
  return mark;
}

constexpr int kMaxLabelDepth = 32;  // deeper (or recursive) Arrays and Hashes: their to_s

// What to_s raises goes on: it may be another thread's Thread#raise or Thread#kill, which lands
// in whatever the thread runs (swallowing it left a killed thread running, and a process waiting
// for it at exit hung). No C++ object is alive here.
VALUE text_instead(VALUE v) { return rb_obj_as_string(v); }

// A label value as read_label_pairs can encode it without calling Ruby: nil, true, false,
// Strings, Symbols, Integers (int64), Floats and Arrays of those as they are; a Hash as an Array
// [hash_mark, key, value, ...], an Integer beyond 64 bits as [bignum_mark, its digits]; anything
// else by its to_s. Every
// Ruby call of the conversion is made here.
VALUE plain_label_value(VALUE v, int depth) {
  int64_t i;
  if (NIL_P(v) || v == Qtrue || v == Qfalse || RB_TYPE_P(v, T_STRING) || SYMBOL_P(v) || RB_FLOAT_TYPE_P(v)) return v;
  if (RB_INTEGER_TYPE_P(v)) return int64_of(v, i) ? v : rb_ary_new_from_args(2, new_mark(g_bignum_mark), rb_big2str(v, 10));
  if (depth >= kMaxLabelDepth || (!RB_TYPE_P(v, T_ARRAY) && !RB_TYPE_P(v, T_HASH))) return text_instead(v);
  VALUE items;
  if (RB_TYPE_P(v, T_HASH)) {
    items = rb_ary_new_capa(1 + 2 * static_cast<long>(RHASH_SIZE(v)));
    rb_ary_push(items, new_mark(g_hash_mark));
    rb_hash_foreach(v, push_label_pair, items);  // runs no Ruby code
    for (long k = 1; k < RARRAY_LEN(items); k++) rb_ary_store(items, k, plain_label_value(RARRAY_AREF(items, k), depth + 1));
  } else {
    items = rb_ary_new_capa(RARRAY_LEN(v));
    for (long k = 0; k < RARRAY_LEN(v); k++) rb_ary_push(items, plain_label_value(RARRAY_AREF(v, k), depth + 1));
  }
  return items;
}

std::string bytes_of(VALUE str) { return std::string(RSTRING_PTR(str), static_cast<size_t>(RSTRING_LEN(str))); }

// Encodes what plain_label_value made (label_value.hh), calling no Ruby.
std::string encode_plain(VALUE v) {
  if (NIL_P(v)) return label_value::nil();
  if (v == Qtrue || v == Qfalse) return label_value::boolean(v == Qtrue);
  if (RB_TYPE_P(v, T_STRING)) return label_value::string(bytes_of(v));
  if (SYMBOL_P(v)) return label_value::symbol(bytes_of(rb_sym2str(v)));
  if (RB_FLOAT_TYPE_P(v)) return label_value::real(RFLOAT_VALUE(v));
  int64_t i;
  if (RB_INTEGER_TYPE_P(v) && int64_of(v, i)) return label_value::integer(i);
  if (!RB_TYPE_P(v, T_ARRAY)) return label_value::string("?");  // not made by plain_label_value
  const long n = RARRAY_LEN(v);
  if (n == 2 && RARRAY_AREF(v, 0) == g_bignum_mark) return label_value::integer_text(bytes_of(RARRAY_AREF(v, 1)));
  if (n > 0 && RARRAY_AREF(v, 0) == g_hash_mark) {
    std::vector<std::pair<std::string, std::string>> members;
    for (long k = 1; k + 1 < n; k += 2) members.emplace_back(encode_plain(RARRAY_AREF(v, k)), encode_plain(RARRAY_AREF(v, k + 1)));
    return label_value::hash(members);
  }
  std::vector<std::string> items;
  for (long k = 0; k < n; k++) items.push_back(encode_plain(RARRAY_AREF(v, k)));
  return label_value::array(items);
}

// A Ruby object for an encoded value: frozen, as the label sets holding it.
VALUE decode_label_value(std::string_view v) {
  namespace lv = label_value;
  switch (lv::type_of(v)) {
    case lv::kString: {
      std::string_view t = lv::text_of(v);
      return rb_enc_interned_str(t.data(), static_cast<long>(t.size()), rb_utf8_encoding());
    }
    case lv::kSymbol: {
      std::string_view t = lv::text_of(v);
      return bytes_symbol(t.data(), t.size());
    }
    case lv::kInteger: {
      int64_t i;
      if (lv::int64_of(v, i)) return LL2NUM(i);
      std::string_view t = lv::text_of(v);
      return rb_str_to_inum(rb_str_new(t.data(), static_cast<long>(t.size())), 10, 0);
    }
    case lv::kFloat: return DBL2NUM(lv::real_of(v));
    case lv::kTrue: return Qtrue;
    case lv::kFalse: return Qfalse;
    case lv::kNil: return Qnil;
    case lv::kArray: {
      VALUE a = rb_ary_new();
      size_t pos = 1;
      std::string_view item;
      while (lv::next_item(v, pos, item)) rb_ary_push(a, decode_label_value(item));
      return rb_ary_freeze(a);
    }
    case lv::kHash: {
      VALUE h = rb_hash_new();
      size_t pos = 1;
      std::string_view k, item;
      while (lv::next_item(v, pos, k) && lv::next_item(v, pos, item)) rb_hash_aset(h, decode_label_value(k), decode_label_value(item));
      return rb_hash_freeze(h);
    }
  }
  return Qnil;
}
}  // namespace

VALUE label_pairs(VALUE hash) {
  VALUE pairs = rb_ary_new_capa(2 * static_cast<long>(RHASH_SIZE(hash)));
  rb_hash_foreach(hash, push_label_pair, pairs);  // runs no Ruby code: the Hash cannot change
  for (long i = 0; i < RARRAY_LEN(pairs); i++) rb_ary_store(pairs, i, plain_label_value(RARRAY_AREF(pairs, i), 0));
  return pairs;
}

namespace {
// A label key or value that encode_plain takes as it is (no Array, Hash, Bignum or to_s).
bool scalar_label_value(VALUE v) {
  int64_t i;
  return NIL_P(v) || v == Qtrue || v == Qfalse || RB_TYPE_P(v, T_STRING) || SYMBOL_P(v) || RB_FLOAT_TYPE_P(v) ||
         (RB_INTEGER_TYPE_P(v) && int64_of(v, i));
}

int push_inline_pair(VALUE key, VALUE value, VALUE arg) {
  auto* out = reinterpret_cast<InlineLabelPairs*>(arg);
  if (out->pairs == kInlineLabelPairs || !scalar_label_value(key) || !scalar_label_value(value)) {
    out->pairs = -1;
    return ST_STOP;
  }
  out->items[2 * out->pairs] = key;
  out->items[2 * out->pairs + 1] = value;
  out->pairs++;
  return ST_CONTINUE;
}
}  // namespace

bool inline_label_pairs(VALUE hash, InlineLabelPairs& out) {
  out.pairs = 0;
  if (RHASH_SIZE(hash) > static_cast<size_t>(kInlineLabelPairs)) return false;
  rb_hash_foreach(hash, push_inline_pair, reinterpret_cast<VALUE>(&out));  // runs no Ruby code
  return out.pairs >= 0;
}

LabelCheck read_label_pairs(VALUE pairs, bool check_keys_utf8, bool nil_removes, std::vector<LabelEdit>& out, long& bad) {
  // No Ruby object is made below (no GC, so no compaction): the Array's storage stays put.
  return read_label_items(RARRAY_CONST_PTR(pairs), RARRAY_LEN(pairs) / 2, check_keys_utf8, nil_removes, out, bad);
}

LabelCheck read_label_items(const VALUE* items, long n, bool check_keys_utf8, bool nil_removes, std::vector<LabelEdit>& out, long& bad) {
  out.reserve(out.size() + static_cast<size_t>(n));
  for (long i = 0; i < n; i++) {
    VALUE key = items[2 * i], value = items[2 * i + 1];
    bad = i;
    LabelEdit e;
    if (check_keys_utf8 && (SYMBOL_P(key) || RB_TYPE_P(key, T_STRING))) {
      VALUE name = SYMBOL_P(key) ? rb_sym2str(key) : key;
      if (!utf8_valid(RSTRING_PTR(name), static_cast<size_t>(RSTRING_LEN(name)))) return LabelCheck::kInvalidUtf8;
    }
    // Keys as given: a Symbol stays a Symbol, a String a String, 1 stays 1 (rperf 0.11).
    e.label.key = encode_plain(key);
    if (NIL_P(value) && nil_removes) e.remove = true;
    else e.label.value = encode_plain(value);
    out.push_back(std::move(e));
  }
  bad = -1;
  return LabelCheck::kOk;
}

void apply_label_edits(const std::vector<LabelEdit>& edits, LabelSet& set) {
  for (const LabelEdit& e : edits) {
    auto same_key = std::find_if(set.begin(), set.end(), [&](const Label& l) { return l.key == e.label.key; });
    if (same_key == set.end()) {
      if (!e.remove) set.push_back(e.label);
    } else if (e.remove) {
      set.erase(same_key);
    } else {
      *same_key = e.label;
    }
  }
}

void merge_ruby_labels(VALUE hash, LabelSet& set) {
  VALUE pairs = label_pairs(hash);
  std::vector<LabelEdit> edits;
  long bad;
  read_label_pairs(pairs, false, true, edits, bad);
  apply_label_edits(edits, set);
  RB_GC_GUARD(pairs);
}

VALUE label_set_to_ruby(const LabelSet& set) {
  VALUE h = rb_hash_new();
  for (const Label& l : set) rb_hash_aset(h, decode_label_value(l.key), decode_label_value(l.value));
  return rb_hash_freeze(h);
}

}  // namespace rperf
