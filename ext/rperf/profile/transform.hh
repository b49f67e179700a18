// The operations on a profile, each in one place: line -> method folding, VM states as labels
// or frames, aggregation, and merging a child process's profile into its root's.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "profile/profile.hh"

namespace rperf {

struct SampleFilter;  // profile/sample_filter.hh

// Frames that differ only by line become one method-level frame (line 0); samples are merged
// again. No-op when the profile has no lines.
void fold_lines(Profile& p);

// Samples in a GVL/GC state get the state as a label (%GVL=blocked, ...: rperf's shape) or,
// with `as_frames`, as a synthetic leaf frame ([GVL blocked], ...) for viewers without labels.
void apply_vm_states(Profile& p, bool as_frames);

// The VM state of each sample from its labels or synthetic leaf frame (loaded profiles).
void infer_vm_states(Profile& p);

// The VM state a label set names (the label vm_state_label gives a state), else kRunning: a
// sample's state when none was recorded (a Hash built by hand labels it %GVL=blocked).
VmState vm_state_of(const LabelSet& set);

// The label a VM state adds to a sample's set (Symbol key :"%GVL"/:"%GC", String value).
Label vm_state_label(VmState state);
// Raw samples as rperf 0.11 writes them (raw_samples[i][3] the user's labels, the VM state the
// 5th element): each sample in a GVL/GC state gets that state's label, as apply_vm_states gives
// it (none when the state is a leaf frame; a set that has it already stays).
void label_vm_states(Profile& p);
// A raw sample's label set as the user set it: its set without the label of its VM state
// (raw_samples[i][3], as rperf 0.11; aggregated_samples carry the state's label). Cached by set.
class UserLabelSets {
 public:
  explicit UserLabelSets(const Profile& p) : p_(p), cache_(p.label_sets.size(), LabelSetTable::kNotFound) {}
  uint32_t of(const Sample& s);

 private:
  const Profile& p_;
  std::vector<uint32_t> cache_;
};

// One of the Viewer's transforms of the stacks ("focus / merge / drop a function", "collapse
// recursion"). A function is (label, path) as the page shows them: valid UTF-8 (util/utf8.hh),
// any line.
struct StackTransform {
  enum class Op { kFocus, kCallers, kMerge, kDrop, kRecursion, kHideIdle, kAppFirst };
  Op op = Op::kRecursion;
  std::string label;  // the function's (not kRecursion, kHideIdle, kAppFirst)
  std::string path;
};

// Applies `list` in order to the stack of every time and allocation sample:
//   kFocus      only the samples with the function, each stack cut at its outermost call
//               (the function becomes the root)
//   kCallers    only the samples with the function, each stack from its outermost call to the
//               root (the function becomes the leaf): the sandwich's callers, read bottom-up
//   kMerge      the function's frames removed: its time goes to its callers
//   kDrop       the samples with the function removed
//   kRecursion  a function calling itself directly is one frame (the innermost call's)
//   kAppFirst   "app code first": each run of consecutive framework frames (the gem and stdlib
//               categories, profile/frame_category.hh; with the C methods they call) becomes one
//               frame, kFrameworkFrame, so the app's own frames fill the view (a Rails stack's
//               ~70 middleware frames are one)
//   kHideIdle   the time samples idle in a known wait (profile/idle_wait.hh) removed, judged on
//               the stacks as they are at that point (the sandwich cuts stacks after it)
// A sample left without a stack by focus or drop goes; merge may leave an empty stack, which
// stays. Each distinct stack is transformed once.
void transform_stacks(Profile& p, const std::vector<StackTransform>& list);
// The op a transform's name gives ("focus", "callers", "merge", "drop" name a function:
// with_function; "recursion", "idle", "app" do not): false for any other. The one spelling of
// the ops, for Native::Profile#transformed and the page.
bool stack_transform_op(std::string_view name, bool with_function, StackTransform::Op& op);
// The stacks alone through `list` (its kHideIdle entries do nothing: they judge samples), each
// distinct stack once: p.stacks becomes the transformed stacks (kFrameworkFrame interned when
// needed) and the result maps each old stack id to its new one, or kStackGone (focus or drop
// took it). The samples are left as they are: the caller maps them (the page maps its tree).
inline constexpr uint32_t kStackGone = 0xffffffffu;
std::vector<uint32_t> transform_stack_table(Profile& p, const std::vector<StackTransform>& list);
// The frame kAppFirst puts in place of a run of framework frames (its path: kFrameworkPath).
inline constexpr const char* kFrameworkFrame = "[framework]";
inline constexpr const char* kFrameworkPath = "<gems and stdlib>";

// Only the time samples `filter` keeps, each with its kept weight (its part of a time range);
// the allocation samples go (the filters are the time views'). The Viewer's filtered profile.
void select_samples(Profile& p, const SampleFilter& filter);

// Merges samples (time and allocation) by key and drops the per-sample times.
void aggregate(Profile& p);

// Appends `child`'s samples to `root`, its label sets given `%pid=<pid>`, raw times on the
// root's clock (by start_time_ns); counters add up.
void merge_child(Profile& root, const Profile& child, const std::string& pid);

}  // namespace rperf
