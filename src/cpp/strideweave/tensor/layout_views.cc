#include "strideweave/tensor/layout_views.h"

#include <string>
#include <utility>

#include "strideweave/layout/algebra.h"
#include "strideweave/util/error.h"

namespace strideweave {

namespace {

// Mode `given` of a rank-`rank` layout counted from the front.
std::size_t normalize_mode(int64_t given, std::size_t rank, const char* op) {
  const auto r = static_cast<int64_t>(rank);
  const int64_t m = given < 0 ? given + r : given;
  if (m < 0 || m >= r) {
    throw IndexError(std::string(op) + ": mode " + std::to_string(given) +
                     " is out of range for a tensor of rank " + std::to_string(rank));
  }
  return static_cast<std::size_t>(m);
}

// The product of `extents`; nullopt when it exceeds int64 (never for a
// product that a zero extent makes zero).
std::optional<int64_t> product(const std::vector<int64_t>& extents) {
  int64_t p = 1;
  bool overflow = false;
  for (int64_t e : extents) {
    if (e == 0) return 0;
    if (__builtin_mul_overflow(p, e, &p)) overflow = true;
  }
  if (overflow) return std::nullopt;
  return p;
}

}  // namespace

Layout permute_layout(const Layout& layout, const std::vector<int64_t>& modes, const char* op) {
  const std::size_t rank = layout.rank();
  if (modes.size() != rank) {
    throw ValueError(std::string(op) + ": " + std::to_string(modes.size()) +
                     " modes given for a tensor of rank " + std::to_string(rank) +
                     " (name each of its modes once)");
  }
  std::vector<bool> seen(rank, false);
  std::vector<Layout> permuted;
  permuted.reserve(rank);
  for (int64_t given : modes) {
    const std::size_t m = normalize_mode(given, rank, op);
    if (seen[m]) {
      throw ValueError(std::string(op) + ": mode " + std::to_string(given) + " is given twice");
    }
    seen[m] = true;
    permuted.push_back(layout.mode(m));
  }
  if (layout.shape().is_leaf() || rank == 0) return layout;
  return make_layout(permuted);
}

std::vector<int64_t> transposition(std::size_t rank, int64_t i, int64_t j, const char* op) {
  const std::size_t a = normalize_mode(i, rank, op);
  const std::size_t b = normalize_mode(j, rank, op);
  std::vector<int64_t> modes(rank);
  for (std::size_t m = 0; m < rank; ++m) modes[m] = static_cast<int64_t>(m);
  std::swap(modes[a], modes[b]);
  return modes;
}

std::vector<int64_t> reversal(std::size_t rank) {
  std::vector<int64_t> modes(rank);
  for (std::size_t m = 0; m < rank; ++m) modes[m] = static_cast<int64_t>(rank - 1 - m);
  return modes;
}

IntTuple resolve_reshape(const IntTuple& shape, int64_t size, const IntTuple& from) {
  std::vector<int64_t> leaves = shape.leaves();
  std::optional<std::size_t> inferred;
  std::vector<int64_t> known;
  for (std::size_t k = 0; k < leaves.size(); ++k) {
    if (leaves[k] == -1) {
      if (inferred)
        throw ValueError("reshape: shape " + shape.to_string() + " has more than one -1");
      inferred = k;
    } else if (leaves[k] < 0) {
      throw ValueError("reshape: extent " + std::to_string(leaves[k]) + " of shape " +
                       shape.to_string() + " is negative (only -1, inferred, may be)");
    } else {
      known.push_back(leaves[k]);
    }
  }
  const std::optional<int64_t> known_size = product(known);
  const auto mismatch = [&](const std::string& target) {
    return ValueError("reshape: cannot reshape a tensor of " + std::to_string(size) +
                      " elements (shape " + from.to_string() + ") into shape " + shape.to_string() +
                      target);
  };
  if (inferred) {
    if (!known_size || *known_size == 0 || size % *known_size != 0) {
      throw mismatch(": the -1 extent cannot be inferred");
    }
    leaves[*inferred] = size / *known_size;
    return unflatten(leaves, shape);
  }
  if (!known_size) throw mismatch(" of more than 2**63 - 1 elements");
  if (*known_size != size) throw mismatch(" of " + std::to_string(*known_size) + " elements");
  return shape;
}

std::optional<Layout> reshaped_layout(const Layout& layout, const IntTuple& shape,
                                      std::string* why) {
  Layout composed = layout;
  try {
    composed = composition(layout, compact_col_major(shape));
  } catch (const ValueError& e) {
    if (why) *why = e.what();
    return std::nullopt;
  }
  // composition(...) refines each leaf mode of `shape` into the modes of
  // `layout` it walks; a view of `shape` needs each to coalesce into one.
  const std::vector<int64_t> extents = shape.leaves();
  std::vector<int64_t> strides;
  strides.reserve(extents.size());
  const auto walk = [&](const auto& self, const IntTuple& s, const Layout& part) -> bool {
    if (s.is_leaf()) {
      const Layout merged = coalesce(part);
      if (!merged.shape().is_leaf()) {
        if (why) {
          *why = "extent " + std::to_string(s.value()) + " of the new shape would need the modes " +
                 merged.to_string() + " of the layout, not one stride";
        }
        return false;
      }
      strides.push_back(merged.stride().value());
      return true;
    }
    for (std::size_t i = 0; i < s.rank(); ++i) {
      if (!self(self, s[i], part.mode(i))) return false;
    }
    return true;
  };
  if (!walk(walk, shape, composed)) return std::nullopt;
  return Layout(shape, unflatten(strides, shape));
}

}  // namespace strideweave
