// Contiguous runs of a layout (ARCHITECTURE "Bulk access"): the one helper
// that turns a layout into maximal runs of consecutive indices, so that every
// bulk copy walks the same spans.
#pragma once

#include <cstdint>
#include <vector>

#include "strideweave/layout/algebra.h"
#include "strideweave/layout/layout.h"

namespace strideweave {

// Calls visit(first, count) for runs of consecutive indices: a run stands for
// layout(i) = first, layout(i + 1) = first + 1, ..., first + count - 1. The runs
// follow flat (colexicographic) order and together cover i in [0, size)
// exactly once; nothing is visited for an empty layout. Runs are maximal
// under coalesce(layout): a coalesced first mode of stride 1 gives runs of its
// extent, any other layout runs of one index.
template <typename Visit>
void for_each_run(const Layout& layout, Visit&& visit) {
  if (layout.size() == 0) return;
  const Layout coalesced = coalesce(layout);
  const std::vector<LeafMode>& modes = coalesced.leaf_modes();
  const std::size_t rank = modes.size();
  std::size_t outer = 0;
  int64_t run = 1;
  if (rank > 0 && modes[0].stride == 1) {
    run = modes[0].extent;
    outer = 1;
  }
  std::vector<int64_t> counter(rank, 0);
  int64_t first = 0;
  while (true) {
    visit(first, run);
    std::size_t m = outer;
    for (; m < rank; ++m) {
      first += modes[m].stride;
      if (++counter[m] < modes[m].extent) break;
      first -= modes[m].stride * modes[m].extent;
      counter[m] = 0;
    }
    if (m == rank) return;
  }
}

}  // namespace strideweave
