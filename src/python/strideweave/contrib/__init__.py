"""Carriers over third-party storage libraries, each an optional extra.

``strideweave.contrib.tensorstore`` (``pip install 'strideweave[tensorstore]'``) keeps slots
in a TensorStore array. Importing ``strideweave`` or this package never imports a
third-party storage library; importing one of its modules does.
"""
