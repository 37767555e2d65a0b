"""carrier-storage: class descriptors, the dlpack_info hook, CPU and Generic."""

import ctypes
import struct
import subprocess
import sys
import textwrap

import pytest

import strideweave as sw
from strideweave import _core
from strideweave._core import _testing

CLASSES = "carrier-storage/every-carrier-class-has-an-exact-runtime-class-descriptor"
HOOK = "carrier-storage/carriers-opt-into-dlpack-through-the-dlpack-info-hook"
CPU_REQ = "carrier-storage/cpu-stores-slots-in-an-aligned-host-buffer"
GENERIC = "carrier-storage/generic-stores-elements-of-any-dtype-without-a-pointer"


@pytest.mark.spec(f"{CLASSES}/distinguish-a-python-subclass", f"{CLASSES}#1", f"{CLASSES}#2")
def test_distinguish_a_python_subclass():
    class Pinned(sw.CPU):
        pass

    cpu, pinned, generic = sw.CPU(sw.Int32, 1), Pinned(sw.Int32, 1), sw.Generic(sw.Int32, 1)
    descriptors = {cpu.carrier_class, pinned.carrier_class, generic.carrier_class}
    assert len(descriptors) == 3
    assert pinned.carrier_class is Pinned.carrier_class
    assert pinned.carrier_class.name == "test_distinguish_a_python_subclass.<locals>.Pinned"
    assert pinned.carrier_class.parent == sw.CPU.carrier_class
    assert sw.CPU.carrier_class.parent == sw.Carrier.carrier_class
    assert sw.Carrier.carrier_class.parent is None
    assert Pinned(sw.Float32).carrier_class == pinned.carrier_class
    assert sw.CPU(sw.Float32).carrier_class == cpu.carrier_class


@pytest.mark.spec(f"{CLASSES}#2")
def test_same_named_subclasses_are_different_classes():
    def make():
        class Twin(sw.Generic):
            pass

        return Twin

    first, second = make(), make()
    assert first.carrier_class.name == second.carrier_class.name
    assert first.carrier_class != second.carrier_class
    assert hash(first.carrier_class) != hash(second.carrier_class)


@pytest.mark.spec(f"{CLASSES}#2")
def test_descriptor_of_a_grandchild_names_its_parent():
    class Child(sw.CPU):
        pass

    class Grandchild(Child):
        pass

    assert Grandchild.carrier_class.parent == Child.carrier_class
    assert Grandchild(sw.Int32, 1).carrier_class == Grandchild.carrier_class


@pytest.mark.spec(f"{CLASSES}/map-every-built-in-to-its-static-descriptor", f"{CLASSES}#5")
def test_map_every_built_in_to_its_static_descriptor():
    builtins = _core._builtin_carrier_classes()
    assert builtins[0].name == "Carrier"
    assert {d.name for d in builtins} >= {"Carrier", "CPU", "Generic"}
    for descriptor in builtins:
        cls = getattr(_core, descriptor.name)
        assert cls.carrier_class is descriptor
        if cls is sw.Evictable:  # a composite: constructed over its tiers
            assert cls(sw.CPU(sw.Int32), sw.Generic(sw.Int32)).carrier_class is descriptor
        elif cls not in (sw.Carrier, sw.PythonStorageCarrier):  # abstract: no constructor
            assert cls(sw.Int32).carrier_class is descriptor
        assert descriptor.kind == "carrier"
        assert descriptor.definition_state == "definition-free"
        assert descriptor.pinned_source is None and descriptor.pinned_destination is None
    # Every carrier class the extension defines is one of the core's built-ins, except
    # TiledEvictable, which is definition-backed (spec/carrier-composition).
    bound = {
        obj.carrier_class
        for obj in vars(_core).values()
        if isinstance(obj, type) and issubclass(obj, sw.Carrier)
    }
    tiled = _core.TiledEvictable.carrier_class
    assert tiled.definition_state == "definition-backed"
    assert bound - {tiled} == set(builtins)


