#include "strideweave/dtype/dtype.h"

#include <functional>
#include <set>

#include "strideweave/util/error.h"

namespace strideweave {

namespace {

const std::vector<Field>& no_fields() {
  static const std::vector<Field> empty;
  return empty;
}

}  // namespace

DType DType::compound(std::vector<Field> fields) {
  if (fields.empty()) throw ValueError("compound dtype needs at least one field");
  std::set<std::string> names;
  for (const Field& f : fields) {
    if (f.name.empty()) throw ValueError("compound dtype field names must not be empty");
    if (!f.dtype.is_concrete()) {
      throw TypeError("compound dtype field '" + f.name + "' has dtype " + f.dtype.name() +
                      "; fields must be concrete scalar dtypes (Bool, Int32, Float32)");
    }
    if (!names.insert(f.name).second) {
      throw ValueError("compound dtype field name '" + f.name + "' is duplicated");
    }
  }
  DType result(DTypeKind::kCompound);
  result.fields_ = std::make_shared<const std::vector<Field>>(std::move(fields));
  return result;
}

std::optional<std::size_t> DType::itemsize() const noexcept {
  switch (kind_) {
    case DTypeKind::kBool:
      return 1;
    case DTypeKind::kInt32:
    case DTypeKind::kFloat32:
      return 4;
    case DTypeKind::kFloating:
    case DTypeKind::kAny:
      return std::nullopt;
    case DTypeKind::kCompound: {
      std::size_t total = 0;
      for (const Field& f : *fields_) total += *f.dtype.itemsize();
      return total;
    }
  }
  return std::nullopt;
}

const std::vector<Field>& DType::fields() const noexcept {
  return fields_ ? *fields_ : no_fields();
}

std::string DType::name() const {
  switch (kind_) {
    case DTypeKind::kBool:
      return "Bool";
    case DTypeKind::kInt32:
      return "Int32";
    case DTypeKind::kFloat32:
      return "Float32";
    case DTypeKind::kFloating:
      return "Floating";
    case DTypeKind::kAny:
      return "Any";
    case DTypeKind::kCompound: {
      std::string out = "compound(";
      for (std::size_t i = 0; i < fields_->size(); ++i) {
        if (i != 0) out += ", ";
        out += (*fields_)[i].name + "=" + (*fields_)[i].dtype.name();
      }
      return out + ")";
    }
  }
  return "?";
}

bool operator==(const DType& a, const DType& b) noexcept {
  if (a.kind_ != b.kind_) return false;
  if (a.kind_ != DTypeKind::kCompound) return true;
  return a.fields_ == b.fields_ || *a.fields_ == *b.fields_;
}

std::size_t DType::hash() const noexcept {
  std::size_t h = std::hash<int>{}(static_cast<int>(kind_));
  for (const Field& f : fields()) {
    h ^= std::hash<std::string>{}(f.name) + f.dtype.hash() + 0x9e3779b97f4a7c15ULL + (h << 6) +
         (h >> 2);
  }
  return h;
}

}  // namespace strideweave
