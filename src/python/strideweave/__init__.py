"""StrideWeave: CuTe-style hierarchical layouts over pluggable storage.

The public names are re-exported here; each lives in the module that matches
its capability: ``strideweave.layout`` (core-layout), ``strideweave.dtypes``
and ``strideweave.tensors`` (core-tensor-representation) and
``strideweave.carriers`` (carrier-storage).
"""

from strideweave import carriers, dtypes, layout, tensors
from strideweave.carriers import *  # noqa: F403
from strideweave.dtypes import *  # noqa: F403
from strideweave.layout import *  # noqa: F403
from strideweave.tensors import *  # noqa: F403

__version__ = "0.1.0"

__all__ = [*carriers.__all__, *dtypes.__all__, *layout.__all__, *tensors.__all__]
