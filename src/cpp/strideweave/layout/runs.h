// The one span walker: (layout, offset) as maximal contiguous runs of storage
// indices, and the strided copy kernel between two host spans
// (spec/carrier-storage, "Bulk access" in the architecture brief).
//
// Every copy between storage and a tensor view goes through these two
// functions: tolist(), the factories and, later, every move. Both are pure
// functions of their arguments; neither allocates per element.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "strideweave/layout/layout.h"

namespace strideweave {

// Storage indices [first, first + count).
struct Run {
  int64_t first;
  int64_t count;
  friend bool operator==(const Run&, const Run&) = default;
};

// The storage image of (layout, offset) as runs. Let S be `layout` with its
// stride-0 leaf modes dropped (a broadcast reads each stored slot once).
// Post: the runs, concatenated in visiting order, are exactly
//       [offset + S(i) for 0 <= i < size(S)] (empty when size(layout) == 0);
//       every count is positive; no run ends where the next one begins
//       (maximal after coalescing); size() is the sum of the counts.
class RunPlan {
 public:
  RunPlan(const Layout& layout, int64_t offset);

  // Elements in the image: size(S), or 0 when the layout is empty.
  int64_t size() const noexcept { return size_; }

  // Calls f(first, count) for each run, in order.
  template <class F>
  void for_each_run(F&& f) const;

  // Whether the walk is one run, [offset, offset + size()), told without
  // walking it: a layout whose modes coalesce to one of stride 1 (a compact
  // layout in storage order). False for an empty layout.
  bool is_one_run() const noexcept { return size_ != 0 && outer_.empty(); }

  // The layout over the concatenated runs: for 0 <= i < size(layout), the
  // element of flat index i sits at position image_layout()(i) of the image.
  // It has layout's shape, stride 0 on its stride-0 leaf modes and compact
  // column-major strides over the other leaves.
  const Layout& image_layout() const noexcept { return image_layout_; }

