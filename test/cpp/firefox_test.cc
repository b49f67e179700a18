// The Firefox Profiler encoder (io/firefox.cc): the processed profile read back with the JSON
// reader and checked table by table (the browser test loads it in the profiler itself).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include "io/encoders.hh"
#include "io/json_reader.hh"
#include "io/output.hh"
#include "test_profiles.hh"

using namespace rperf;
using namespace rperf::fixtures;

namespace {

struct DomBuilder {
  using Value = JsonValue;
  Value null_value() { return JsonValue(); }
  Value true_value() { return JsonValue::boolean(true); }
  Value false_value() { return JsonValue::boolean(false); }
  Value integer(const char* t, size_t n) { return JsonValue::integer(std::strtoll(std::string(t, n).c_str(), nullptr, 10)); }
  Value real(const char* t, size_t n) { return JsonValue::real(std::strtod(std::string(t, n).c_str(), nullptr)); }
  Value string(const char* s, size_t n) { return JsonValue::string(std::string(s, n)); }
  Value key(const char* s, size_t n) { return JsonValue::string(std::string(s, n)); }
  Value begin_array() { return JsonValue::array(); }
  void push(Value& a, Value v) { a.push(std::move(v)); }
  bool find_array(const char*, size_t, Value&) { return false; }
  Value end_array(Value a, const char*, size_t, size_t, bool) { return a; }
  Value begin_object() { return JsonValue::object(); }
  void set(Value& o, Value k, Value v) { o.set(k.as_string(), std::move(v)); }
  Value end_object(Value o) { return o; }
  const char* refusal() const { return nullptr; }
};

JsonValue encode(const Profile& p, FirefoxOptions options = FirefoxOptions()) {
  std::string text;
  {
    Output out(&text, OutputOptions());
    encode_firefox(p, options, out);
    EXPECT_EQ(out.finish(), 0);
  }
  DomBuilder builder;
  JsonReader<DomBuilder> reader(text.data(), text.size(), builder);
  JsonValue doc;
  EXPECT_TRUE(reader.parse(doc)) << reader.error() << "\n" << text.substr(0, 2000);
  return doc;
}

const JsonValue& at(const JsonValue& v, const std::string& key) {
  const JsonValue* member = v.get(key);
  static const JsonValue kNull;
  EXPECT_NE(member, nullptr) << "missing " << key;
  return member ? *member : kNull;
}

std::string str(const JsonValue& thread, const JsonValue& index) {
  return at(thread, "stringArray").items()[static_cast<size_t>(index.as_int())].as_string();
}

// A sample's stack as "name;name;..." root first, with each frame's category name.
std::string stack_names(const JsonValue& doc, const JsonValue& thread, int64_t stack, std::string* categories = nullptr) {
  const JsonValue& stacks = at(thread, "stackTable");
  const JsonValue& frames = at(thread, "frameTable");
  const JsonValue& funcs = at(thread, "funcTable");
  const JsonValue& cats = at(at(doc, "meta"), "categories");
  std::vector<std::string> names, cat_names;
  for (int64_t s = stack; s >= 0;) {
    auto i = static_cast<size_t>(s);
    auto frame = static_cast<size_t>(at(stacks, "frame").items()[i].as_int());
    auto func = static_cast<size_t>(at(frames, "func").items()[frame].as_int());
    names.insert(names.begin(), str(thread, at(funcs, "name").items()[func]));
    const JsonValue& cat = at(cats.items()[static_cast<size_t>(at(frames, "category").items()[frame].as_int())], "name");
    int64_t sub = at(frames, "subcategory").items()[frame].as_int();
    const JsonValue& subs = at(cats.items()[static_cast<size_t>(at(frames, "category").items()[frame].as_int())], "subcategories");
    cat_names.insert(cat_names.begin(), cat.as_string() + (sub ? "/" + subs.items()[static_cast<size_t>(sub)].as_string() : ""));
    const JsonValue& prefix = at(stacks, "prefix").items()[i];
    s = prefix.is_null() ? -1 : prefix.as_int();
  }
  std::string out, cats_out;
  for (size_t i = 0; i < names.size(); i++) {
    out += (i ? ";" : "") + names[i];
    cats_out += (i ? ";" : "") + cat_names[i];
  }
  if (categories) *categories = cats_out;
  return out;
}

// Every column of a table has `length` entries.
void expect_consistent(const JsonValue& table, const char* what) {
  size_t length = static_cast<size_t>(at(table, "length").as_int());
  for (const auto& [key, column] : table.members()) {
    if (column.kind() == JsonValue::Kind::kArray) {
      EXPECT_EQ(column.items().size(), length) << what << "." << key;
    }
  }
}

constexpr const char* kGem = "/home/u/.gem/ruby/3.3.0/gems/rack-3.1.8/lib/rack/builder.rb";
constexpr const char* kStdlib = "/opt/ruby/lib/ruby/3.3.0/json/common.rb";

// Two threads of the root process and one thread of a child (%pid=4242); thread 1 runs app
// code, calls into a gem and the stdlib, blocks off the GVL for three samples and carries
// an endpoint label; thread 2 waits for the GVL; the child runs in GC.
Profile timeline_profile() {
  Profile p = make_profile(
      {{"app.rb", "<main>", 1},       // 0
       {"app.rb", "Foo#run", 10},     // 1
       {kGem, "Rack::Builder#call", 20},  // 2
       {"<C method>", "IO#read", 0},  // 3
       {kStdlib, "JSON.parse", 5},    // 4
       {"app.rb", "Foo#run", 11}},    // 5: same method, another line
      {
          // thread 1: 1..3 ms running (labelled), 3..6 ms blocked (labelled), 6..7 ms running
          {{1, 0}, 1000000, 1, 1, kRunning, 2000000},
          {{5, 0}, 1000000, 1, 1, kRunning, 3000000},
          {{3, 2, 1, 0}, 1000000, 1, 1, kGvlBlocked, 4000000},
          {{3, 2, 1, 0}, 1000000, 1, 1, kGvlBlocked, 5000000},
          {{3, 2, 1, 0}, 1000000, 1, 1, kGvlBlocked, 6000000},
          {{4, 0}, 1000000, 1, 0, kRunning, 7000000},
          // thread 2: waits 0..2 ms, then a sample with no Ruby frame
          {{1, 0}, 2000000, 2, 0, kGvlWait, 2000000},
          {{}, 500000, 2, 0, kRunning, 2500000},
          // child process thread 1, out of time order: GC marking 1..3 ms
          {{0}, 1000000, 1, 2, kGcMark, 3000000},
          {{0}, 1000000, 1, 2, kGcMark, 2000000},
      },
      {{}, {{"endpoint", "GET /users"}}, {{"%pid", "4242"}}});
  p.timestamps = true;
  p.header.set("start_time_ns", JsonValue::integer(1700000000123456789));
  return p;
}

}  // namespace

