"""Carriers: storage instances for tensors (spec/carrier-storage)."""

from strideweave._core import CPU, Carrier, CarrierClass, FileBacked, Generic, VersionToken

__all__ = ["CPU", "Carrier", "CarrierClass", "FileBacked", "Generic", "VersionToken"]