 private:
  int64_t offset_;
  int64_t size_ = 0;
  int64_t inner_ = 1;            // elements per step of the innermost walk
  std::vector<LeafMode> outer_;  // coalesced modes walked around it
  Layout image_layout_;
};

// The footprint of `layout` in storage order: a layout whose leaf modes are
// those of `layout` with a non-zero stride and an extent above 1, sorted by
// stride (equal strides keep tree order). It is a copy of `layout` when its
// leaf modes already are exactly these (is_in_storage_order), else a flat
// layout; an empty layout (size 0) is returned unchanged.
// Post: it reaches the indices `layout` without its stride-0 modes reaches,
//       each as often (so each once when that is injective); a copy between
//       two spans that applies the same layout on both sides (a move) may walk
//       it instead of `layout`, in longer runs (a transposed compact layout is
//       one run).
Layout storage_order(const Layout& layout);

// Whether storage_order(layout) is `layout` itself: it is empty, or its leaf
// modes all have a non-zero stride and an extent above 1 and are sorted by
// stride. A caller that only reads the footprint may then use `layout`
// without the copy.
bool is_in_storage_order(const Layout& layout) noexcept;

// The runs of RunPlan(layout, offset), materialized (tests, small layouts).
std::vector<Run> runs(const Layout& layout, int64_t offset);

// The strided copy kernel. For every flat index i < size(src_layout):
//   item dst_offset + dst_layout(i) of dst = item src_offset + src_layout(i) of src,
// items being `itemsize` bytes. Contiguous stretches on both sides are one
// memcpy; other items are copied in a loop specialised for the item size,
// with no per-item call. When dst_layout is not injective, which source item
// lands in a shared destination item is unspecified.
// Throws ValueError naming both layouts when their leaf extents differ.
// Pre: both spans hold every item the layouts address.
void copy_strided(const std::byte* src, const Layout& src_layout, int64_t src_offset,
                  std::byte* dst, const Layout& dst_layout, int64_t dst_offset,
                  std::size_t itemsize);

// The same kernel over arrays of T (element values of carriers without a
// native encoding), copying with T's assignment.
template <class T>
void copy_strided(const T* src, const Layout& src_layout, int64_t src_offset, T* dst,
                  const Layout& dst_layout, int64_t dst_offset);

namespace internal_runs {

// One mode of the joint walk of two layouts of the same leaf extents.
struct JointMode {
  int64_t extent;
  int64_t src_stride;
  int64_t dst_stride;
};

// The leaf modes of both layouts, zipped, without extent-1 modes, with
// neighbours merged where both sides continue each other; empty (and
// `empty` set) when the layouts have no elements. Throws ValueError when the
// leaf extents differ.
std::vector<JointMode> joint_modes(const Layout& src, const Layout& dst, bool& empty);

// Calls inner(src_index, dst_index, count, src_stride, dst_stride) once per
// step of the innermost mode, over every combination of the outer modes.
template <class Inner>
void walk_joint(const std::vector<JointMode>& modes, int64_t src_base, int64_t dst_base,
                Inner&& inner) {
  if (modes.empty()) {
    inner(src_base, dst_base, int64_t{1}, int64_t{0}, int64_t{0});
    return;
  }
  const JointMode& first = modes.front();
  const std::size_t outer = modes.size() - 1;
  std::vector<int64_t> counter(outer, 0);
  int64_t s = src_base;
  int64_t d = dst_base;
  while (true) {
    inner(s, d, first.extent, first.src_stride, first.dst_stride);
    std::size_t k = 0;
    for (; k < outer; ++k) {
      const JointMode& m = modes[k + 1];
      s += m.src_stride;
      d += m.dst_stride;
      if (++counter[k] < m.extent) break;
      s -= m.extent * m.src_stride;
      d -= m.extent * m.dst_stride;
      counter[k] = 0;
    }
    if (k == outer) return;
  }
}

// copy_strided over joint modes already computed (`modes` non-empty or the
// copy of one item): item dst_base + d of dst = item src_base + s of src for
// every step of the joint walk, transposed pairs of modes in tiles.
void copy_joint(const std::byte* src, int64_t src_base, std::byte* dst, int64_t dst_base,
                const std::vector<JointMode>& modes, std::size_t itemsize);

// Whether the destination side of `modes` reaches every item at most once,
// told from its strides alone (each positive stride beyond the largest step
// the smaller ones make): sufficient, not necessary, for injectivity.
bool writes_each_item_once(const std::vector<JointMode>& modes);

}  // namespace internal_runs

template <class F>
void RunPlan::for_each_run(F&& f) const {
  if (size_ == 0) return;
  int64_t pending_first = offset_;
  int64_t pending_count = 0;
  const auto emit = [&](int64_t first, int64_t count) {
    if (pending_count != 0 && pending_first + pending_count == first) {
      pending_count += count;
      return;
    }
    if (pending_count != 0) f(pending_first, pending_count);
    pending_first = first;
    pending_count = count;
  };
  std::vector<int64_t> counter(outer_.size(), 0);
  int64_t base = offset_;
  while (true) {
    emit(base, inner_);
    std::size_t k = 0;
    for (; k < outer_.size(); ++k) {
      base += outer_[k].stride;
      if (++counter[k] < outer_[k].extent) break;
      base -= outer_[k].extent * outer_[k].stride;
      counter[k] = 0;
    }
    if (k == outer_.size()) break;
  }
  f(pending_first, pending_count);
}

template <class T>
void copy_strided(const T* src, const Layout& src_layout, int64_t src_offset, T* dst,
                  const Layout& dst_layout, int64_t dst_offset) {
  bool empty = false;
  const std::vector<internal_runs::JointMode> modes =
      internal_runs::joint_modes(src_layout, dst_layout, empty);
  if (empty) return;
  internal_runs::walk_joint(modes, src_offset, dst_offset,
                            [&](int64_t s, int64_t d, int64_t n, int64_t ss, int64_t ds) {
                              for (int64_t i = 0; i < n; ++i) dst[d + i * ds] = src[s + i * ss];
                            });
}

}  // namespace strideweave
