"""Math operations (spec/autograd, requirement group "Operations").

``add``, ``sub`` and ``mul`` combine two Tensors of equal shape and dtype, or a
Tensor and a Python int or float (a constant, in either order); ``neg`` negates;
``sum`` reduces over top-level modes. Results are fresh CPU tensors under the
canonical layout. Tensor's operators (``a + b``, ``2 * t``, ``-t``) and
``t.sum()`` call the same operations; autograd records them under grad mode.
"""

from strideweave._core import add, mul, neg, sub, sum

__all__ = ["add", "mul", "neg", "sub", "sum"]
