#include "strideweave/layout/runs.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <string>

#include "strideweave/util/error.h"

namespace strideweave {

namespace {

// The image layout of RunPlan: compact column-major over the leaves with a
// non-zero stride, stride 0 elsewhere.
Layout image_layout_of(const Layout& layout) {
  std::vector<int64_t> strides;
  int64_t running = 1;
  for (const LeafMode& m : layout.leaf_modes()) {
    strides.push_back(m.stride == 0 ? 0 : running);
    if (m.stride != 0) running *= m.extent;
  }
  return Layout(layout.shape(), unflatten(strides, layout.shape()));
}

// Copies n items of `itemsize` bytes from item s (step ss) to item d (step ds).
template <class Word>
void copy_words(const std::byte* src, std::byte* dst, int64_t s, int64_t d, int64_t n, int64_t ss,
                int64_t ds) {
  constexpr auto kSize = static_cast<int64_t>(sizeof(Word));
  for (int64_t i = 0; i < n; ++i) {
    Word w;
    std::memcpy(&w, src + (s + i * ss) * kSize, sizeof(Word));
    std::memcpy(dst + (d + i * ds) * kSize, &w, sizeof(Word));
  }
}

void copy_items(const std::byte* src, std::byte* dst, int64_t s, int64_t d, int64_t n, int64_t ss,
                int64_t ds, std::size_t itemsize) {
  const auto size = static_cast<int64_t>(itemsize);
  if (ss == 1 && ds == 1) {
    std::memcpy(dst + d * size, src + s * size, static_cast<std::size_t>(n * size));
    return;
  }
  switch (itemsize) {
    case 1:
      copy_words<uint8_t>(src, dst, s, d, n, ss, ds);
      return;
    case 2:
      copy_words<uint16_t>(src, dst, s, d, n, ss, ds);
      return;
    case 4:
      copy_words<uint32_t>(src, dst, s, d, n, ss, ds);
      return;
    case 8:
      copy_words<uint64_t>(src, dst, s, d, n, ss, ds);
      return;
    default:
      for (int64_t i = 0; i < n; ++i) {
        std::memcpy(dst + (d + i * ds) * size, src + (s + i * ss) * size, itemsize);
      }
  }
}

// Items per side of a tile when two modes are transposed (unit stride on
// opposite sides): a tile's rows then stay in cache on both sides.
constexpr int64_t kTile = 32;

}  // namespace

RunPlan::RunPlan(const Layout& layout, int64_t offset)
    : offset_(offset), image_layout_(image_layout_of(layout)) {
  if (layout.size() == 0) return;
  std::vector<LeafMode> modes;
  size_ = 1;
  for (const LeafMode& m : layout.leaf_modes()) {
    if (m.stride == 0) continue;
    size_ *= m.extent;
    if (m.extent == 1) continue;
    if (!modes.empty() && modes.back().extent * modes.back().stride == m.stride) {
      modes.back().extent *= m.extent;
    } else {
      modes.push_back(m);
    }
  }
  if (!modes.empty() && modes.front().stride == 1) {
    inner_ = modes.front().extent;
    modes.erase(modes.begin());
  }
  outer_ = std::move(modes);
}

namespace {

bool by_stride(const LeafMode& a, const LeafMode& b) { return a.stride < b.stride; }
bool reaches(const LeafMode& m) { return m.stride != 0 && m.extent != 1; }

}  // namespace

bool is_in_storage_order(const Layout& layout) noexcept {
  const std::vector<LeafMode>& leaves = layout.leaf_modes();
  return layout.size() == 0 || (std::is_sorted(leaves.begin(), leaves.end(), by_stride) &&
                                std::all_of(leaves.begin(), leaves.end(), reaches));
}

Layout storage_order(const Layout& layout) {
  if (is_in_storage_order(layout)) return layout;
  const std::vector<LeafMode>& leaves = layout.leaf_modes();
  std::vector<LeafMode> modes;
  std::copy_if(leaves.begin(), leaves.end(), std::back_inserter(modes), reaches);
  std::stable_sort(modes.begin(), modes.end(), by_stride);
  std::vector<IntTuple> extents;
  std::vector<IntTuple> strides;
  for (const LeafMode& m : modes) {
    extents.emplace_back(m.extent);
    strides.emplace_back(m.stride);
  }
  return Layout(IntTuple::tuple(std::move(extents)), IntTuple::tuple(std::move(strides)));
}

std::vector<Run> runs(const Layout& layout, int64_t offset) {
  std::vector<Run> out;
  RunPlan(layout, offset).for_each_run([&](int64_t first, int64_t count) {
    out.push_back(Run{first, count});
  });
  return out;
}

namespace internal_runs {

std::vector<JointMode> joint_modes(const Layout& src, const Layout& dst, bool& empty) {
  const std::vector<LeafMode>& a = src.leaf_modes();
  const std::vector<LeafMode>& b = dst.leaf_modes();
  const bool same = a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                                       [](const LeafMode& x, const LeafMode& y) {
                                                         return x.extent == y.extent;
                                                       });
  if (!same) {
    throw ValueError("copy between layouts of different leaf extents: " + src.to_string() +
                     " and " + dst.to_string());
  }
  empty = src.size() == 0;
  std::vector<JointMode> modes;
  if (empty) return modes;
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (a[k].extent == 1) continue;
    const JointMode m{a[k].extent, a[k].stride, b[k].stride};
    if (!modes.empty()) {
      JointMode& last = modes.back();
      if (last.extent * last.src_stride == m.src_stride &&
          last.extent * last.dst_stride == m.dst_stride) {
        last.extent *= m.extent;
        continue;
      }
    }
    modes.push_back(m);
  }
  return modes;
}

}  // namespace internal_runs

