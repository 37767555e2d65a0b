// Python binding of the math operations. Operands are converted here; every
// operation runs in the core (strideweave/ops/math.h). The GIL is released
// around operations on large tensors only: releasing and retaking it costs
// more than a small operation.
#include "ops.h"

#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "describe.h"
#include "gil.h"
#include "int_convert.h"
#include "strideweave/ops/math.h"
#include "strideweave/tensor/tensor.h"
#include "strideweave/util/error.h"
#include "type_hint.h"
#include "value_convert.h"

namespace py = pybind11;

namespace strideweave::bindings {

namespace {

// Operations on at least this many elements run without the GIL.
constexpr int64_t kWithoutGilElements = int64_t{1} << 15;

enum class Kind { kAdd, kSub, kMul, kDiv, kEq, kNe, kLt, kLe, kGt, kGe };

// The comparison of a comparison kind; nullopt for an arithmetic one.
std::optional<ops::Comparison> comparison_of(Kind kind) {
  switch (kind) {
    case Kind::kEq:
      return ops::Comparison::kEq;
    case Kind::kNe:
      return ops::Comparison::kNe;
    case Kind::kLt:
      return ops::Comparison::kLt;
    case Kind::kLe:
      return ops::Comparison::kLe;
    case Kind::kGt:
      return ops::Comparison::kGt;
    case Kind::kGe:
      return ops::Comparison::kGe;
    default:
      return std::nullopt;
  }
}

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::kAdd:
      return "add";
    case Kind::kSub:
      return "sub";
    case Kind::kMul:
      return "mul";
    case Kind::kDiv:
      return "div";
    default:
      return ops::comparison_name(*comparison_of(kind));
  }
}

// Runs f() without the GIL when `t` is large.
template <class F>
std::shared_ptr<Tensor> run(const Tensor& t, F&& f) {
  if (!t.is_multi_subtensor() && shape_size(t.shape()) >= kWithoutGilElements) {
    return without_gil(std::forward<F>(f));
  }
  return f();
}

// A binary operand: a Tensor, or a Python int or float (a constant).
struct Operand {
  std::shared_ptr<const Tensor> tensor;
  Value constant;
};

std::optional<Operand> to_operand(py::handle obj) {
  if (py::isinstance<Tensor>(obj)) return Operand{obj.cast<std::shared_ptr<Tensor>>(), Value{}};
  if (PyLong_Check(obj.ptr()) || PyFloat_Check(obj.ptr())) return Operand{nullptr, to_value(obj)};
  return std::nullopt;
}

std::shared_ptr<Tensor> combine(Kind kind, const Operand& a, const Operand& b) {
  const std::optional<ops::Comparison> comparison = comparison_of(kind);
  if (a.tensor && b.tensor) {
    return run(*a.tensor, [&] {
      if (comparison) return ops::compare(*comparison, a.tensor, b.tensor);
      switch (kind) {
        case Kind::kAdd:
          return ops::add(a.tensor, b.tensor);
        case Kind::kSub:
          return ops::sub(a.tensor, b.tensor);
        case Kind::kMul:
          return ops::mul(a.tensor, b.tensor);
        default:  // kDiv: the comparisons returned above
          return ops::div(a.tensor, b.tensor);
      }
    });
  }
  const bool constant_first = !a.tensor;
  const std::shared_ptr<const Tensor>& t = constant_first ? b.tensor : a.tensor;
  const Value& c = constant_first ? a.constant : b.constant;
  return run(*t, [&] {
    if (comparison) return ops::compare(*comparison, t, c, constant_first);
    switch (kind) {
      case Kind::kAdd:
        return ops::add(t, c);
      case Kind::kSub:
        return ops::sub(t, c, constant_first);
      case Kind::kMul:
        return ops::mul(t, c);
      default:  // kDiv: the comparisons returned above
        return ops::div(t, c, constant_first);
    }
  });
}

