"""Unit tests of the spec conformance harness (they bind no spec scenario)."""
