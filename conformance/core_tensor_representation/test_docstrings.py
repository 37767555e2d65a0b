"""core-tensor-representation: every public member is documented.

What is walked: every name in ``strideweave.__all__``; for a class, every member
defined in the class's own namespace (``vars(cls)``; an inherited member is checked
on the class that defines it) whose name is public (no leading underscore) or is a
dunder of a public protocol. Dunders that are object plumbing are skipped, because
their contract is Python's data model and the class docstring already says what the
object is: ``__init__`` (checked with its class, below), ``__new__``,
``__init_subclass__``, ``__subclasshook__``, ``__repr__``, ``__str__``,
``__hash__``, ``__getstate__``/``__setstate__`` (pickling), ``__module__``,
``__doc__``, ``__dict__``, ``__weakref__`` and pybind11's ``_pybind11_conduit_v1_``.
Every other dunder (``__getitem__``, ``__len__``, ``__iter__``, ``__dlpack__``,
``__array__``, the arithmetic and comparison operators, ``__float__``, ``__int__``,
``__bool__``, ``__enter__``/``__exit__``, ``__call__``, ...) is checked.

A docstring fails when it is missing or empty; when nothing but signature lines is
left after removing pybind11's signature lines (``name(...) -> ...``, "Overloaded
function." and numbered overload lines); when a signature line names ``object`` as a
parameter or return type (``: object``, ``-> object``), since a real type is meant;
and, for a callable that takes parameters (besides ``self``), when it lacks a
"Parameters" and a "Raises" section, or, when it returns something other than None,
a "Returns" section. A class that a caller constructs with parameters documents them
in a "Parameters" section of the class docstring or, as PEP 257 has it, in its
``__init__``'s docstring, which ``help(cls)`` and the API reference
(``autoclass_content = "both"``) show with the class's; that docstring then
needs the Raises section too. Properties need prose only (their description
says the value's type). A class attribute holding a plain value (None, a class,
a ClassDescriptor) cannot carry a docstring, nor can pybind11's static property
(``Carrier.carrier_class``: Python 3.11 drops a property subclass's docstring):
the class's docstring names it. Each DType instance has its own docstring, not
the class's and not another instance's.
"""

from __future__ import annotations

import inspect
import re

import pytest

import strideweave as sw

DOC = "core-tensor-representation/public-members-are-documented"

_SKIPPED_DUNDERS = {
    "__init__",
    "__new__",
    "__init_subclass__",
    "__subclasshook__",
    "__repr__",
    "__str__",
    "__hash__",
    "__getstate__",
    "__setstate__",
    "__module__",
    "__doc__",
    "__dict__",
    "__weakref__",
    "__qualname__",
    "__annotations__",
    "__slots__",
    "__orig_bases__",
    "__parameters__",
}

# Members whose parameter truly takes any object: value equality takes any operand and
# returns NotImplemented for one of another type, as Python's data model asks.
_ANY_OBJECT_ALLOWED = {"Layout.__eq__", "Layout.__ne__", "DType.__eq__", "DType.__ne__"}

_SIGNATURE = re.compile(r"^\s*(?:\d+\.\s+)?[A-Za-z_][\w.]*\(.*\)(?:\s*->\s*.+)?\s*$")
_OBJECT_TYPE = re.compile(r"(?::|->)\s*['\"]?object\b")


def _members() -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    for name in sorted(sw.__all__):
        obj = getattr(sw, name)
        out.append((name, obj))
        if inspect.isclass(obj):
            for attr in sorted(vars(obj)):
                if attr.startswith("__") and attr.endswith("__"):
                    if attr in _SKIPPED_DUNDERS:
                        continue
                elif attr.startswith("_"):
                    continue
                out.append((f"{name}.{attr}", vars(obj)[attr]))
    return out


def _params(qualified: str, obj: object):
    marks = [pytest.mark.spec(f"{DOC}/document-every-public-member", f"{DOC}#1", f"{DOC}#2")]
    return pytest.param(qualified, obj, id=qualified, marks=marks)


MEMBERS = [_params(q, o) for q, o in _members()]


def _callable_of(obj: object) -> object | None:
    """The function behind a member (None for a property or a plain value)."""
    if isinstance(obj, (staticmethod, classmethod)):
        return obj.__func__
    if isinstance(obj, property):
        return None
    if inspect.isroutine(obj) or (callable(obj) and not inspect.isclass(obj)):
        return obj
    return None


def _signature_lines(obj: object, doc: str) -> list[str]:
    """pybind11's signature lines, or the Python signature of a Python function."""
    if inspect.isfunction(obj):
        return [obj.__name__ + str(inspect.signature(obj))]
    return [line.strip() for line in doc.splitlines() if _SIGNATURE.match(line)]


def _prose(doc: str) -> str:
    lines = [
        line
        for line in doc.splitlines()
        if not _SIGNATURE.match(line) and line.strip() != "Overloaded function."
    ]
    return "\n".join(lines).strip()


