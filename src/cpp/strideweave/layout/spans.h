// Spans of a layout (ARCHITECTURE "Bulk access"): the one helper that turns a
// layout into maximal spans of equally spaced indices, so that every bulk copy
// walks the same spans: a memcpy per span of step 1, one strided loop per
// span otherwise.
#pragma once

#include <cstdint>
#include <vector>

#include "strideweave/layout/algebra.h"
#include "strideweave/layout/layout.h"

namespace strideweave {

// Calls visit(first, count, step) for spans of indices: a span stands for
// layout(i) = first, layout(i + 1) = first + step, ..., first + (count - 1) *
// step, for count consecutive flat indices i. The spans follow flat
// (colexicographic) order and together cover i in [0, size) exactly once;
// nothing is visited for an empty layout. Each span is the first mode of
// coalesce(layout), so spans are as long as the layout allows (one span for a
// compact layout, whatever its shape tree).
template <typename Visit>
void for_each_span(const Layout& layout, Visit&& visit) {
  if (layout.size() == 0) return;
  const Layout coalesced = coalesce(layout);
  const std::vector<LeafMode>& modes = coalesced.leaf_modes();
  const std::size_t rank = modes.size();
  std::vector<int64_t> counter(rank, 0);
  int64_t first = 0;
  while (true) {
    visit(first, modes[0].extent, modes[0].stride);
    std::size_t m = 1;
    for (; m < rank; ++m) {
      first += modes[m].stride;
      if (++counter[m] < modes[m].extent) break;
      first -= modes[m].stride * modes[m].extent;
      counter[m] = 0;
    }
    if (m >= rank) return;
  }
}

}  // namespace strideweave