TEST(Firefox, ProcessedProfileVersion55WithMetaCategoriesAndSchema) {
  JsonValue doc = encode(timeline_profile());
  const JsonValue& meta = at(doc, "meta");
  EXPECT_EQ(at(meta, "preprocessedProfileVersion").as_int(), 55);
  EXPECT_DOUBLE_EQ(at(meta, "interval").as_double(), 1.0);  // 1000 Hz
  EXPECT_DOUBLE_EQ(at(meta, "startTime").as_double(), 1700000000123.456789);
  EXPECT_EQ(at(meta, "product").as_string(), "rperf wall");
  std::vector<std::string> categories;
  for (const JsonValue& c : at(meta, "categories").items()) categories.push_back(at(c, "name").as_string());
  EXPECT_EQ(categories, (std::vector<std::string>{"Other", "Ruby: app", "Ruby: gems", "Ruby: stdlib", "C", "GC", "GVL"}));
  EXPECT_EQ(at(at(meta, "categories").items()[0], "color").as_string(), "grey");  // the profiler's default category
  std::set<std::string> schemas;
  for (const JsonValue& s : at(meta, "markerSchema").items()) {
    schemas.insert(at(s, "name").as_string());
    EXPECT_EQ(at(s, "fields").kind(), JsonValue::Kind::kArray);  // version 55: fields, not data
  }
  EXPECT_EQ(schemas, (std::set<std::string>{"GVL", "GC", "Label"}));
  const JsonValue& rperf = at(meta, "rperf");
  EXPECT_TRUE(at(rperf, "timeline").as_bool());
  EXPECT_EQ(at(rperf, "processes").as_int(), 2);
  EXPECT_EQ(at(rperf, "threads").as_int(), 3);
  EXPECT_EQ(at(doc, "libs").items().size(), 0u);
}

