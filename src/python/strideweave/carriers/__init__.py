"""Carriers: storage instances for tensors (spec/carrier-storage)."""

from strideweave._core import CPU, Carrier, ClassDescriptor, FileBacked, Generic, VersionToken

__all__ = ["CPU", "Carrier", "ClassDescriptor", "FileBacked", "Generic", "VersionToken"]
