// Frames and stacks, interned. A frame is (method handle, line): the handle is an opaque
// 64-bit value (a Ruby VALUE in the extension; any number in tests). A stack is a node of a
// prefix tree (parent node, frame), so a stack id is its leaf node and shared prefixes are
// stored once. Memory grows with the number of distinct stacks, never with run time.
#pragma once
#include <cstdint>
#include <vector>

#include "util/interner.hh"

namespace rperf {

// Method handles that name no method: the root-side cut of a stack deeper than max_depth, and
// the synthetic frame of a thread's time before its first Ruby frame (Charge::kNoRubyFrame).
// Both are immediates in Ruby (false, Fixnum 0): no object to mark, never a frame's handle.
constexpr uint64_t kTruncatedMethod = 0;
constexpr uint64_t kThreadStartMethod = 1;
inline bool names_a_method(uint64_t handle) { return handle != kTruncatedMethod && handle != kThreadStartMethod; }

struct FrameKey {
  uint64_t method;
  int32_t line;
  bool operator==(const FrameKey& o) const { return method == o.method && line == o.line; }
};
struct FrameKeyHash {
  size_t operator()(const FrameKey& k) const {
    return mix64(k.method ^ (static_cast<uint64_t>(static_cast<uint32_t>(k.line)) << 48));
  }
};

struct StackNode {
  uint32_t parent;  // kRoot for outermost frames
  uint32_t frame;
  bool operator==(const StackNode& o) const { return parent == o.parent && frame == o.frame; }
};
struct StackNodeHash {
  size_t operator()(const StackNode& n) const {
    return mix64((static_cast<uint64_t>(n.parent) << 32) | n.frame);
  }
};

class StackStore {
 public:
  static constexpr uint32_t kRoot = 0xffffffffu;

  uint32_t intern_frame(uint64_t method, int32_t line) { return frames_.intern({method, line}); }
  uint32_t push(uint32_t parent, uint32_t frame) { return nodes_.intern({parent, frame}); }

  const FrameKey& frame(uint32_t id) const { return frames_[id]; }
  const StackNode& node(uint32_t id) const { return nodes_[id]; }
  size_t frame_count() const { return frames_.size(); }
  size_t node_count() const { return nodes_.size(); }
  const std::vector<FrameKey>& frames() const { return frames_.keys(); }

  // Appends the frame ids of `stack` leaf-first to `out`.
  void frames_of(uint32_t stack, std::vector<uint32_t>& out) const {
    for (uint32_t n = stack; n != kRoot; n = nodes_[n].parent) out.push_back(nodes_[n].frame);
  }

  void clear() {
    frames_.clear();
    nodes_.clear();
  }

 private:
  Interner<FrameKey, FrameKeyHash> frames_;
  Interner<StackNode, StackNodeHash> nodes_;
};

// The worker's memory of one thread's current stack: its frames and the stack-store node at
// each depth, root-first, so that a new stack (leaf-first, as walked) is interned from the
// first frame that differs: typically only the few leaf-most ones.
class StackPath {
 public:
  // The current stack (kRoot for an empty one).
  uint32_t current() const { return depth_ == 0 ? StackStore::kRoot : frames_[depth_ - 1].node; }

  // frame(k) -> (method, line) of the k-th frame of the new stack, leaf-first (k < n).
  template <typename FrameAt>
  uint32_t apply(StackStore& store, uint32_t n, FrameAt&& frame) {
    if (frames_.size() < n) frames_.resize(n);
    uint32_t i = 0;
    for (uint32_t common = n < depth_ ? n : depth_; i < common; i++) {
      auto f = frame(n - 1 - i);
      if (frames_[i].method != f.first || frames_[i].line != f.second) break;
    }
    uint32_t node = i == 0 ? StackStore::kRoot : frames_[i - 1].node;
    for (; i < n; i++) {
      auto f = frame(n - 1 - i);
      node = store.push(node, store.intern_frame(f.first, f.second));
      frames_[i] = {f.first, f.second, node};
    }
    depth_ = n;
    return node;
  }

 private:
  struct Entry {
    uint64_t method;
    int32_t line;
    uint32_t node;
  };
  std::vector<Entry> frames_;
  uint32_t depth_ = 0;
};

}  // namespace rperf
