"""Carriers: storage instances for tensors (spec/carrier-storage)."""

from strideweave._core import CPU, Carrier, CarrierClass, Generic, VersionToken

__all__ = ["CPU", "Carrier", "CarrierClass", "Generic", "VersionToken"]
