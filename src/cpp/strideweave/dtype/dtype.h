// Logical dtypes (spec/core-tensor-representation): the concrete scalars
// Bool, Int32 and Float32, the abstract families Floating and Any, and
// compound dtypes of named concrete scalar fields.
//
// A DType is a small immutable value: cheap to copy, comparable, hashable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace strideweave {

enum class DTypeKind { kBool, kInt32, kFloat32, kFloating, kAny, kCompound };

struct Field;

class DType {
 public:
  static DType Bool() { return DType(DTypeKind::kBool); }
  static DType Int32() { return DType(DTypeKind::kInt32); }
  static DType Float32() { return DType(DTypeKind::kFloat32); }
  static DType Floating() { return DType(DTypeKind::kFloating); }
  static DType Any() { return DType(DTypeKind::kAny); }

  // A compound dtype of `fields`, in order. Throws TypeError naming a field
  // whose dtype is not a concrete scalar, ValueError for no fields, an empty
  // name or a duplicate name.
  static DType compound(std::vector<Field> fields);

  DTypeKind kind() const noexcept { return kind_; }
  bool is_concrete() const noexcept { return is_scalar() && !is_abstract(); }
  bool is_abstract() const noexcept {
    return kind_ == DTypeKind::kFloating || kind_ == DTypeKind::kAny;
  }
  bool is_compound() const noexcept { return kind_ == DTypeKind::kCompound; }
  bool is_scalar() const noexcept { return kind_ != DTypeKind::kCompound; }

  // Bytes per value: 1, 4, 4 for Bool, Int32, Float32; the sum of the field
  // sizes for a compound dtype; nullopt for an abstract dtype.
  std::optional<std::size_t> itemsize() const noexcept;

  // The fields of a compound dtype; empty otherwise.
  const std::vector<Field>& fields() const noexcept;

  // "Float32", or "compound(x=Float32, n=Int32)".
  std::string name() const;

  friend bool operator==(const DType& a, const DType& b) noexcept;
  friend bool operator!=(const DType& a, const DType& b) noexcept { return !(a == b); }
  std::size_t hash() const noexcept;

 private:
  explicit DType(DTypeKind kind) : kind_(kind) {}

  DTypeKind kind_;
  std::shared_ptr<const std::vector<Field>> fields_;  // compound only
};

struct Field {
  std::string name;
  DType dtype;
  friend bool operator==(const Field& a, const Field& b) noexcept {
    return a.name == b.name && a.dtype == b.dtype;
  }
};

}  // namespace strideweave
