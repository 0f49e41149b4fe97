"""The editor's ``fs/read_text_file`` as ``read``'s source of a file's text
(``ToolContext.editor_text``): an open buffer's unsaved content is what the model sees. The path
reaching it was settled by ``read`` itself (confined, a regular text file)."""

from __future__ import annotations

from pathlib import Path

from acp import Client

__all__ = ["ClientFiles"]


class ClientFiles:
    """One session's reads through the editor; any failure is an OSError (``read`` then reads the disk)."""

    def __init__(self, conn: Client, session_id: str) -> None:
        self._conn = conn
        self._session_id = session_id

    async def text(self, path: Path) -> str:
        try:
            answer = await self._conn.read_text_file(session_id=self._session_id, path=str(path))
        except Exception as e:  # noqa: BLE001 - gone, an error answer: the file on disk is read instead
            raise OSError(f"the editor could not read {path}: {e}") from e
        return answer.content
