"""The kit's checks: pytest tests parameterised by one carrier factory (the fixture
``carrier_factory`` of ``strideweave.kit.plugin``), each citing the spec ids it checks."""
