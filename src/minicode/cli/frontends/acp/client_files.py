"""The editor's file-system methods as the tools' ``ToolContext.editor``: ``fs/read_text_file``
for what ``read`` (and ``edit``) see — an open buffer's unsaved content — and, when the editor
takes writes, ``fs/write_text_file`` with a file's new text once minicode's own write landed on
disk (the undo snapshot, the confinement, the validators stay minicode's). Every path reaching
here was settled by the tool itself."""

from __future__ import annotations

from pathlib import Path

from acp import Client

__all__ = ["ClientFiles"]


class ClientFiles:
    """One session's files through the editor; any failure is an OSError (the tools then use the disk)."""

    def __init__(self, conn: Client, session_id: str, *, writes: bool) -> None:
        self._conn = conn
        self._session_id = session_id
        self.writes = writes

    async def text(self, path: Path) -> str:
        try:
            answer = await self._conn.read_text_file(session_id=self._session_id, path=str(path))
        except Exception as e:  # noqa: BLE001 - gone, an error answer: the file on disk is read instead
            raise OSError(f"the editor could not read {path}: {e}") from e
        return answer.content

    async def wrote(self, path: Path, text: str) -> None:
        try:
            await self._conn.write_text_file(session_id=self._session_id, path=str(path), content=text)
        except Exception as e:  # noqa: BLE001 - the file on disk is right; the editor shows it changed
            raise OSError(f"the editor could not take {path}: {e}") from e
