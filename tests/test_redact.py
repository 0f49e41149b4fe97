"""The shared secret redaction: which strings are secrets, replacement order, containment."""

from __future__ import annotations

from minicode.redact import MIN_SECRET_LENGTH, REDACTED, contains_secret, redact, significant_secrets

KEY = "sk-live-0123456789"


def test_every_occurrence_of_a_secret_is_replaced() -> None:
    text = f"Bearer {KEY} failed; retry with {KEY}?"
    assert redact(text, [KEY]) == f"Bearer {REDACTED} failed; retry with {REDACTED}?"


def test_longest_secret_wins_over_a_secret_it_contains() -> None:
    inner = "sk-live-01234"
    # Shorter first in the input: the order of the caller's iterable must not matter.
    assert redact(f"a {KEY} b {inner} c", [inner, KEY]) == "a [redacted] b [redacted] c"
    assert significant_secrets([inner, KEY, inner]) == (KEY, inner)


def test_empty_and_short_strings_are_not_secrets() -> None:
    short = "x" * (MIN_SECRET_LENGTH - 1)
    text = f"path/{short}/file and k=v"
    assert redact(text, ["", "k", short]) == text
    assert redact("x" * MIN_SECRET_LENGTH, ["x" * MIN_SECRET_LENGTH]) == REDACTED
    assert significant_secrets(["", "k", short]) == ()


def test_text_without_secrets_is_unchanged() -> None:
    assert redact("nothing to hide", [KEY]) == "nothing to hide"
    assert redact("", [KEY]) == ""
    assert redact(KEY, []) == KEY


def test_contains_secret_only_for_significant_secrets() -> None:
    assert contains_secret(f"x{KEY}y", ["", KEY])
    assert not contains_secret("k is a letter", ["k"])
    assert not contains_secret("", [KEY])


def test_a_generator_of_secrets_is_read_once_and_fully() -> None:
    other = "lf-secret-abcdefgh"
    secrets = (s for s in [KEY, other])
    assert redact(f"{KEY}/{other}", secrets) == f"{REDACTED}/{REDACTED}"
