#include "strideweave/layout/int_tuple.h"

#include <algorithm>
#include <functional>

#include "strideweave/util/error.h"

namespace strideweave {

IntTuple IntTuple::tuple(std::vector<IntTuple> elements) {
  int deepest = 0;
  for (const IntTuple& e : elements) deepest = std::max(deepest, e.depth_);
  if (deepest + 1 > kMaxDepth) {
    throw ValueError("an IntTuple nests deeper than the limit of " + std::to_string(kMaxDepth) +
                     " levels");
  }
  IntTuple result;
  result.elements_ = std::move(elements);
  result.depth_ = deepest + 1;
  return result;
}

IntTuple IntTuple::tuple(std::initializer_list<IntTuple> elements) {
  return tuple(std::vector<IntTuple>(elements));
}

namespace {

void collect_leaves(const IntTuple& t, std::vector<int64_t>& out) {
  if (t.is_leaf()) {
    out.push_back(t.value());
    return;
  }
  for (const IntTuple& e : t.elements()) collect_leaves(e, out);
}

IntTuple rebuild(const IntTuple& like, const std::vector<int64_t>& leaves, std::size_t& next) {
  if (like.is_leaf()) return IntTuple(leaves[next++]);
  std::vector<IntTuple> elements;
  elements.reserve(like.rank());
  for (const IntTuple& e : like.elements()) elements.push_back(rebuild(e, leaves, next));
  return IntTuple::tuple(std::move(elements));
}

}  // namespace

std::vector<int64_t> IntTuple::leaves() const {
  std::vector<int64_t> out;
  collect_leaves(*this, out);
  return out;
}

std::size_t IntTuple::leaf_count() const noexcept {
  if (leaf_) return 1;
  std::size_t n = 0;
  for (const IntTuple& e : elements_) n += e.leaf_count();
  return n;
}

std::string IntTuple::to_string() const {
  if (leaf_) return std::to_string(value_);
  std::string out = "(";
  for (std::size_t i = 0; i < elements_.size(); ++i) {
    if (i != 0) out += ',';
    out += elements_[i].to_string();
  }
  out += ')';
  return out;
}

bool operator==(const IntTuple& a, const IntTuple& b) noexcept {
  if (a.leaf_ != b.leaf_) return false;
  if (a.leaf_) return a.value_ == b.value_;
  return a.elements_ == b.elements_;
}

std::size_t IntTuple::hash() const noexcept {
  // Leaves and tuple boundaries both feed the hash, so (1,2) and ((1),2) differ.
  std::size_t h = leaf_ ? std::hash<int64_t>{}(value_) : 0x9e3779b97f4a7c15ULL + elements_.size();
  for (const IntTuple& e : elements_) {
    h ^= e.hash() + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  }
  return h;
}

bool congruent(const IntTuple& a, const IntTuple& b) noexcept {
  if (a.is_leaf() || b.is_leaf()) return a.is_leaf() && b.is_leaf();
  if (a.rank() != b.rank()) return false;
  for (std::size_t i = 0; i < a.rank(); ++i) {
    if (!congruent(a[i], b[i])) return false;
  }
  return true;
}

IntTuple unflatten(const std::vector<int64_t>& leaves, const IntTuple& like) {
  std::size_t next = 0;
  return rebuild(like, leaves, next);
}

}  // namespace strideweave
