"""StrideWeave conformance tests and the spec conformance harness (``conformance.harness``)."""
