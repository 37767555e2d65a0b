"""Carriers: storage instances for tensors (spec/carrier-storage)."""

from strideweave._core import CPU, Carrier, ClassDescriptor, Generic, VersionToken

__all__ = ["CPU", "Carrier", "ClassDescriptor", "Generic", "VersionToken"]