TEST(Firefox, OneTrackPerThreadAndProcess) {
  JsonValue doc = encode(timeline_profile(), FirefoxOptions{"", "100"});
  const auto& threads = at(doc, "threads").items();
  ASSERT_EQ(threads.size(), 3u);
  EXPECT_EQ(at(threads[0], "name").as_string(), "Thread 1 (pid 100)");
  EXPECT_EQ(at(threads[1], "name").as_string(), "Thread 2 (pid 100)");
  EXPECT_EQ(at(threads[2], "name").as_string(), "Thread 1 (pid 4242)");
  EXPECT_EQ(at(threads[0], "pid").as_string(), "100");
  EXPECT_EQ(at(threads[2], "pid").as_string(), "4242");
  EXPECT_TRUE(at(threads[0], "isMainThread").as_bool());
  EXPECT_FALSE(at(threads[1], "isMainThread").as_bool());
  EXPECT_TRUE(at(threads[2], "isMainThread").as_bool());
  EXPECT_EQ(at(threads[1], "tid").as_int(), 2);
  for (const JsonValue& t : threads) {
    for (const char* table : {"samples", "markers", "stackTable", "frameTable", "funcTable", "resourceTable", "nativeSymbols"}) {
      expect_consistent(at(t, table), table);
    }
  }
  // A single process: names without pids.
  Profile single = make_profile({{"a.rb", "a", 1}}, {{{0}, 10, 1}, {{0}, 10, 3}});
  JsonValue one = encode(single);
  EXPECT_EQ(at(at(one, "threads").items()[1], "name").as_string(), "Thread 3");
  EXPECT_EQ(at(at(one, "meta"), "initialVisibleThreads").items().size(), 2u);
}

TEST(Firefox, SamplesInTimeOrderWithWeightsInMilliseconds) {
  JsonValue doc = encode(timeline_profile());
  const auto& threads = at(doc, "threads").items();
  const JsonValue& samples = at(threads[0], "samples");
  EXPECT_EQ(at(samples, "weightType").as_string(), "tracing-ms");
  ASSERT_EQ(at(samples, "length").as_int(), 6);
  double total = 0;
  for (const auto& t : threads) {
    for (const JsonValue& w : at(at(t, "samples"), "weight").items()) total += w.as_double();
  }
  EXPECT_DOUBLE_EQ(total, 10.5);  // the profile's total weight, in ms
  const auto& child_times = at(at(threads[2], "samples"), "time").items();
  EXPECT_DOUBLE_EQ(child_times[0].as_double(), 1.0);  // sorted; each at its interval's start
  EXPECT_DOUBLE_EQ(child_times[1].as_double(), 2.0);
  EXPECT_DOUBLE_EQ(at(threads[1], "registerTime").as_double(), 0.0);
  EXPECT_DOUBLE_EQ(at(threads[0], "registerTime").as_double(), 1.0);
}