// sw.add(a, b) and friends: at least one Tensor, the other a Tensor or a
// number; TypeError naming the operation and the operand otherwise.
std::shared_ptr<Tensor> function(Kind kind, py::handle a, py::handle b) {
  const std::optional<Operand> x = to_operand(a);
  const std::optional<Operand> y = to_operand(b);
  for (const auto& [operand, obj] : {std::pair{&x, a}, std::pair{&y, b}}) {
    if (!*operand) {
      throw TypeError(std::string(kind_name(kind)) + ": operand " + describe_object(obj) +
                      " is not a Tensor, an int or a float");
    }
  }
  if (!x->tensor && !y->tensor) {
    throw TypeError(std::string(kind_name(kind)) + ": at least one operand must be a Tensor");
  }
  return combine(kind, *x, *y);
}

// The operator: NotImplemented for an operand it does not know, so Python
// tries the reflected operator and then raises its own TypeError.
// A receiver that is not a Tensor (Tensor.__add__(1, 2)) is TypeError, as for any
// method descriptor.
py::object op(Kind kind, py::handle self, py::handle other, bool reflected) {
  if (!py::isinstance<Tensor>(self)) {
    throw TypeError(std::string("Tensor operator ") + kind_name(kind) + " needs a Tensor, not " +
                    describe_object(self));
  }
  const std::optional<Operand> x = to_operand(self);
  const std::optional<Operand> y = to_operand(other);
  if (!x || !y) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
  return py::cast(reflected ? combine(kind, *y, *x) : combine(kind, *x, *y));
}

std::optional<std::vector<int64_t>> to_modes(py::handle modes) {
  if (modes.is_none()) return std::nullopt;
  if (PyIndex_Check(modes.ptr()) && !PyBool_Check(modes.ptr())) {
    return std::vector<int64_t>{to_int64(modes, "sum mode")};
  }
  std::vector<int64_t> out;
  for (py::handle m : py::iter(modes)) out.push_back(to_int64(m, "sum mode"));
  return out;
}

// The Tensor argument `t` of a unary operation; TypeError naming it otherwise (None too).
std::shared_ptr<const Tensor> unary_operand(py::handle t, const char* op) {
  if (!py::isinstance<Tensor>(t)) {
    throw TypeError(std::string(op) + ": " + describe_object(t) + " is not a Tensor");
  }
  return t.cast<std::shared_ptr<Tensor>>();
}

std::shared_ptr<Tensor> neg(Hint<"Tensor"> operand) {
  const std::shared_ptr<const Tensor> t = unary_operand(operand, "neg");
  return run(*t, [&] { return ops::neg(t); });
}

std::shared_ptr<Tensor> sum(Hint<"Tensor"> operand,
                            Hint<"int | collections.abc.Sequence[int] | None"> modes) {
  const std::shared_ptr<const Tensor> t = unary_operand(operand, "sum");
  const std::optional<std::vector<int64_t>> converted = to_modes(modes);
  return run(*t, [&] { return ops::sum(t, converted); });
}

using OperandArg = Hint<"Tensor | int | float">;

// The docstring of sw.<name>(a, b): `what` is its summary, `returns` the result's description.
std::string binary_doc(const std::string& summary, const std::string& detail,
                       const std::string& returns, const std::string& type_error) {
  return summary + "\n\n" + detail +
         "\n\nParameters\n----------\n"
         "a : Tensor or int or float\n    The first operand.\n"
         "b : Tensor or int or float\n    The second operand.\n\n"
         "Returns\n-------\nTensor\n    " +
         returns +
         "\n\nRaises\n------\n"
         "TypeError\n    When an operand is not a Tensor, an int or a float, neither is a "
         "Tensor, or " +
         type_error +
         "\nValueError\n    When two Tensors' shapes differ.\n"
         "NotImplementedError\n    For a multi-subtensor tensor.\n";
}

constexpr const char* kOperandsDetail =
    "Two Tensors must have equal shapes and dtypes; a Python int or float on either side is a "
    "constant applied to every element. The result is a fresh CPU tensor under the compact "
    "column-major layout of the shape. Operations on large tensors run without the GIL.";

