#include "strideweave/tensor/format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <vector>

#include "strideweave/util/error.h"

namespace strideweave {

namespace {

template <typename F>
std::string format_float(F x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buffer[64];
  const std::to_chars_result result = std::to_chars(buffer, buffer + sizeof(buffer), x);
  std::string text(buffer, result.ptr);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

std::string format_scalar(const DType& dtype, const Scalar& s) {
  if (const bool* b = std::get_if<bool>(&s)) return *b ? "True" : "False";
  if (const int64_t* i = std::get_if<int64_t>(&s)) return std::to_string(*i);
  const double d = std::get<double>(s);
  if (dtype.kind() == DTypeKind::kFloat32) return format_float(static_cast<float>(d));
  return format_float(d);
}

// Which items of one leaf mode are shown: [0, head) and [extent - tail, extent).
struct ShownItems {
  int64_t extent;
  int64_t head;
  int64_t tail;
  bool cut() const { return head + tail < extent; }
  int64_t count() const { return head + tail; }
  int64_t position(int64_t k) const { return k < head ? k : extent - tail + (k - head); }
};

// The items each leaf mode shows under format_tensor's summary rule.
std::vector<ShownItems> shown_items(const std::vector<int64_t>& extents, int64_t size) {
  std::vector<ShownItems> shown;
  const bool summarize = size > kSummaryThreshold;
  for (int64_t extent : extents) {
    if (summarize && extent > 2 * kSummaryEdgeItems) {
      shown.push_back({extent, kSummaryEdgeItems, kSummaryEdgeItems});
    } else {
      shown.push_back({extent, extent, 0});
    }
  }
  if (!summarize) return shown;
  // Never overflows: each count is at most its extent, and size is their product.
  const auto total = [&] {
    int64_t n = 1;
    for (const ShownItems& s : shown) n *= s.count();
    return n;
  };
  for (ShownItems& s : shown) {
    if (total() <= kSummaryThreshold) break;
    if (s.extent > 2 && s.count() > 2) s = {s.extent, 1, 1};
    if (total() <= kSummaryThreshold) break;
    if (s.count() > 1) s = {s.extent, 1, 0};
  }
  return shown;
}

// Renders shown values (row-major over the shown items, first mode outermost).
class Renderer {
 public:
  Renderer(const std::vector<ShownItems>& shown, const std::vector<std::string>& texts,
           std::size_t indent)
      : shown_(shown), texts_(texts), indent_(indent) {
    for (const std::string& t : texts_) width_ = std::max(width_, t.size());
  }

  std::string render(std::size_t level) {
    if (level == shown_.size()) {
      const std::string& text = texts_[next_++];
      return std::string(width_ - text.size(), ' ') + text;
    }
    const ShownItems& mode = shown_[level];
    const bool innermost = level + 1 == shown_.size();
    const std::string separator = innermost
                                      ? ", "
                                      : "," + std::string(level + 2 < shown_.size() ? 2 : 1, '\n') +
                                            std::string(indent_ + level + 1, ' ');
    std::string out = "[";
    for (int64_t k = 0; k < mode.count(); ++k) {
      if (k > 0) out += separator;
      if (k == mode.head && mode.cut()) out += "..." + separator;
      out += render(level + 1);
    }
    if (mode.cut() && mode.tail == 0) out += (mode.count() > 0 ? separator : "") + "...";
    return out + "]";
  }

 private:
  const std::vector<ShownItems>& shown_;
  const std::vector<std::string>& texts_;
  std::size_t indent_;
  std::size_t width_ = 0;
  std::size_t next_ = 0;
};

// The leaf modes every element is read through: the one subtensor's, or
// plane 0's (all planes share the shape).
const Layout& layout_of(const Tensor& t) {
  return t.is_multi_subtensor() ? t.planes().front()->subtensor("repr").layout
                                : t.subtensor("repr").layout;
}

Value read_at(const Tensor& t, const std::vector<int64_t>& coordinate) {
  if (!t.is_multi_subtensor()) {
    const Subtensor& s = t.subtensor("repr");
    int64_t slot = s.offset;
    const std::vector<LeafMode>& modes = s.layout.leaf_modes();
    for (std::size_t m = 0; m < modes.size(); ++m) slot += coordinate[m] * modes[m].stride;
    return s.carrier->read(slot);
  }
  Record record;
  for (const auto& plane : t.planes()) {
    const Value v = read_at(*plane, coordinate);
    if (const bool* b = std::get_if<bool>(&v)) {
      record.fields.emplace_back(*b);
    } else if (const int64_t* i = std::get_if<int64_t>(&v)) {
      record.fields.emplace_back(*i);
    } else {
      record.fields.emplace_back(std::get<double>(v));
    }
  }
  return record;
}

bool any_released(const Tensor& t) {
  if (!t.is_multi_subtensor()) return t.subtensor("repr").carrier->is_released();
  for (const auto& plane : t.planes()) {
    if (any_released(*plane)) return true;
  }
  return false;
}

std::string format_values(const Tensor& t, std::size_t indent) {
  std::vector<int64_t> extents;
  for (const LeafMode& m : layout_of(t).leaf_modes()) extents.push_back(m.extent);
  const std::vector<ShownItems> shown = shown_items(extents, layout_of(t).size());
  int64_t count = 1;
  for (const ShownItems& s : shown) count *= s.count();
  std::vector<std::string> texts;
  texts.reserve(static_cast<std::size_t>(count));
  std::vector<int64_t> k(shown.size(), 0);
  std::vector<int64_t> coordinate(shown.size(), 0);
  for (int64_t n = 0; n < count; ++n) {
    for (std::size_t m = 0; m < shown.size(); ++m) coordinate[m] = shown[m].position(k[m]);
    texts.push_back(format_value(t.dtype(), read_at(t, coordinate)));
    for (std::size_t m = shown.size(); m-- > 0;) {  // last leaf mode fastest
      if (++k[m] < shown[m].count()) break;
      k[m] = 0;
    }
  }
  return Renderer(shown, texts, indent).render(0);
}

std::string describe_subtensor(const Subtensor& s) {
  return "layout=" + s.layout.to_string() + ", offset=" + std::to_string(s.offset) +
         ", carrier=" + s.carrier->label() + (s.carrier->is_released() ? " (released)" : "");
}

}  // namespace

std::string format_value(const DType& dtype, const Value& value) {
  if (const Record* r = std::get_if<Record>(&value)) {
    std::string out = "(";
    for (std::size_t i = 0; i < r->fields.size(); ++i) {
      if (i > 0) out += ", ";
      const DType& field = dtype.is_compound() ? dtype.fields()[i].dtype : dtype;
      out += format_scalar(field, r->fields[i]);
    }
    return out + (r->fields.size() == 1 ? ",)" : ")");
  }
  if (const bool* b = std::get_if<bool>(&value)) return format_scalar(dtype, *b);
  if (const int64_t* i = std::get_if<int64_t>(&value)) return format_scalar(dtype, *i);
  return format_scalar(dtype, std::get<double>(value));
}

std::string format_tensor(const Tensor& tensor) {
  static const std::string prefix = "Tensor(";
  std::string values = "<released>";
  if (!any_released(tensor)) {
    try {
      values = format_values(tensor, prefix.size());
    } catch (const RuntimeError&) {
      if (!any_released(tensor)) throw;  // released while being read
    }
  }
  std::string out = prefix + values + ", dtype=" + tensor.dtype().name() + ", ";
  if (!tensor.is_multi_subtensor()) return out + describe_subtensor(tensor.subtensor("repr")) + ")";
  out += "planes=[";
  const std::vector<Field>& fields = tensor.dtype().fields();
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out += "; ";
    out += fields[i].name + ": " + describe_subtensor(tensor.planes()[i]->subtensor("repr"));
  }
  return out + "])";
}

}  // namespace strideweave
