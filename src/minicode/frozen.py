"""``@frozen``: a frozen, slotted data class that costs next to nothing to define (issue 16).

The one way to define a frozen data class in minicode. ``@dataclass(frozen=True, slots=True)``
compiles six or seven methods per class with ``exec`` when the module is imported (~0.7–1 ms a
class on the 2-core dev machine; Python 3.11 compiles each method on its own), and importing
``dataclasses`` at all loads ``inspect`` (~40 M instructions, more than a third of a bare
interpreter) — on the path that must send the first request within 0.1 s and draw the first
full-screen frame within 0.15 s. ``@frozen`` gives the same class — fields from the
annotations, in order, with defaults; ``__init__`` (positional or keyword), ``__eq__`` and
``__hash__`` over the fields (of the same class only), ``__repr__``, ``__match_args__``,
``__slots__``, assignment and deletion raising ``dataclasses.FrozenInstanceError``, copy and
pickle, ``__post_init__`` (called after ``__init__`` and ``replace``) — with shared methods
instead of generated ones (~20x cheaper to define, ~1 µs more to construct). Type checkers
see a frozen dataclass (``typing.dataclass_transform``), so mypy checks every construction.
A class attribute ``_hidden: ClassVar[tuple[str, ...]]`` names fields ``repr`` leaves out
(``field(repr=False)``): API keys and other secrets. ``replace`` here copies a ``@frozen``
object or a dataclass with some fields changed. ``dataclasses`` itself is imported only when
an assignment is refused or a dataclass is replaced: the way to the early first request and
the first frame defines ``@frozen`` classes only (the options, the configuration, ``Prepared``,
``WireProfile``, …), and this module imports no ``typing`` at run time.

Not supported (use ``@dataclass`` for those): ``field(...)`` specifiers (default factories),
``InitVar``, keyword-only fields, inheriting from a ``@dataclass``, and ``dataclasses.fields``/
``replace``/``asdict`` (a ``@frozen`` class is not a dataclass). A class-level name annotated
``ClassVar`` is not a field.
"""
from __future__ import annotations

from operator import attrgetter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, TypeVar, dataclass_transform

    T = TypeVar("T")
else:  # only type checkers read the mark; importing typing costs ~5 ms on the path to the first frame

    def dataclass_transform(**_: object) -> object:
        return lambda decorator: decorator

__all__ = ["frozen", "replace"]

_FIELDS = "__frozen_fields__"
_DEFAULTS = "__frozen_defaults__"
_VALUES = "__frozen_values__"
_CLASS_VAR = ("ClassVar", "typing.ClassVar")


@dataclass_transform(frozen_default=True)
def frozen(cls: type[T]) -> type[T]:
    """The frozen, slotted version of ``cls`` (see the module docstring)."""
    namespace = cls.__dict__
    inherited: tuple[str, ...] = ()
    defaults: dict[str, Any] = {}
    if cls.__bases__ != (object,):  # most classes: nothing to inherit
        inherited = _inherit(cls, defaults)
    own = {name: None for name, note in namespace.get("__annotations__", {}).items()
           if not (note.startswith(_CLASS_VAR) if note.__class__ is str else _is_class_var(note))}
    body = {k: v for k, v in namespace.items() if k not in own and k != "__dict__" and k != "__weakref__"}
    for name in own:
        if name in namespace:
            defaults[name] = namespace[name]
        elif name in defaults:
            del defaults[name]  # redeclared without a default
    slots = tuple(own) if not inherited else tuple(n for n in own if n not in inherited)
    names = (*inherited, *slots)
    _check_order(cls, names, defaults)
    body["__slots__"] = slots
    body["__match_args__"] = names
    body[_FIELDS] = names
    body[_DEFAULTS] = defaults
    body[_VALUES] = _values_getter(names)
    for name, method in _METHODS:
        if name not in namespace:
            body[name] = method
    if "__hash__" not in namespace or (namespace["__hash__"] is None and "__eq__" not in namespace):
        body["__hash__"] = _hash
    body["__setattr__"] = _setattr
    body["__delattr__"] = _delattr
    metaclass: type = type(cls)
    made: type[T] = metaclass(cls.__name__, cls.__bases__, body)
    made.__qualname__ = cls.__qualname__
    return made


