"""interop-movement: DLPack flows one way; nothing public adopts a capsule."""

import importlib
import inspect
import pkgutil
import re
import types

import numpy as np
import pytest

import strideweave as sw
from conformance.interop_movement import dlpack_reader as R
from conformance.interop_movement.refusals import live_exports

REQ = "interop-movement/dlpack-is-export-only"
FACTORIES = "core-tensor-representation/factories-copy-into-fresh-cpu-storage"


def _import(name: str) -> types.ModuleType | None:
    """The module, or None for a strideweave.contrib module whose optional dependency
    (its extra, e.g. tensorstore) is not installed."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as missing:
        if name.startswith("strideweave.contrib.") and missing.name != name:
            return None
        raise


MODULES = [sw] + [
    module
    for m in pkgutil.walk_packages(sw.__path__, prefix="strideweave.")
    if not any(part.startswith("_") for part in m.name.split("."))
    and (module := _import(m.name)) is not None
]
PROTOCOL = {"__dlpack__", "__dlpack_device__", "dlpack_info"}


def public_namespaces():
    """Every public module and every class they export, with their public attribute names."""
    seen = set()
    for module in MODULES:
        yield module.__name__, module
        for name in dir(module):
            value = getattr(module, name)
            if isinstance(value, type) and value not in seen:
                seen.add(value)
                yield f"{module.__name__}.{name}", value


@pytest.mark.spec(f"{REQ}/offer-no-adoption-path", f"{REQ}#1", f"{REQ}#2")
def test_no_public_name_imports_dlpack():
    """No from_dlpack anywhere; the only names mentioning DLPack are the export protocol."""
    assert {"layout", "dtypes", "carriers"} < {m.__name__.split(".")[-1] for m in MODULES}
    namespaces = list(public_namespaces())
    assert {"strideweave.Tensor", "strideweave.CPU", "strideweave.Carrier"} <= {
        n for n, _ in namespaces
    }
    for where, namespace in namespaces:
        assert not hasattr(namespace, "from_dlpack"), where
        names = {n for n in dir(namespace) if "dlpack" in n.lower()}
        assert names <= PROTOCOL, (where, names)
        for name in dir(namespace):
            if not name.startswith("_") and isinstance(getattr(namespace, name), types.ModuleType):
                assert not hasattr(getattr(namespace, name), "from_dlpack"), (where, name)
    assert not hasattr(sw._core, "from_dlpack")
    assert {n for n in dir(sw.Tensor) if "dlpack" in n} == {"__dlpack__", "__dlpack_device__"}
    assert "dlpack_info" in dir(sw.Carrier)


@pytest.mark.spec(f"{REQ}/offer-no-adoption-path", f"{REQ}#1")
@pytest.mark.parametrize("max_version", [None, (1, 0)])
def test_no_constructor_accepts_a_capsule(max_version):
    """Tensor, carriers and factories refuse a capsule with TypeError and leave it unconsumed."""
    capsule = sw.tensor([1.0, 2.0]).__dlpack__(max_version=max_version)
    name = R.capsule_name(capsule)
    live = live_exports()
    attempts = [
        lambda: sw.Tensor(capsule),
        lambda: sw.Tensor(capsule, sw.Layout(2)),
        lambda: sw.CPU(sw.Float32, values=capsule),
        lambda: sw.Generic(sw.Float32, values=capsule),
        lambda: sw.CPU(capsule),
        lambda: sw.tensor(capsule),
        lambda: sw.tensor([capsule, capsule]),
    ]
    for attempt in attempts:
        with pytest.raises(TypeError):
            attempt()
    assert R.capsule_name(capsule) == name
    assert R.inspect(capsule).shape == (2,)
    assert live_exports() == live


class ExportsOnly:
    """A producer offering nothing but the DLPack protocol."""

    def __init__(self):
        self.calls = 0
        self.array = np.arange(3, dtype=np.float32)

    def __dlpack__(self, *args, **kwargs):
        self.calls += 1
        return self.array.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        self.calls += 1
        return self.array.__dlpack_device__()


@pytest.mark.spec(f"{REQ}#1", FACTORIES)
def test_factories_do_not_consume_a_dlpack_producer():
    """A DLPack-only object is refused without its protocol ever being called."""
    producer = ExportsOnly()
    for attempt in (lambda: sw.tensor(producer), lambda: sw.CPU(sw.Float32, values=producer)):
        with pytest.raises(TypeError):
            attempt()
    assert producer.calls == 0


def parameter_names(function) -> list[str]:
    """The parameter names of a bound function's signature line, without self."""
    signature = inspect.getdoc(function).split("\n", 1)[0]
    inner = signature[signature.index("(") + 1 : signature.rindex(")")]
    names = re.findall(r"(?:^|, )(\w+):", inner)
    return [n for n in names if n != "self"]


@pytest.mark.spec(f"{REQ}#1")
@pytest.mark.parametrize(
    ("function", "expected"),
    [
        (sw.Tensor.__init__, ["carrier", "layout", "offset"]),
        (sw.CPU.__init__, ["dtype", "n", "values", "mutable"]),
        (sw.Generic.__init__, ["dtype", "n", "values", "mutable"]),
        (sw.FileBacked.__init__, ["dtype", "n", "path", "values", "mutable"]),
        (sw.Tensor.from_planes, ["dtype", "planes"]),
        (sw.tensor, ["values", "dtype"]),
        (sw.zeros, ["shape", "dtype"]),
        (sw.full, ["shape", "value", "dtype"]),
        (sw.arange, ["start", "stop", "step", "dtype"]),
    ],
)
def test_constructors_take_no_foreign_memory_argument(function, expected):
    """Constructors and factories have exactly their specified parameters: none adopts memory."""
    assert parameter_names(function) == expected