TEST(Firefox, StacksRootFirstWithVmStateLeavesAndCategories) {
  JsonValue doc = encode(timeline_profile());
  const auto& threads = at(doc, "threads").items();
  const auto& stacks = at(at(threads[0], "samples"), "stack").items();
  std::string cats;
  EXPECT_EQ(stack_names(doc, threads[0], stacks[0].as_int(), &cats), "<main>;Foo#run");
  EXPECT_EQ(cats, "Ruby: app;Ruby: app");
  EXPECT_EQ(stack_names(doc, threads[0], stacks[2].as_int(), &cats), "<main>;Foo#run;Rack::Builder#call;IO#read;[GVL blocked]");
  EXPECT_EQ(cats, "Ruby: app;Ruby: app;Ruby: gems/rack;C/gems;GVL/blocked");  // the C method called from the gem
  EXPECT_EQ(stack_names(doc, threads[0], stacks[5].as_int(), &cats), "<main>;JSON.parse");
  EXPECT_EQ(cats, "Ruby: app;Ruby: stdlib");
  EXPECT_EQ(stacks[2].as_int(), stacks[3].as_int());  // identical samples share their stack

  // Foo#run at lines 10 and 11: one func, two frames with their lines.
  const JsonValue& frames = at(threads[0], "frameTable");
  const JsonValue& funcs = at(threads[0], "funcTable");
  std::vector<int64_t> run_lines;
  for (size_t f = 0; f < frames.get("func")->items().size(); f++) {
    auto func = static_cast<size_t>(at(frames, "func").items()[f].as_int());
    if (str(threads[0], at(funcs, "name").items()[func]) == "Foo#run") run_lines.push_back(at(frames, "line").items()[f].as_int());
  }
  EXPECT_EQ(run_lines, (std::vector<int64_t>{10, 11}));
  std::map<std::string, std::pair<std::string, bool>> func_files;  // name -> (file, isJS)
  for (size_t i = 0; i < at(funcs, "name").items().size(); i++) {
    const JsonValue& file = at(funcs, "fileName").items()[i];
    func_files[str(threads[0], at(funcs, "name").items()[i])] = {file.is_null() ? "" : str(threads[0], file), at(funcs, "isJS").items()[i].as_bool()};
  }
  EXPECT_EQ(func_files["Foo#run"], std::make_pair(std::string("app.rb"), true));
  EXPECT_EQ(func_files["IO#read"], std::make_pair(std::string(""), false));
  EXPECT_EQ(func_files["[GVL blocked]"], std::make_pair(std::string(""), false));

  // Thread 2: a GVL wait leaf, and a stack with no Ruby frame.
  const auto& t2 = at(at(threads[1], "samples"), "stack").items();
  EXPECT_EQ(stack_names(doc, threads[1], t2[0].as_int(), &cats), "<main>;Foo#run;[GVL wait]");
  EXPECT_EQ(cats, "Ruby: app;Ruby: app;GVL/wait");
  EXPECT_EQ(stack_names(doc, threads[1], t2[1].as_int()), kNoRubyFrames);
  EXPECT_EQ(stack_names(doc, threads[2], at(at(threads[2], "samples"), "stack").items()[0].as_int(), &cats), "<main>;[GC marking]");
  EXPECT_EQ(cats, "Ruby: app;GC/mark");
}

TEST(Firefox, VmStatesAndLabelsAsIntervalMarkers) {
  JsonValue doc = encode(timeline_profile());
  const auto& threads = at(doc, "threads").items();
  struct Seen {
    std::string name, data_type, key;
    double start, end;
  };
  auto markers_of = [&](const JsonValue& t) {
    std::vector<Seen> out;
    const JsonValue& m = at(t, "markers");
    for (size_t i = 0; i < static_cast<size_t>(at(m, "length").as_int()); i++) {
      const JsonValue& data = at(m, "data").items()[i];
      EXPECT_EQ(at(m, "phase").items()[i].as_int(), 1);  // interval
      out.push_back({str(t, at(m, "name").items()[i]), at(data, "type").as_string(),
                     data.get("key") ? data.get("key")->as_string() : "", at(m, "startTime").items()[i].as_double(),
                     at(m, "endTime").items()[i].as_double()});
    }
    return out;
  };
  std::vector<Seen> t1 = markers_of(threads[0]);
  ASSERT_EQ(t1.size(), 2u);
  EXPECT_EQ(t1[0].name, "GET /users");  // named by the label's value
  EXPECT_EQ(t1[0].data_type, "Label");
  EXPECT_EQ(t1[0].key, "endpoint");
  EXPECT_DOUBLE_EQ(t1[0].start, 1.0);
  EXPECT_DOUBLE_EQ(t1[0].end, 6.0);
  EXPECT_EQ(t1[1].name, "GVL blocked");  // three samples, one marker
  EXPECT_EQ(t1[1].data_type, "GVL");
  EXPECT_DOUBLE_EQ(t1[1].start, 3.0);
  EXPECT_DOUBLE_EQ(t1[1].end, 6.0);
  std::vector<Seen> t2 = markers_of(threads[1]);
  ASSERT_EQ(t2.size(), 1u);
  EXPECT_EQ(t2[0].name, "GVL wait");
  EXPECT_DOUBLE_EQ(t2[0].start, 0.0);
  EXPECT_DOUBLE_EQ(t2[0].end, 2.0);
  std::vector<Seen> child = markers_of(threads[2]);
  ASSERT_EQ(child.size(), 1u);  // %pid is not a label marker
  EXPECT_EQ(child[0].name, "GC mark");
  EXPECT_DOUBLE_EQ(child[0].start, 1.0);
  EXPECT_DOUBLE_EQ(child[0].end, 3.0);
}