def _parameters(signature: str) -> list[str]:
    """The parameter names of one signature line, without self, * and /."""
    inside = signature[signature.index("(") + 1 : signature.rindex(")")]
    names = []
    depth = 0
    current = ""
    for ch in inside:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            names.append(current)
            current = ""
        else:
            current += ch
    names.append(current)
    out = []
    for part in names:
        name = part.split(":")[0].split("=")[0].strip().lstrip("*")
        if name and name not in ("self", "/", "cls"):
            out.append(name)
    return out


def _returns_none(signature: str) -> bool:
    tail = signature[signature.rindex(")") + 1 :]
    return "->" not in tail or tail.split("->")[1].strip().strip("'\"") in ("None", "")


def _has_section(doc: str, title: str) -> bool:
    return re.search(rf"^\s*{title}\n\s*-{{3,}}\s*$", doc, re.MULTILINE) is not None


def _is_class_value(qualified: str, obj: object) -> bool:
    """A class attribute holding a plain value: a class, a descriptor object, None."""
    if "." not in qualified or isinstance(obj, sw.DType):
        return False
    if type(obj) is not property and isinstance(obj, property) and not obj.__doc__:
        # pybind11's static property: CPython 3.11 drops the docstring of a
        # property subclass without an instance dict, so it is a class value too.
        return True
    if isinstance(obj, (property, staticmethod, classmethod)) or inspect.isroutine(obj):
        return False
    return not inspect.isdatadescriptor(obj)


def _check_callable_doc(qualified: str, doc: str, signatures: list[str]) -> None:
    for s in signatures:
        checked = s.replace("other: object", "other") if qualified in _ANY_OBJECT_ALLOWED else s
        assert not _OBJECT_TYPE.search(checked), f"{qualified}: {s} names object"
    if any(_parameters(s) for s in signatures):
        assert _has_section(doc, "Parameters"), f"{qualified} lacks a Parameters section"
        assert _has_section(doc, "Raises"), f"{qualified} lacks a Raises section"
    if not all(_returns_none(s) for s in signatures):
        assert _has_section(doc, "Returns"), f"{qualified} lacks a Returns section"


@pytest.mark.parametrize(("qualified", "obj"), MEMBERS)
def test_member_is_documented(qualified, obj):
    if _is_class_value(qualified, obj):
        # A value cannot carry a docstring of its own (None, a class, a
        # ClassDescriptor): the class that holds it says what it is.
        owner, attr = qualified.rsplit(".", 1)
        owner_doc = inspect.getdoc(getattr(sw, owner)) or ""
        assert f"``{attr}``" in owner_doc, f"{owner}'s docstring does not describe ``{attr}``"
        return
    if isinstance(obj, property):
        doc = obj.__doc__ or ""
    elif inspect.isclass(obj) or callable(obj) or isinstance(obj, (staticmethod, classmethod)):
        doc = inspect.getdoc(_callable_of(obj) or obj) or ""
    else:  # a value (a DType instance): its own docstring
        doc = obj.__doc__ or ""
    assert _prose(doc), f"{qualified} has no docstring beyond its signature"
    function = _callable_of(obj)
    if function is None:
        if inspect.isclass(obj) and "__init__" in vars(obj):
            init = vars(obj)["__init__"]
            if not inspect.isfunction(init):
                init_doc = init.__doc__ or ""
                sigs = _signature_lines(init, init_doc)
                if _has_section(doc, "Parameters"):
                    for s in sigs:
                        assert not _OBJECT_TYPE.search(s), f"{qualified}: {s} names object"
                else:
                    # PEP 257's place: the constructor's own docstring, which
                    # help(cls) and the API reference (autoclass_content="both")
                    # show with the class's.
                    if any(_parameters(s) for s in sigs):
                        assert _prose(init_doc), f"{qualified}'s constructor has no docstring"
                    _check_callable_doc(f"{qualified}.__init__", init_doc, sigs)
        return
    signatures = _signature_lines(function, function.__doc__ or "")
    assert signatures, f"{qualified} shows no signature"
    _check_callable_doc(qualified, doc, signatures)


@pytest.mark.spec(f"{DOC}/document-every-public-member", f"{DOC}#3")
def test_each_dtype_instance_has_its_own_docstring():
    instances = [sw.Any, sw.Bool, sw.Float32, sw.Floating, sw.Int32]
    docs = [d.__doc__ for d in instances]
    assert all(docs)
    assert len(set(docs)) == len(docs)
    assert sw.DType.__doc__ not in docs
    assert sw.Float32.__doc__ != sw.Floating.__doc__
    assert "Float32" in sw.Float32.__doc__ and "Floating" in sw.Floating.__doc__
    # A compound dtype, built at run time, reads the class's docstring.
    assert sw.compound(x=sw.Float32).__doc__ == sw.DType.__doc__