namespace internal_runs {

void copy_joint(const std::byte* src, int64_t src_base, std::byte* dst, int64_t dst_base,
                const std::vector<JointMode>& modes, std::size_t itemsize) {
  const bool transposed = modes.size() >= 2 && modes[0].extent > kTile && modes[1].extent > kTile &&
                          ((modes[0].dst_stride == 1 && modes[1].src_stride == 1) ||
                           (modes[0].src_stride == 1 && modes[1].dst_stride == 1));
  if (!transposed) {
    walk_joint(modes, src_base, dst_base,
               [&](int64_t s, int64_t d, int64_t n, int64_t ss, int64_t ds) {
                 copy_items(src, dst, s, d, n, ss, ds, itemsize);
               });
    return;
  }
  const JointMode a = modes[0];
  const JointMode b = modes[1];
  const std::vector<JointMode> rest(modes.begin() + 2, modes.end());
  const auto tile_2d = [&](int64_t s, int64_t d) {
    for (int64_t j0 = 0; j0 < b.extent; j0 += kTile) {
      const int64_t j1 = std::min(b.extent, j0 + kTile);
      for (int64_t i0 = 0; i0 < a.extent; i0 += kTile) {
        const int64_t n = std::min(a.extent, i0 + kTile) - i0;
        for (int64_t j = j0; j < j1; ++j) {
          copy_items(src, dst, s + i0 * a.src_stride + j * b.src_stride,
                     d + i0 * a.dst_stride + j * b.dst_stride, n, a.src_stride, a.dst_stride,
                     itemsize);
        }
      }
    }
  };
  walk_joint(rest, src_base, dst_base,
             [&](int64_t s, int64_t d, int64_t n, int64_t ss, int64_t ds) {
               for (int64_t t = 0; t < n; ++t) tile_2d(s + t * ss, d + t * ds);
             });
}

bool writes_each_item_once(const std::vector<JointMode>& modes) {
  std::vector<JointMode> sorted = modes;
  std::sort(sorted.begin(), sorted.end(),
            [](const JointMode& x, const JointMode& y) { return x.dst_stride < y.dst_stride; });
  int64_t reach = 0;  // the largest destination step the smaller-stride modes make
  for (const JointMode& m : sorted) {
    if (m.dst_stride <= reach) return false;
    reach += (m.extent - 1) * m.dst_stride;
  }
  return true;
}

}  // namespace internal_runs

void copy_strided(const std::byte* src, const Layout& src_layout, int64_t src_offset,
                  std::byte* dst, const Layout& dst_layout, int64_t dst_offset,
                  std::size_t itemsize) {
  bool empty = false;
  const std::vector<internal_runs::JointMode> modes =
      internal_runs::joint_modes(src_layout, dst_layout, empty);
  if (empty) return;
  internal_runs::copy_joint(src, src_offset, dst, dst_offset, modes, itemsize);
}

}  // namespace strideweave