// The events a program counted per unit of work (work_events: Rperf::WorkEvents) go on the
// Label markers of their value; a row of another shape is left out, never a failure.
TEST(Firefox, LabelMarkersCarryTheEventsOfTheirValue) {
  Profile p = timeline_profile();
  JsonValue rows = JsonValue::array();
  JsonValue row = JsonValue::object();
  JsonValue labels = JsonValue::object();
  labels.set("endpoint", JsonValue::string("GET /users"));
  row.set("labels", labels);
  row.set("units", JsonValue::integer(4));
  JsonValue events = JsonValue::object();
  JsonValue sql = JsonValue::object();
  sql.set("count", JsonValue::integer(24));
  sql.set("duration_ns", JsonValue::integer(2000000));
  sql.set("max_per_unit", JsonValue::integer(6));
  events.set("sql.active_record", sql);
  events.set("broken", JsonValue::string("not an object"));
  row.set("events", events);
  rows.push(row);
  rows.push(JsonValue::string("not a row"));
  JsonValue other = JsonValue::object();
  other.set("labels", labels);
  other.set("units", JsonValue::integer(0));  // no run: nothing per run
  rows.push(other);
  p.header.set("work_events", rows);
  JsonValue doc = encode(p);
  const JsonValue& m = at(at(doc, "threads").items()[0], "markers");
  const JsonValue& data = at(m, "data").items()[0];
  EXPECT_EQ(at(data, "type").as_string(), "Label");
  EXPECT_EQ(at(data, "events").as_string(), "4 runs; sql.active_record: 6.0 per run (max 6), 0.50 ms per run");
  EXPECT_EQ(at(m, "data").items()[1].get("events"), nullptr) << "a GVL marker has none";
}

TEST(Firefox, AStateInterruptedOrAfterAGapIsTwoMarkers) {
  Profile p = make_profile({{"a.rb", "a", 1}},
                           {{{0}, 1000000, 1, 0, kGvlBlocked, 1000000},
                            {{0}, 1000000, 1, 0, kRunning, 2000000},
                            {{0}, 1000000, 1, 0, kGvlBlocked, 3000000},
                            {{0}, 1000000, 1, 0, kGvlBlocked, 9000000}});  // 5 ms after the previous one
  p.timestamps = true;
  JsonValue doc = encode(p);
  const JsonValue& m = at(at(doc, "threads").items()[0], "markers");
  ASSERT_EQ(at(m, "length").as_int(), 3);
}

TEST(Firefox, SamplesRecordedAtOneTimeEndOneAfterTheOther) {
  // A GVL wait closed at RESUMED: 3 ms blocked then 1 ms waiting, both recorded at 10 ms.
  Profile p = make_profile({{"a.rb", "a", 1}}, {{{0}, 2000000, 1, 0, kRunning, 6000000},
                                                {{0}, 3000000, 1, 0, kGvlBlocked, 10000000},
                                                {{0}, 1000000, 1, 0, kGvlWait, 10000000}});
  p.timestamps = true;
  JsonValue doc = encode(p);
  const JsonValue& t = at(doc, "threads").items()[0];
  std::vector<double> times;
  for (const JsonValue& v : at(at(t, "samples"), "time").items()) times.push_back(v.as_double());
  EXPECT_EQ(times, (std::vector<double>{4.0, 6.0, 9.0}));
  const JsonValue& m = at(t, "markers");
  ASSERT_EQ(at(m, "length").as_int(), 2);
  EXPECT_EQ(str(t, at(m, "name").items()[0]), "GVL blocked");
  EXPECT_DOUBLE_EQ(at(m, "startTime").items()[0].as_double(), 6.0);
  EXPECT_DOUBLE_EQ(at(m, "endTime").items()[0].as_double(), 9.0);
  EXPECT_EQ(str(t, at(m, "name").items()[1]), "GVL wait");
  EXPECT_DOUBLE_EQ(at(m, "startTime").items()[1].as_double(), 9.0);
  EXPECT_DOUBLE_EQ(at(m, "endTime").items()[1].as_double(), 10.0);
}

