"""A tiny VT100 screen model for pseudo-terminal tests (enough for prompt_toolkit's output).

Feeds bytes, keeps a main and an alternate screen of characters (attributes are dropped),
and tracks the modes the tests care about. Unknown sequences are consumed and ignored.
"""

from __future__ import annotations

import re

_CSI = re.compile(r"\x1b\[([?>=!]?)([0-9;:]*)([ -/]*)([@-~])")
_OSC = re.compile(r"\x1b\][^\x07\x1b]*(\x07|\x1b\\)")


class Screen:
    def __init__(self, columns: int, rows: int) -> None:
        self.columns, self.rows = columns, rows
        self.main = self._blank()
        self.alt = self._blank()
        self.alternate = False
        self.x = self.y = 0
        self.saved = (0, 0)
        self.modes: dict[str, bool] = {}
        self.scrollback: list[str] = []  # lines scrolled off the main screen
        self.margins = (0, rows - 1)  # the scroll region (DECSTBM), top and bottom rows
        self._pending = ""

    def _blank(self) -> list[list[str]]:
        return [[" "] * self.columns for _ in range(self.rows)]

    @property
    def buffer(self) -> list[list[str]]:
        return self.alt if self.alternate else self.main

    def resize(self, columns: int, rows: int) -> None:
        for name in ("main", "alt"):
            old = getattr(self, name)
            new = [[" "] * columns for _ in range(rows)]
            for y in range(min(rows, self.rows)):
                for x in range(min(columns, self.columns)):
                    new[y][x] = old[y][x]
            setattr(self, name, new)
        self.columns, self.rows = columns, rows
        self.x, self.y = min(self.x, columns - 1), min(self.y, rows - 1)
        self.margins = (0, rows - 1)

    def lines(self) -> list[str]:
        return ["".join(row).rstrip() for row in self.buffer]

    def text(self) -> str:
        return "\n".join(self.lines())

    # --- feeding ------------------------------------------------------------------------
    def feed(self, data: str) -> None:
        data = self._pending + data
        self._pending = ""
        i = 0
        n = len(data)
        while i < n:
            ch = data[i]
            if ch == "\x1b":
                consumed = self._escape(data, i)
                if consumed == 0:
                    self._pending = data[i:]
                    return
                i += consumed
                continue
            self._char(ch)
            i += 1

    def _escape(self, data: str, i: int) -> int:
        if i + 1 >= len(data):
            return 0
        kind = data[i + 1]
        if kind == "[":
            m = _CSI.match(data, i)
            if m is None:
                return 0 if len(data) - i < 32 else 2
            self._csi(m.group(1), m.group(2), m.group(4))
            return m.end() - i
        if kind == "]":
            m = _OSC.match(data, i)
            if m is None:
                return 0 if len(data) - i < 512 else 2
            return m.end() - i
        if kind == "M":  # reverse index: up a row; on the top margin the region moves down
            top, bottom = self.margins
            if self.y == top:
                self.buffer.pop(bottom)
                self.buffer.insert(top, [" "] * self.columns)
            else:
                self.y = max(0, self.y - 1)
        elif kind == "7":
            self.saved = (self.x, self.y)
        elif kind == "8":
            self.x, self.y = self.saved
        elif kind in "()#":
            return 3 if i + 2 < len(data) else 0
        return 2

    def _char(self, ch: str) -> None:
        if ch == "\r":
            self.x = 0
        elif ch == "\n":
            self._linefeed()
        elif ch == "\b":
            self.x = max(0, self.x - 1)
        elif ch == "\t":
            self.x = min(self.columns - 1, (self.x // 8 + 1) * 8)
        elif ch < " " or ch == "\x7f":
            pass
        else:
            if self.x >= self.columns:
                self.x = 0
                self._linefeed()
            self.buffer[self.y][self.x] = ch
            self.x += 1

    def _linefeed(self) -> None:
        top, bottom = self.margins
        if self.y == bottom:  # on the bottom margin the region moves up
            row = self.buffer.pop(top)
            if not self.alternate and top == 0:
                self.scrollback.append("".join(row).rstrip())
            self.buffer.insert(bottom, [" "] * self.columns)
        elif self.y < self.rows - 1:
            self.y += 1

    def _csi(self, private: str, params: str, final: str) -> None:
        nums = [int(p) if p.isdigit() else 0 for p in params.replace(":", ";").split(";")] if params else []

        def arg(k: int, default: int = 1) -> int:
            return nums[k] if len(nums) > k and nums[k] else default

        buf = self.buffer
        if private == "?" and final in "hl":
            for p in nums:
                self.modes[str(p)] = final == "h"
                if p in (1049, 47, 1047):
                    self.alternate = final == "h"
                    if self.alternate:
                        self.alt = self._blank()
            return
        if private:
            return
        if final == "r":  # DECSTBM: the scroll region; the cursor goes home
            top, bottom = arg(0) - 1, min(self.rows, arg(1, self.rows)) - 1
            self.margins = (top, bottom) if top < bottom else (0, self.rows - 1)
            self.x = self.y = 0
        elif final in "Hf":
            self.y = min(self.rows - 1, arg(0) - 1)
            self.x = min(self.columns - 1, arg(1) - 1)
        elif final == "A":
            self.y = max(0, self.y - arg(0))
        elif final == "B":
            self.y = min(self.rows - 1, self.y + arg(0))
        elif final == "C":
            self.x = min(self.columns - 1, self.x + arg(0))
        elif final == "D":
            self.x = max(0, self.x - arg(0))
        elif final == "G":
            self.x = min(self.columns - 1, arg(0) - 1)
        elif final == "d":
            self.y = min(self.rows - 1, arg(0) - 1)
        elif final == "K":
            mode = arg(0, 0)
            row = buf[self.y]
            rng = range(self.x, self.columns) if mode == 0 else range(0, self.x + 1) if mode == 1 else range(self.columns)
            for x in rng:
                if x < self.columns:
                    row[x] = " "
        elif final == "J":
            mode = arg(0, 0)
            if mode == 0:
                self._csi("", "0", "K")
                rows = range(self.y + 1, self.rows)
            elif mode == 1:
                rows = range(0, self.y)
            else:
                rows = range(self.rows)
            for y in rows:
                buf[y] = [" "] * self.columns
        elif final == "X":
            for x in range(self.x, min(self.columns, self.x + arg(0))):
                buf[self.y][x] = " "
