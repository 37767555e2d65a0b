#include "strideweave/layout/layout.h"

#include <algorithm>
#include <unordered_set>
#include <utility>

#include "strideweave/util/checked_math.h"
#include "strideweave/util/error.h"

namespace strideweave {

namespace {

std::string child_path(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

// Throws ValueError for the first negative leaf of `t`, naming it and its path.
void require_non_negative(const IntTuple& t, const std::string& path, const char* what) {
  if (t.is_leaf()) {
    if (t.value() < 0) {
      throw ValueError("Layout " + std::string(what) + " " + std::to_string(t.value()) + " at " +
                       path + " is negative; extents and strides must be non-negative");
    }
    return;
  }
  for (std::size_t i = 0; i < t.rank(); ++i) require_non_negative(t[i], child_path(path, i), what);
}

int64_t compute_cosize(const std::vector<LeafMode>& modes, int64_t size) {
  if (size == 0) return 0;
  int64_t last = 0;
  for (const LeafMode& m : modes) {
    last = checked_add(last, checked_mul(m.extent - 1, m.stride, "Layout cosize"), "Layout cosize");
  }
  return checked_add(last, 1, "Layout cosize");
}

IndexError out_of_range(int64_t component, const std::string& where, int64_t extent) {
  return IndexError("coordinate component " + std::to_string(component) + " at " + where +
                    " is out of range for extent " + std::to_string(extent));
}

// Index contributed by `coord` within the mode (shape, stride) found at `path`.
int64_t evaluate_mode(const IntTuple& shape, const IntTuple& stride, const IntTuple& coord,
                      const std::string& path) {
  if (coord.is_leaf()) {
    const int64_t extent = shape_size(shape);
    const int64_t c = coord.value();
    if (c < 0 || c >= extent) throw out_of_range(c, path, extent);
    if (shape.is_leaf()) return c * stride.value();
    const IntTuple sub = idx2crd(c, shape);
    return evaluate_mode(shape, stride, sub, path);
  }
  if (shape.is_leaf() || coord.rank() != shape.rank()) {
    throw ValueError("coordinate " + coord.to_string() + " at " + path +
                     " does not match the shape " + shape.to_string());
  }
  int64_t index = 0;
  for (std::size_t i = 0; i < shape.rank(); ++i) {
    index += evaluate_mode(shape[i], stride[i], coord[i], child_path(path, i));
  }
  return index;
}

IntTuple decompose(int64_t index, const IntTuple& shape) {
  if (shape.is_leaf()) return IntTuple(index);
  std::vector<IntTuple> elements;
  elements.reserve(shape.rank());
  for (std::size_t i = 0; i < shape.rank(); ++i) {
    if (i + 1 == shape.rank()) {
      elements.push_back(decompose(index, shape[i]));
    } else {
      const int64_t extent = shape_size(shape[i]);
      elements.push_back(decompose(extent == 0 ? 0 : index % extent, shape[i]));
      index = extent == 0 ? 0 : index / extent;
    }
  }
  return IntTuple::tuple(std::move(elements));
}

// Exhaustive injectivity check: marks every index reached.
bool injective_by_enumeration(const std::vector<LeafMode>& modes, int64_t size, int64_t cosize) {
  std::vector<int64_t> coord(modes.size(), 0);
  const bool dense = cosize / 64 <= size;
  std::vector<bool> seen_bits(dense ? static_cast<std::size_t>(cosize) : 0, false);
  std::unordered_set<int64_t> seen_set;
  if (!dense) seen_set.reserve(static_cast<std::size_t>(size));
  int64_t index = 0;
  for (int64_t n = 0; n < size; ++n) {
    if (dense) {
      if (seen_bits[static_cast<std::size_t>(index)]) return false;
      seen_bits[static_cast<std::size_t>(index)] = true;
    } else if (!seen_set.insert(index).second) {
      return false;
    }
    for (std::size_t m = 0; m < modes.size(); ++m) {  // odometer step, first mode fastest
      if (++coord[m] < modes[m].extent) {
        index += modes[m].stride;
        break;
      }
      index -= (modes[m].extent - 1) * modes[m].stride;
      coord[m] = 0;
    }
  }
  return true;
}

}  // namespace

int64_t shape_size(const IntTuple& shape) {
  int64_t size = 1;
  for (int64_t extent : shape.leaves()) size = checked_mul(size, extent, "Layout size");
  return size;
}

Layout::Layout(IntTuple shape, IntTuple stride)
    : shape_(std::move(shape)), stride_(std::move(stride)) {
  require_non_negative(shape_, "shape", "extent");
  if (!congruent(shape_, stride_)) {
    throw ValueError("Layout stride " + stride_.to_string() + " is not congruent with shape " +
                     shape_.to_string());
  }
  require_non_negative(stride_, "stride", "stride");
  const std::vector<int64_t> extents = shape_.leaves();
  const std::vector<int64_t> strides = stride_.leaves();
  leaf_modes_.reserve(extents.size());
  size_ = 1;
  for (std::size_t i = 0; i < extents.size(); ++i) {
    leaf_modes_.push_back({extents[i], strides[i]});
    size_ = checked_mul(size_, extents[i], "Layout size");
  }
  cosize_ = compute_cosize(leaf_modes_, size_);
}

Layout::Layout(IntTuple shape) : Layout(compact_col_major(shape)) {}

Layout Layout::mode(std::size_t i) const {
  if (i >= rank()) {
    throw IndexError("Layout mode index " + std::to_string(i) + " is out of range for rank " +
                     std::to_string(rank()));
  }
  if (shape_.is_leaf()) return *this;
  return Layout(shape_[i], stride_[i]);
}

int64_t Layout::operator()(int64_t index) const {
  if (index < 0 || index >= size_) {
    throw IndexError("index " + std::to_string(index) + " is out of range for size " +
                     std::to_string(size_));
  }
  int64_t result = 0;
  for (const LeafMode& m : leaf_modes()) {
    result += (index % m.extent) * m.stride;
    index /= m.extent;
  }
  return result;
}

int64_t Layout::operator()(const IntTuple& coord) const {
  if (coord.is_leaf()) return (*this)(coord.value());
  if (!shape_.is_leaf() && coord.rank() == shape_.rank()) {
    return evaluate_mode(shape_, stride_, coord, "coord");
  }
  if (coord.depth() == 1 && coord.rank() == shape_.leaf_count()) {
    const std::vector<LeafMode>& modes = leaf_modes_;
    int64_t result = 0;
    for (std::size_t i = 0; i < modes.size(); ++i) {
      const int64_t c = coord[i].value();
      if (c < 0 || c >= modes[i].extent)
        throw out_of_range(c, child_path("coord", i), modes[i].extent);
      result += c * modes[i].stride;
    }
    return result;
  }
  throw ValueError("coordinate " + coord.to_string() + " is neither hierarchical for shape " +
                   shape_.to_string() + " (rank " + std::to_string(shape_.rank()) +
                   ") nor flat over its " + std::to_string(shape_.leaf_count()) + " leaf modes");
}

IntTuple Layout::idx2crd(int64_t index) const { return strideweave::idx2crd(index, shape_); }

bool Layout::is_injective() const {
  if (size_ <= 1) return true;
  // One mode of extent above 1 (a vector, or a tensor with unit modes) is
  // injective unless broadcast: decided without the sort below.
  const LeafMode* only = nullptr;
  int spread = 0;
  for (const LeafMode& m : leaf_modes()) {
    if (m.extent > 1 && spread++ == 0) only = &m;
  }
  if (spread == 1) return only->stride != 0;
  std::vector<LeafMode> modes;
  for (const LeafMode& m : leaf_modes()) {
    if (m.extent <= 1) continue;
    if (m.stride == 0) return false;
    modes.push_back(m);
  }
  if (cosize_ < size_) return false;  // pigeonhole
  std::sort(modes.begin(), modes.end(),
            [](const LeafMode& a, const LeafMode& b) { return a.stride < b.stride; });
  // Mixed-radix separability: each stride exceeds the largest index the
  // smaller-stride modes reach, so every index has one decomposition.
  int64_t reach = 0;
  bool separable = true;
  for (const LeafMode& m : modes) {
    if (m.stride <= reach) {
      separable = false;
      break;
    }
    reach += (m.extent - 1) * m.stride;
  }
  return separable || injective_by_enumeration(modes, size_, cosize_);
}

std::string Layout::to_string() const { return shape_.to_string() + ":" + stride_.to_string(); }

std::size_t Layout::hash() const noexcept {
  const std::size_t h = shape_.hash();
  return h ^ (stride_.hash() + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}

Layout compact_col_major(const IntTuple& shape) {
  require_non_negative(shape, "shape", "extent");
  std::vector<int64_t> strides;
  int64_t running = 1;
  for (int64_t extent : shape.leaves()) {
    strides.push_back(running);
    running = checked_mul(running, extent, "Layout size");
  }
  return Layout(shape, unflatten(strides, shape));
}

Layout compact_row_major(const IntTuple& shape) {
  require_non_negative(shape, "shape", "extent");
  const std::vector<int64_t> extents = shape.leaves();
  std::vector<int64_t> strides(extents.size(), 0);
  int64_t running = 1;
  for (std::size_t k = extents.size(); k-- > 0;) {
    strides[k] = running;
    running = checked_mul(running, extents[k], "Layout size");
  }
  return Layout(shape, unflatten(strides, shape));
}

Layout make_layout(const std::vector<Layout>& modes) {
  std::vector<IntTuple> shapes;
  std::vector<IntTuple> strides;
  for (const Layout& m : modes) {
    shapes.push_back(m.shape());
    strides.push_back(m.stride());
  }
  return Layout(IntTuple::tuple(std::move(shapes)), IntTuple::tuple(std::move(strides)));
}

IntTuple idx2crd(int64_t index, const IntTuple& shape) {
  const int64_t size = shape_size(shape);
  if (index < 0 || index >= size) {
    throw IndexError("index " + std::to_string(index) + " is out of range for size " +
                     std::to_string(size));
  }
  return decompose(index, shape);
}

}  // namespace strideweave