TEST(Firefox, AggregatedProfileHasNoTimelineAndSaysSo) {
  Profile p = make_profile({{"a.rb", "a", 1}, {"a.rb", "b", 2}}, {{{0}, 3000000, 1, 1, kGvlBlocked}, {{1, 0}, 1000000, 1}},
                           {{}, {{"endpoint", "x"}}});
  JsonValue doc = encode(p);
  const JsonValue& meta = at(doc, "meta");
  EXPECT_FALSE(at(at(meta, "rperf"), "timeline").as_bool());
  EXPECT_TRUE(at(at(meta, "rperf"), "aggregated").as_bool());
  bool said = false;
  for (const JsonValue& e : at(at(meta, "extra").items()[0], "entries").items()) {
    if (at(e, "label").as_string() == "Timeline") said = at(e, "value").as_string().find("aggregated") != std::string::npos;
  }
  EXPECT_TRUE(said);
  const JsonValue& t = at(doc, "threads").items()[0];
  for (const JsonValue& time : at(at(t, "samples"), "time").items()) {
    EXPECT_EQ(time.as_double(), 0.0);
  }
  EXPECT_EQ(at(at(t, "markers"), "length").as_int(), 0);
  EXPECT_DOUBLE_EQ(at(at(t, "samples"), "weight").items()[0].as_double(), 3.0);
}

TEST(Firefox, StackAlreadyEndingInItsVmFrameIsNotGivenAnother) {
  Profile p = make_profile({{"<VM>", "[GC sweeping]", 0}, {"a.rb", "a", 1}}, {{{0, 1}, 10, 1, 0, kGcSweep}});
  JsonValue doc = encode(p);
  const JsonValue& t = at(doc, "threads").items()[0];
  std::string cats;
  EXPECT_EQ(stack_names(doc, t, at(at(t, "samples"), "stack").items()[0].as_int(), &cats), "a;[GC sweeping]");
  EXPECT_EQ(cats, "Ruby: app;GC/sweep");
}

TEST(Firefox, GemNamesAndStdlibFromPaths) {
  Profile p = make_profile({{"/x/ruby/gems/3.3.0/gems/aws-sdk-core-3.201.0/lib/a.rb", "A", 1},
                            {"/x/ruby/gems/3.3.0/bundler/gems/rails-2b4c7a9e1f/lib/b.rb", "B", 1},
                            {"<internal:kernel>", "Kernel#loop", 1},
                            {"/srv/app/lib/gems_helper.rb", "C", 1}},
                           {{{0, 1, 2, 3}, 10, 1}});
  JsonValue doc = encode(p);
  const JsonValue& t = at(doc, "threads").items()[0];
  std::string cats;
  stack_names(doc, t, at(at(t, "samples"), "stack").items()[0].as_int(), &cats);
  EXPECT_EQ(cats, "Ruby: app;Ruby: stdlib;Ruby: gems/rails;Ruby: gems/aws-sdk-core");
}

TEST(Firefox, StringsAreEscapedAndValidUtf8) {
  Profile p = make_profile({{"a\"b.rb", "we\\ird\n\xff", 1}}, {{{0}, 10, 1}});
  JsonValue doc = encode(p);
  const JsonValue& t = at(doc, "threads").items()[0];
  EXPECT_EQ(stack_names(doc, t, 0), "we\\ird\n\xef\xbf\xbd");
}
