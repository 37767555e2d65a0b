"""Math operations (spec/autograd, requirement group "Operations").

``add``, ``sub``, ``mul`` and ``div`` (true division, Float32 only) combine two
Tensors of equal shape and dtype, or a Tensor and a Python int or float (a
constant, in either order); ``neg`` negates; ``sum`` reduces over top-level modes.
The comparisons ``eq``, ``ne``, ``lt``, ``le``, ``gt`` and ``ge`` take the same
operands (``eq`` and ``ne`` also Bool ones) and return Bool tensors, recorded by no
autograd node. Results are fresh CPU tensors under the canonical layout. Tensor's
operators (``a + b``, ``2 * t``, ``a / b``, ``-t``, ``a == b``, ``t < 1``) and
``t.sum()`` call the same operations; autograd records them under grad mode.
"""

from strideweave._core import add, div, eq, ge, gt, le, lt, mul, ne, neg, sub, sum

__all__ = ["add", "div", "eq", "ge", "gt", "le", "lt", "mul", "ne", "neg", "sub", "sum"]
