#include "strideweave/layout/algebra.h"

#include <algorithm>
#include <string>
#include <utility>

#include "strideweave/util/checked_math.h"
#include "strideweave/util/error.h"

namespace strideweave {

namespace {

// A layout from flat modes: an integral layout for one mode, a tuple otherwise.
Layout from_modes(const std::vector<LeafMode>& modes) {
  if (modes.size() == 1) return Layout(modes[0].extent, modes[0].stride);
  std::vector<IntTuple> shape;
  std::vector<IntTuple> stride;
  for (const LeafMode& m : modes) {
    shape.emplace_back(m.extent);
    stride.emplace_back(m.stride);
  }
  return Layout(IntTuple::tuple(std::move(shape)), IntTuple::tuple(std::move(stride)));
}

std::string describe(const LeafMode& m) {
  return std::to_string(m.extent) + ":" + std::to_string(m.stride);
}

// The flat modes of coalesce(layout), never empty.
std::vector<LeafMode> coalesced_modes(const Layout& layout) {
  if (layout.size() == 0) return {{0, 0}};
  std::vector<LeafMode> out;
  for (const LeafMode& m : layout.leaf_modes()) {
    if (m.extent == 1) continue;
    if (!out.empty() && out.back().extent * out.back().stride == m.stride) {
      out.back().extent *= m.extent;  // cannot overflow: bounded by size(layout)
    } else {
      out.push_back(m);
    }
  }
  if (out.empty()) out.push_back({1, 0});
  return out;
}

// The modes of composition(A, s:d) for an integral right operand, given
// `coalesced` = coalesced_modes(A). Reads only the modes it walks: dividing
// out d and keeping s visit at most log2(d) + log2(s) + 2 of them, since every
// coalesced mode but the last has extent >= 2. Never copies `coalesced`.
std::vector<LeafMode> compose_integral(const std::vector<LeafMode>& coalesced, int64_t s,
                                       int64_t d) {
  if (s <= 1 || d == 0) return {{s, 0}};
  const std::size_t last = coalesced.size() - 1;
  const auto fail = [&](const char* condition, std::size_t i) {
    return ValueError("composition is not admissible: the " + std::string(condition) +
                      " condition fails at mode " + std::to_string(i) + " (" +
                      describe(coalesced[i]) +
                      ") of coalesce(A) = " + from_modes(coalesced).to_string() +
                      " for B = " + std::to_string(s) + ":" + std::to_string(d));
  };
  // Divide out the first d elements: keep every d-th element of A. Modes
  // before `first` are divided out entirely; `head` is mode `first` as kept.
  int64_t rest_stride = d;
  std::size_t first = 0;
  LeafMode head = coalesced[0];
  while (first < last && rest_stride != 1) {
    const LeafMode& m = coalesced[first];
    if (rest_stride % m.extent == 0) {
      rest_stride /= m.extent;
      head = coalesced[++first];
    } else if (m.extent % rest_stride == 0) {
      head = {m.extent / rest_stride, checked_mul(m.stride, rest_stride, "composition stride")};
      rest_stride = 1;
    } else {
      throw fail("stride divisibility", first);
    }
  }
  const int64_t last_stride =
      checked_mul(coalesced[last].stride, rest_stride, "composition stride");
  // Mod out all but the first s elements.
  std::vector<LeafMode> result;
  int64_t rest_shape = s;
  for (std::size_t i = first; i < last && rest_shape != 1; ++i) {
    const LeafMode m = i == first ? head : coalesced[i];
    if (rest_shape <= m.extent) {
      result.push_back({rest_shape, m.stride});
      rest_shape = 1;
    } else if (rest_shape % m.extent == 0) {
      result.push_back(m);
      rest_shape /= m.extent;
    } else {
      throw fail("shape divisibility", i);
    }
  }
  if (rest_shape != 1) result.push_back({rest_shape, last_stride});
  return result;
}

// The shape and stride trees of composition(A, b), b given by its trees;
// recursion follows b's tree, so its depth is bounded by IntTuple::kMaxDepth.
std::pair<IntTuple, IntTuple> compose_trees(const std::vector<LeafMode>& coalesced,
                                            const IntTuple& shape, const IntTuple& stride) {
  if (shape.is_leaf()) {
    const std::vector<LeafMode> modes = compose_integral(coalesced, shape.value(), stride.value());
    if (modes.size() == 1) return {IntTuple(modes[0].extent), IntTuple(modes[0].stride)};
    std::vector<IntTuple> extents;
    std::vector<IntTuple> strides;
    for (const LeafMode& m : modes) {
      extents.emplace_back(m.extent);
      strides.emplace_back(m.stride);
    }
    return {IntTuple::tuple(std::move(extents)), IntTuple::tuple(std::move(strides))};
  }
  std::vector<IntTuple> extents;
  std::vector<IntTuple> strides;
  extents.reserve(shape.rank());
  strides.reserve(shape.rank());
  for (std::size_t i = 0; i < shape.rank(); ++i) {
    auto [e, d] = compose_trees(coalesced, shape[i], stride[i]);
    extents.push_back(std::move(e));
    strides.push_back(std::move(d));
  }
  return {IntTuple::tuple(std::move(extents)), IntTuple::tuple(std::move(strides))};
}

void require_tiler_fits(const Layout& a, const Tiler& tiler, const char* operation) {
  if (tiler.size() > a.rank()) {
    throw ValueError(std::string(operation) + ": the tiler has " + std::to_string(tiler.size()) +
                     " modes but the layout " + a.to_string() + " has rank " +
                     std::to_string(a.rank()));
  }
}

// Splits the mode-by-mode division of `a` into its tile modes and its rest
// modes (followed by the modes of `a` the tiler does not reach).
std::pair<std::vector<Layout>, std::vector<Layout>> divide_parts(const Layout& a,
                                                                 const Tiler& tiler,
                                                                 const char* operation) {
  require_tiler_fits(a, tiler, operation);
  std::vector<Layout> tiles;
  std::vector<Layout> rests;
  for (std::size_t i = 0; i < tiler.size(); ++i) {
    const Layout divided = logical_divide(a.mode(i), tiler[i]);
    tiles.push_back(divided.mode(0));
    rests.push_back(divided.mode(1));
  }
  for (std::size_t i = tiler.size(); i < a.rank(); ++i) rests.push_back(a.mode(i));
  return {std::move(tiles), std::move(rests)};
}

}  // namespace

Layout coalesce(const Layout& layout) { return from_modes(coalesced_modes(layout)); }

Layout composition(const Layout& a, const Layout& b) {
  auto [shape, stride] = compose_trees(coalesced_modes(a), b.shape(), b.stride());
  return Layout(std::move(shape), std::move(stride));
}

Layout composition(const Layout& a, const Tiler& tiler) {
  require_tiler_fits(a, tiler, "composition");
  std::vector<Layout> modes;
  for (std::size_t i = 0; i < a.rank(); ++i) {
    modes.push_back(i < tiler.size() ? composition(a.mode(i), tiler[i]) : a.mode(i));
  }
  return make_layout(modes);
}

Layout complement(const Layout& layout, int64_t cotarget) {
  if (cotarget < 0) {
    throw ValueError("complement: cotarget " + std::to_string(cotarget) + " is negative");
  }
  std::vector<LeafMode> modes;
  for (const LeafMode& m : layout.leaf_modes()) {
    if (m.extent > 1 && m.stride != 0) modes.push_back(m);
  }
  if (layout.size() == 0) modes.clear();
  std::sort(modes.begin(), modes.end(), [](const LeafMode& x, const LeafMode& y) {
    return x.stride != y.stride ? x.stride < y.stride : x.extent < y.extent;
  });
  std::vector<LeafMode> result;
  int64_t current = 1;
  for (const LeafMode& m : modes) {
    if (m.stride % current != 0) {
      throw ValueError("complement: " + layout.to_string() + " has no complement: mode " +
                       describe(m) + " overlaps or does not divide the span " +
                       std::to_string(current) + " of the modes before it");
    }
    result.push_back({m.stride / current, current});
    current = checked_mul(m.extent, m.stride, "complement span");
  }
  result.push_back({std::max<int64_t>(1, ceil_div(cotarget, current)), current});
  return coalesce(from_modes(result));
}

Layout right_inverse(const Layout& layout) {
  struct Chain {
    LeafMode mode;
    int64_t position;  // the colexicographic weight of this leaf in layout's domain
  };
  std::vector<Chain> chain;
  int64_t weight = 1;
  for (const LeafMode& m : layout.leaf_modes()) {
    if (m.extent > 1 && m.stride != 0) chain.push_back({m, weight});
    weight *= m.extent == 0 ? 1 : m.extent;
  }
  std::sort(chain.begin(), chain.end(),
            [](const Chain& x, const Chain& y) { return x.mode.stride < y.mode.stride; });
  std::vector<LeafMode> result;
  int64_t current = 1;
  for (const Chain& c : chain) {
    if (c.mode.stride != current) break;
    result.push_back({c.mode.extent, c.position});
    current = c.mode.extent * c.mode.stride;
  }
  if (layout.size() == 0) return Layout(0, 0);
  if (result.empty()) return Layout(1, 0);
  return coalesce(from_modes(result));
}

Layout logical_divide(const Layout& a, const Layout& b) {
  return composition(a, make_layout({b, complement(b, a.size())}));
}

Layout logical_divide(const Layout& a, const Tiler& tiler) {
  require_tiler_fits(a, tiler, "logical_divide");
  std::vector<Layout> modes;
  for (std::size_t i = 0; i < a.rank(); ++i) {
    modes.push_back(i < tiler.size() ? logical_divide(a.mode(i), tiler[i]) : a.mode(i));
  }
  return make_layout(modes);
}

Layout zipped_divide(const Layout& a, const Tiler& tiler) {
  auto [tiles, rests] = divide_parts(a, tiler, "zipped_divide");
  return make_layout({make_layout(tiles), make_layout(rests)});
}

Layout zipped_divide(const Layout& a, const Layout& b) { return logical_divide(a, b); }

Layout tiled_divide(const Layout& a, const Tiler& tiler) {
  auto [tiles, rests] = divide_parts(a, tiler, "tiled_divide");
  std::vector<Layout> modes{make_layout(tiles)};
  modes.insert(modes.end(), rests.begin(), rests.end());
  return make_layout(modes);
}

Layout tiled_divide(const Layout& a, const Layout& b) { return logical_divide(a, b); }

Layout logical_product(const Layout& a, const Layout& b) {
  const int64_t cotarget = checked_mul(a.size(), b.cosize(), "logical_product cotarget");
  return make_layout({a, composition(complement(a, cotarget), b)});
}

}  // namespace strideweave
