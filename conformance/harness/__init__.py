"""Spec conformance harness: binds tests to OpenSpec ids and reports coverage.

The spec model and the report writers live in ``strideweave._harness`` (shipped in the
wheel, so that the carrier kit ``strideweave.kit`` reports with them); this package adds
what only the repository needs:

* ``evidence``  - citations from pytest collection and C++ tests.
* ``cpp``       - C++ test-name citations, gtest XML results and test lists.
* ``plugin``    - the pytest plugin; ``cli`` - ``python -m conformance.harness``.

Nothing here, nor in ``strideweave._harness``, imports the runtime of ``strideweave``.
"""