def _inherit(cls: type, defaults: dict[str, Any]) -> tuple[str, ...]:
    """The fields of ``cls``'s ``@frozen`` bases, in order (their defaults into ``defaults``)."""
    inherited: tuple[str, ...] = ()
    for base in reversed(cls.__mro__[1:]):
        if _FIELDS in base.__dict__:
            inherited = (*inherited, *(n for n in base.__dict__[_FIELDS] if n not in inherited))
            defaults.update(base.__dict__[_DEFAULTS])
        elif "__dataclass_fields__" in base.__dict__:
            raise TypeError(f"@frozen {cls.__qualname__} cannot inherit from the dataclass {base.__qualname__}")
    return inherited


def _is_class_var(note: object) -> bool:
    text = note if note.__class__ is str else getattr(note, "__name__", repr(note))
    return text.startswith(_CLASS_VAR)


def _check_order(cls: type, names: tuple[str, ...], defaults: dict[str, Any]) -> None:
    seen_default = False
    for name in names:
        if name in defaults:
            seen_default = True
        elif seen_default:
            raise TypeError(f"non-default argument {name!r} follows default argument in {cls.__qualname__}")


def _values_getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    if not names:
        return lambda _: ()
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return attrgetter(*names)


def _init(self: Any, *args: Any, **kwargs: Any) -> None:
    cls = type(self)
    names: tuple[str, ...] = getattr(cls, _FIELDS)
    setter = object.__setattr__
    if not kwargs and len(args) == len(names):  # the common case, kept short
        for name, value in zip(names, args):
            setter(self, name, value)
        if hasattr(cls, "__post_init__"):
            self.__post_init__()
        return
    if len(args) > len(names):
        raise TypeError(f"{cls.__name__}.__init__() takes {len(names) + 1} positional arguments "
                        f"but {len(args) + 1} were given")
    for name, value in zip(names, args):
        if name in kwargs:
            raise TypeError(f"{cls.__name__}.__init__() got multiple values for argument {name!r}")
        setter(self, name, value)
    defaults: dict[str, Any] = getattr(cls, _DEFAULTS)
    for name in names[len(args):]:
        if name in kwargs:
            setter(self, name, kwargs.pop(name))
        elif name in defaults:
            setter(self, name, defaults[name])
        else:
            raise TypeError(f"{cls.__name__}.__init__() missing 1 required argument: {name!r}")
    if kwargs:
        raise TypeError(f"{cls.__name__}.__init__() got an unexpected keyword argument {next(iter(kwargs))!r}")
    if hasattr(cls, "__post_init__"):
        self.__post_init__()


def replace(obj: T, /, **changes: Any) -> T:
    """A copy of ``obj`` (``@frozen`` or a dataclass) with the fields named in ``changes``
    changed, like ``dataclasses.replace``; TypeError for a name that is not a field."""
    cls = type(obj)
    names: tuple[str, ...] | None = getattr(cls, _FIELDS, None)
    if names is None:
        import dataclasses  # a dataclass's own module is loaded already

        return dataclasses.replace(obj, **changes)  # type: ignore[type-var]
    unknown = [name for name in changes if name not in names]
    if unknown:
        raise TypeError(f"{cls.__name__} has no field {unknown[0]!r}")
    copied: T = cls(**{name: changes[name] if name in changes else getattr(obj, name) for name in names})
    return copied


def _values(obj: Any) -> tuple[Any, ...]:
    values: tuple[Any, ...] = getattr(type(obj), _VALUES)(obj)
    return values


def _repr(self: Any) -> str:
    cls = type(self)
    hidden: tuple[str, ...] = getattr(cls, "_hidden", ())
    shown = ", ".join(f"{name}={value!r}" for name, value in zip(getattr(cls, _FIELDS), _values(self))
                      if name not in hidden)
    return f"{cls.__qualname__}({shown})"


def _eq(self: Any, other: object) -> Any:  # bool, or NotImplemented for another class
    if other.__class__ is not self.__class__:
        return NotImplemented
    return _values(self) == _values(other)


def _hash(self: Any) -> int:
    return hash(_values(self))


def _setattr(self: Any, name: str, value: Any) -> None:
    from dataclasses import FrozenInstanceError  # here: importing dataclasses costs ~40 M instructions

    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _delattr(self: Any, name: str) -> None:
    from dataclasses import FrozenInstanceError

    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _getstate(self: Any) -> tuple[Any, ...]:
    return _values(self)


def _setstate(self: Any, state: tuple[Any, ...]) -> None:
    for name, value in zip(getattr(type(self), _FIELDS), state):
        object.__setattr__(self, name, value)


_METHODS: tuple[tuple[str, Callable[..., Any]], ...] = (
    ("__init__", _init), ("__repr__", _repr), ("__eq__", _eq), ("__getstate__", _getstate), ("__setstate__", _setstate),
)
"""What ``@frozen`` gives a class unless it defines its own."""