@pytest.mark.spec(f"{CLASSES}#4")
def test_one_descriptor_type_reports_kind_and_definition_state():
    class Open(sw.Generic):
        pass

    for descriptor in (sw.CPU.carrier_class, Open.carrier_class):
        assert type(descriptor) is sw.ClassDescriptor
        assert descriptor.kind == "carrier"
    assert Open.carrier_class.definition_state == "open"
    assert repr(Open.carrier_class) == f"<ClassDescriptor carrier {Open.__qualname__}>"


@pytest.mark.spec(f"{CLASSES}/name-a-python-subclass-from-another-thread", f"{CLASSES}#6")
def test_name_a_python_subclass_from_another_thread():
    # The worker keeps the caller's GIL held; a descriptor resolved lazily (taking the
    # GIL) would deadlock, so the check runs in a child with a timeout.
    script = textwrap.dedent(
        """
        import strideweave as sw
        from strideweave._core import _testing

        class Tagged(sw.CPU):
            pass

        registered = _testing.registered_descriptor(Tagged)
        assert registered is not None and registered.name == "Tagged", registered
        assert registered.definition_state == "open"
        carrier = Tagged(sw.Float32, 2)
        label = _testing.label_on_worker(carrier)
        assert label == f"Tagged carrier #{label.split('#')[1]}", label
        assert carrier.carrier_class is registered
        print("ok", label)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok Tagged carrier #")


@pytest.mark.spec(f"{CLASSES}#6")
def test_subclass_that_does_not_chain_init_subclass_still_gets_one_descriptor():
    class Quiet(sw.CPU):
        def __init_subclass__(cls, **kwargs):
            pass  # deliberately does not chain to Carrier.__init_subclass__

    class Silent(Quiet):
        pass

    assert _testing.registered_descriptor(Silent) is None
    first = Silent(sw.Int32, 1)
    assert _testing.registered_descriptor(Silent) is first.carrier_class
    assert first.carrier_class.parent is Quiet.carrier_class
    assert Silent(sw.Int32, 1).carrier_class is first.carrier_class


@pytest.mark.spec(f"{CLASSES}#6")
def test_init_subclass_chains_keyword_arguments():
    seen = {}

    class Mixin:
        def __init_subclass__(cls, **kwargs):
            seen[cls.__name__] = kwargs.pop("tag", None)
            super().__init_subclass__(**kwargs)

    class Base(sw.Generic, Mixin):
        pass

    class Tagged(Base, tag="t"):
        pass

    assert seen["Tagged"] == "t"
    assert Tagged.carrier_class.parent is Base.carrier_class
    with pytest.raises(TypeError):

        class Unexpected(sw.CPU, unknown=1):
            pass


@pytest.mark.spec(f"{HOOK}/report-cpu-storage", f"{HOOK}#1", f"{HOOK}#3")
def test_report_cpu_storage():
    c = sw.CPU(sw.Float32, 4)
    assert c.dlpack_info() == {"pointer": c.pointer(), "device_type": 1, "device_id": 0}
    c.release()
    assert c.dlpack_info() == {"pointer": 0, "device_type": 1, "device_id": 0}


@pytest.mark.spec(f"{HOOK}/refuse-by-default", f"{HOOK}#2", f"{HOOK}#4")
def test_refuse_by_default():
    g = sw.Generic(sw.Float32, 2)
    with pytest.raises(BufferError, match="Generic"):
        g.dlpack_info()
    assert g.version == 0 and not g.is_released

    class Plain(sw.Generic):
        pass

    with pytest.raises(BufferError, match="Plain"):
        Plain(sw.Float32, 1).dlpack_info()


@pytest.mark.spec(f"{HOOK}/override-the-hook-from-python", f"{HOOK}#1")
def test_override_the_hook_from_python():
    class Exported(sw.Generic):
        def dlpack_info(self):
            return {"pointer": 4096, "device_type": 8, "device_id": 3, "extra": True}

    assert Exported(sw.Float32, 1).dlpack_info() == {
        "pointer": 4096,
        "device_type": 8,
        "device_id": 3,
        "extra": True,
    }


@pytest.mark.spec(f"{CPU_REQ}/expose-the-aligned-buffer", f"{CPU_REQ}#1", f"{CPU_REQ}#3")
def test_expose_the_aligned_buffer():
    c = sw.CPU(sw.Float32, 4)
    c.write(1, 2.5)
    address = c.pointer()
    assert address % 64 == 0
    assert ctypes.c_float.from_address(address + 4).value == 2.5
    ints = sw.CPU(sw.Int32, values=[7, -3])
    assert ctypes.c_int32.from_address(ints.pointer() + 4).value == -3
    flags = sw.CPU(sw.Bool, values=[False, True])
    assert ctypes.c_uint8.from_address(flags.pointer() + 1).value == 1


@pytest.mark.spec(f"{CPU_REQ}#2", f"{CPU_REQ}#3")
def test_cpu_packs_compound_fields_in_order():
    record = sw.compound(x=sw.Float32, n=sw.Int32, b=sw.Bool)
    c = sw.CPU(record, values=[(1.5, -2, True), (0.0, 7, False)])
    assert c.read(0) == (1.5, -2, True)
    raw = ctypes.string_at(c.pointer(), 18)
    assert struct.unpack("<fi?fi?", raw) == (1.5, -2, True, 0.0, 7, False)


@pytest.mark.spec(f"{CPU_REQ}/reject-an-abstract-dtype", f"{CPU_REQ}#2")
@pytest.mark.parametrize("dtype", [sw.Floating, sw.Any])
def test_reject_an_abstract_dtype(dtype):
    with pytest.raises(TypeError) as info:
        sw.CPU(dtype, 2)
    assert "CPU" in str(info.value) and dtype.name in str(info.value)


@pytest.mark.spec(f"{GENERIC}/store-abstract-dtype-values", f"{GENERIC}#1")
def test_store_abstract_dtype_values():
    floating = sw.Generic(sw.Floating, 1)
    floating.write(0, 0.1)
    assert floating.read(0) == 0.1
    anything = sw.Generic(sw.Any, 3)
    for slot, value in enumerate([True, 7, 2.5]):
        anything.write(slot, value)
    assert [anything.read(i) for i in range(3)] == [True, 7, 2.5]
    assert [type(anything.read(i)) for i in range(3)] == [bool, int, float]
    record = sw.Generic(sw.compound(x=sw.Float32, n=sw.Int32), values=[(0.5, 3)])
    assert record.read(0) == (0.5, 3)


@pytest.mark.spec(f"{GENERIC}/offer-no-pointer", f"{GENERIC}#2")
def test_offer_no_pointer():
    g = sw.Generic(sw.Float32, 2)
    assert not hasattr(g, "pointer")
    assert hasattr(sw.CPU(sw.Float32, 2), "pointer")


@pytest.mark.spec(f"{HOOK}#6")
@pytest.mark.parametrize("how", ["release", "move"])
def test_a_dlpack_info_that_releases_its_carrier_exports_nothing(how):
    """The hook answers with the storage's pointer, then releases the carrier (itself,
    or by moving a Tensor out of it): the export fails once the hook returns, and no
    capsule addresses the freed storage."""

    class Releasing(sw.CPU):
        def dlpack_info(self):
            info = super().dlpack_info()
            if how == "release":
                self.release()
            else:
                sw.move(sw.Tensor(self, sw.Layout(self.slots)), sw.CPU(self.dtype))
            return info

    t = sw.Tensor(Releasing(sw.Float32, values=[1.0, 2.0, 3.0]), sw.Layout(3))
    before = sw._core._live_dlpack_exports()
    with pytest.raises(BufferError, match="released by its dlpack_info"):
        t.__dlpack__()
    assert t.carrier.is_released
    assert sw._core._live_dlpack_exports() == before