// The docstring of Tensor.<dunder>(self, other).
std::string operator_doc(const std::string& expression, const std::string& function) {
  return "``" + expression + "``: ``sw." + function +
         "`` of the tensor and ``other``.\n\n"
         "Returns NotImplemented for an operand that is not a Tensor, an int or a float, so that "
         "Python tries the reflected operator.\n\n"
         "Parameters\n----------\nother : Tensor or int or float\n    The other operand.\n\n"
         "Returns\n-------\nTensor\n    The result, as ``sw." +
         function +
         "`` returns it.\n\n"
         "Raises\n------\nTypeError\n    As ``sw." +
         function +
         "`` raises it for the dtypes.\nValueError\n    When two Tensors' shapes differ.\n";
}

}  // namespace

void bind_ops(py::module_& m) {
  const std::string arithmetic =
      "autograd records the operation under grad mode (see strideweave.autograd).";
  m.def(
      "add", [](OperandArg a, OperandArg b) { return function(Kind::kAdd, a, b); }, py::arg("a"),
      py::arg("b"),
      binary_doc("Element-wise sum ``a + b``.", std::string(kOperandsDetail) + " The " + arithmetic,
                 "The sums, of the operands' dtype.", "the dtypes differ or do not add.")
          .c_str());
  m.def(
      "sub", [](OperandArg a, OperandArg b) { return function(Kind::kSub, a, b); }, py::arg("a"),
      py::arg("b"),
      binary_doc(
          "Element-wise difference ``a - b``.", std::string(kOperandsDetail) + " The " + arithmetic,
          "The differences, of the operands' dtype.", "the dtypes differ or do not subtract.")
          .c_str());
  m.def(
      "mul", [](OperandArg a, OperandArg b) { return function(Kind::kMul, a, b); }, py::arg("a"),
      py::arg("b"),
      binary_doc("Element-wise product ``a * b``.",
                 std::string(kOperandsDetail) + " The " + arithmetic,
                 "The products, of the operands' dtype.", "the dtypes differ or do not multiply.")
          .c_str());
  m.def(
      "div", [](OperandArg a, OperandArg b) { return function(Kind::kDiv, a, b); }, py::arg("a"),
      py::arg("b"),
      binary_doc("Element-wise true division ``a / b`` of Float32 operands.",
                 std::string(kOperandsDetail) +
                     " Division by zero gives inf or nan as IEEE 754 does. The " + arithmetic,
                 "The Float32 quotients.",
                 "an operand is Int32 (there is no promotion) or the dtypes differ.")
          .c_str());
  m.def("neg", &neg, py::arg("t"), R"doc(Element-wise negation ``-t``.

The result is a fresh CPU tensor under the compact column-major layout of the
shape; autograd records the operation under grad mode.

Parameters
----------
t : Tensor
    The operand (Float32 or Int32).

Returns
-------
Tensor
    The negated values, of ``t``'s dtype.

Raises
------
TypeError
    When ``t`` is not a Tensor or its dtype has no negation.
NotImplementedError
    For a multi-subtensor tensor.
)doc");
  for (const auto& [name, kind, symbol] :
       {std::tuple{"eq", Kind::kEq, "=="}, std::tuple{"ne", Kind::kNe, "!="},
        std::tuple{"lt", Kind::kLt, "<"}, std::tuple{"le", Kind::kLe, "<="},
        std::tuple{"gt", Kind::kGt, ">"}, std::tuple{"ge", Kind::kGe, ">="}}) {
    const bool equality = kind == Kind::kEq || kind == Kind::kNe;
    m.def(
        name, [kind = kind](OperandArg a, OperandArg b) { return function(kind, a, b); },
        py::arg("a"), py::arg("b"),
        binary_doc(std::string("Element-wise comparison ``a ") + symbol + " b``.",
                   std::string(kOperandsDetail) +
                       " Float32 NaN compares as IEEE 754 says. No autograd node records a "
                       "comparison.",
                   "Bool values, one per element.",
                   equality ? "the dtypes differ or are not Float32, Int32 or Bool."
                            : "the dtypes differ or are not Float32 or Int32.")
            .c_str());
  }
  m.def("sum", &sum, py::arg("t"), py::arg("modes") = py::none(),
        R"doc(The sum of ``t``'s values over the given top-level modes.

The summed modes are removed from the shape; summing every mode gives a
rank-0 tensor. The result is fresh CPU storage; autograd records the
operation under grad mode.

Parameters
----------
t : Tensor
    The operand (Float32 or Int32).
modes : int or sequence of int, optional
    The top-level modes to sum over; every mode when None.

Returns
-------
Tensor
    The sums, of ``t``'s dtype.

Raises
------
TypeError
    When ``t`` is not a Tensor, a mode is not an integer, or the dtype has
    no sum.
ValueError
    When a mode is out of range or repeats.
NotImplementedError
    For a multi-subtensor tensor.
)doc");

  auto tensor = py::reinterpret_borrow<py::class_<Tensor, py::smart_holder>>(m.attr("Tensor"));
  using Self = Hint<"Tensor">;
  for (const auto& [name, kind, reflected, expression, function_name] :
       {std::tuple{"__add__", Kind::kAdd, false, "self + other", "add"},
        std::tuple{"__radd__", Kind::kAdd, true, "other + self", "add"},
        std::tuple{"__sub__", Kind::kSub, false, "self - other", "sub"},
        std::tuple{"__rsub__", Kind::kSub, true, "other - self", "sub"},
        std::tuple{"__mul__", Kind::kMul, false, "self * other", "mul"},
        std::tuple{"__rmul__", Kind::kMul, true, "other * self", "mul"},
        std::tuple{"__truediv__", Kind::kDiv, false, "self / other", "div"},
        std::tuple{"__rtruediv__", Kind::kDiv, true, "other / self", "div"},
        // Python reflects a comparison by the mirrored operator (2 < t is t > 2).
        std::tuple{"__eq__", Kind::kEq, false, "self == other", "eq"},
        std::tuple{"__ne__", Kind::kNe, false, "self != other", "ne"},
        std::tuple{"__lt__", Kind::kLt, false, "self < other", "lt"},
        std::tuple{"__le__", Kind::kLe, false, "self <= other", "le"},
        std::tuple{"__gt__", Kind::kGt, false, "self > other", "gt"},
        std::tuple{"__ge__", Kind::kGe, false, "self >= other", "ge"}}) {
    tensor.def(
        name, [ kind = kind, reflected = reflected ](Self s, OperandArg o)->Hint<"Tensor"> {
          return op(kind, s, o, reflected);
        },
        py::arg("other"), operator_doc(expression, function_name).c_str());
  }
  tensor
      .def("__neg__", &neg, R"doc(``-self``: ``sw.neg`` of the tensor.

Returns
-------
Tensor
    The negated values.

Raises
------
TypeError
    When the dtype has no negation.
)doc")
      .def(
          "sum",
          [](Self t, Hint<"int | collections.abc.Sequence[int] | None"> modes) {
            return sum(t, modes);
          },
          py::arg("modes") = py::none(),
          R"doc(``sw.sum(self, modes)``: the sum over the given top-level modes.

Parameters
----------
modes : int or sequence of int, optional
    The top-level modes to sum over; every mode when None.

Returns
-------
Tensor
    The sums, of the tensor's dtype.

Raises
------
TypeError
    When a mode is not an integer or the dtype has no sum.
ValueError
    When a mode is out of range or repeats.
)doc");
  // Defining __eq__ drops the inherited hash; a Tensor hashes by identity, with
  // object's hash function (as PyTorch's tensors do).
  tensor.def("__hash__", [](py::handle self) {
    if (!py::isinstance<Tensor>(self)) {
      throw TypeError("Tensor.__hash__ needs a Tensor, not " + describe_object(self));
    }
    const Py_hash_t hash = PyBaseObject_Type.tp_hash(self.ptr());
    if (hash == -1) throw py::error_already_set();
    return hash;
  });
}

}  // namespace strideweave::bindings
