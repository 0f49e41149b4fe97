"""``@frozen`` behaves like ``@dataclass(frozen=True, slots=True)`` where minicode relies on it."""

from __future__ import annotations

import copy
import pickle
from dataclasses import FrozenInstanceError, dataclass
from typing import ClassVar

import pytest

from minicode.agent.events import Notice, TextChunk, ToolFinished
from minicode.frozen import frozen, replace


@frozen
class Point:
    x: int
    y: int = 0
    label: str = "p"
    kind: ClassVar[str] = "point"  # not a field

    @property
    def total(self) -> int:
        return self.x + self.y

    def moved(self, dx: int) -> Point:
        return Point(self.x + dx, self.y, self.label)


@frozen
class Point3(Point):
    z: int = 0


@frozen
class Shown:
    name: str

    def __repr__(self) -> str:
        return f"<{self.name}>"


@frozen
class Empty:
    pass


def test_fields_defaults_and_keywords_like_a_dataclass() -> None:
    p = Point(1, label="a")
    assert (p.x, p.y, p.label) == (1, 0, "a")
    assert Point(y=2, x=1) == Point(1, 2)
    assert Point.__match_args__ == ("x", "y", "label")
    assert Point.kind == "point" and p.kind == "point"
    assert p.total == 1 and p.moved(2) == Point(3, 0, "a")
    assert repr(p) == "Point(x=1, y=0, label='a')"
    assert repr(Shown("s")) == "<s>"  # a method the class defines is kept
    assert Empty() == Empty() and repr(Empty()) == "Empty()"


def test_wrong_arguments_are_type_errors() -> None:
    with pytest.raises(TypeError, match="missing 1 required argument: 'x'"):
        Point()
    with pytest.raises(TypeError, match="takes 4 positional arguments but 5 were given"):
        Point(1, 2, "a", 4)
    with pytest.raises(TypeError, match="multiple values for argument 'x'"):
        Point(1, x=2)
    with pytest.raises(TypeError, match="unexpected keyword argument 'w'"):
        Point(1, w=2)
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):
        @frozen
        class Bad:
            a: int = 0
            b: int


def test_equal_and_hashed_by_value_within_one_class_only() -> None:
    assert Point(1, 2) == Point(1, 2) and Point(1, 2) != Point(1, 3)
    assert hash(Point(1, 2)) == hash(Point(1, 2))
    assert len({Point(1, 2), Point(1, 2), Point(2, 1)}) == 2
    assert Point(1) != Point3(1)  # like a dataclass: another class is never equal
    assert Point(1) != (1, 0, "p")
    assert Notice("x") == Notice("x") and Notice("x") != TextChunk("x")


def test_frozen_and_slotted() -> None:
    p = Point(1)
    with pytest.raises(FrozenInstanceError):
        p.x = 2
    with pytest.raises(FrozenInstanceError):
        del p.x
    with pytest.raises(FrozenInstanceError):
        p.other = 1
    assert not hasattr(p, "__dict__")
    with pytest.raises(FrozenInstanceError):
        TextChunk("a").text = "b"


def test_inheritance_adds_fields_after_the_base_ones() -> None:
    p = Point3(1, 2, "q", 3)
    assert Point3.__match_args__ == ("x", "y", "label", "z")
    assert (p.x, p.y, p.label, p.z) == (1, 2, "q", 3) and p.total == 3
    assert isinstance(p, Point) and repr(p) == "Point3(x=1, y=2, label='q', z=3)"
    with pytest.raises(TypeError, match="cannot inherit from the dataclass"):
        @dataclass(frozen=True)
        class Base:
            a: int

        @frozen
        class Child(Base):
            b: int = 0


def test_match_copy_and_pickle() -> None:
    match Point(5, 6):
        case Point(x, y=yy):
            assert (x, yy) == (5, 6)
        case _:
            pytest.fail("no match")
    p = Point3(1, 2, "r", 4)
    assert copy.copy(p) == p and copy.deepcopy(p) == p
    assert pickle.loads(pickle.dumps(p)) == p
    finished = ToolFinished("c1", "read", False, "1 line", None, 0.1, output_tail="x")
    assert pickle.loads(pickle.dumps(finished)) == finished


@frozen
class Checked:
    low: int
    high: int = 10

    def __post_init__(self) -> None:
        if self.low > self.high:
            raise ValueError("low above high")


def test_post_init_runs_after_init_and_replace() -> None:
    assert Checked(1).high == 10 and Checked(low=2, high=3).low == 2
    with pytest.raises(ValueError, match="low above high"):
        Checked(11)
    with pytest.raises(ValueError, match="low above high"):
        replace(Checked(1), low=20)


def test_replace_copies_with_changes_for_frozen_classes_and_dataclasses() -> None:
    p = Point3(1, 2, "a", 3)
    moved = replace(p, y=5)
    assert moved == Point3(1, 5, "a", 3) and p == Point3(1, 2, "a", 3)
    assert type(moved) is Point3 and replace(p) == p
    with pytest.raises(TypeError, match="no field 'w'"):
        replace(p, w=1)

    @dataclass(frozen=True)
    class Plain:
        a: int
        b: int = 0

    assert replace(Plain(1), b=2) == Plain(1, 2)


def test_defining_and_using_frozen_classes_imports_neither_dataclasses_nor_typing() -> None:
    """Both cost milliseconds on the path to the first frame (typing ~5 ms, dataclasses with
    inspect ~40 M instructions)."""
    import subprocess
    import sys

    code = ("import sys\nfrom minicode.frozen import frozen, replace\n"
            "@frozen\nclass P:\n    x: int\n    y: int = 2\n"
            "p = replace(P(1), y=3)\nassert p == P(1, 3) and hash(p) == hash(P(1, 3)) and repr(p) == 'P(x=1, y=3)'\n"
            "print('dataclasses' in sys.modules, 'typing' in sys.modules)\n"
            "try:\n    p.x = 5\nexcept AttributeError as e:\n    print(type(e).__name__)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False", "FrozenInstanceError"]  # dataclasses loaded only to refuse the assignment


def test_chat_request_leaves_its_retry_hook_out_of_its_value() -> None:
    from minicode.frozen import replace
    from minicode.provider.types import ChatRequest, Message

    hook: list[object] = []
    plain = ChatRequest((Message.user("hi"),))
    hooked = ChatRequest((Message.user("hi"),), on_retry=hook.append)
    assert plain == hooked and hash(plain) == hash(hooked) and repr(plain) == repr(hooked)
    assert "on_retry" not in repr(hooked) and plain != ChatRequest((Message.user("hi"),), max_tokens=1)
    moved = replace(hooked, messages=())
    assert moved.on_retry == hook.append and moved.messages == () and moved.max_tokens == 8192
    with pytest.raises(FrozenInstanceError):
        hooked.max_tokens = 1  # type: ignore[misc]


@frozen
class Login:
    _hidden: ClassVar[tuple[str, ...]] = ("password",)
    user: str
    password: str


def test_hidden_fields_are_left_out_of_repr_only() -> None:
    login = Login("ann", "hunter2")
    assert repr(login) == "Login(user='ann')" and "hunter2" not in str(login)
    assert login == Login("ann", "hunter2") and login != Login("ann", "other") and login.password == "hunter2"
    assert replace(login, password="x").password == "x" and pickle.loads(pickle.dumps(login)) == login
