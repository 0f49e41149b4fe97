"""Text streams that say whether they are a terminal, for testing mode selection and prompts."""

import io

__all__ = ["FakeStream"]


class FakeStream(io.StringIO):
    def __init__(self, text: str = "", *, tty: bool = False) -> None:
        super().__init__(text)
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty
