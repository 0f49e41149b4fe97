"""``Value``: a frozen data class for the start-up path, without ``dataclasses``.

What a ``@dataclass(frozen=True, slots=True)`` gives, for the few classes every run builds
before its first request or full-screen frame (``cli.args.Options``, the ``config`` classes,
``cli.prepared.Prepared``): fields in ``__slots__``, equality and hash over the fields, a
``repr`` that leaves out ``_hidden`` fields (secrets), no assignment after ``__init__``, and
``replace(**changes)`` for ``dataclasses.replace``. Why not dataclasses there: importing them
loads ``inspect`` (~26 M instructions, more than a third of a bare interpreter), and each
frozen class compiles six generated methods at import (~4–8 M each) — on the path that must
draw a frame within 0.15 s. The subclass writes its typed ``__init__`` and sets its fields
with ``object.__setattr__`` (as dataclasses' generated ``__init__`` does), so mypy checks
every construction; ``tests/test_value.py`` pins the behaviour.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    V = TypeVar("V", bound="Value")

__all__ = ["Value"]


class Value:
    """Base of a frozen value: the subclass's ``__slots__`` are its fields, in order."""

    __slots__: tuple[str, ...] = ()
    _hidden: tuple[str, ...] = ()
    """Fields ``repr`` leaves out (``field(repr=False)``): API keys and other secrets."""

    def _fields(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Value)
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__ if name not in self._hidden)
        return f"{type(self).__qualname__}({shown})"

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r} of a frozen {type(self).__name__}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r} of a frozen {type(self).__name__}")

    def __reduce__(self) -> tuple[Any, ...]:  # copy, deepcopy and pickle go through __init__
        return (_rebuild, (type(self), {name: getattr(self, name) for name in self.__slots__}))

    def replace(self: V, **changes: Any) -> V:
        """A copy with ``changes`` (``dataclasses.replace``); an unknown field is a TypeError."""
        unknown = set(changes) - set(self.__slots__)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {sorted(unknown)[0]!r}")
        fields = {name: getattr(self, name) for name in self.__slots__}
        fields.update(changes)
        return type(self)(**fields)


def _rebuild(cls: type[V], fields: dict[str, Any]) -> V:
    return cls(**fields)
