"""The traces of answered questions and the turns of conversations, kept in a store beside its documents."""

from __future__ import annotations

import sqlite3

from clear_rag import trace as trace_json
from clear_rag.errors import StoreError
from clear_rag.store.database import Database
from clear_rag.store.schema import TURNS
from clear_rag.types import Trace


class TraceLog(Database):
    """The traces and conversations part of ``Store``."""

    def save_trace(self, trace: Trace, *, config_hash: str = "") -> None:
        with self.transaction():
            self._db.execute(
                "INSERT OR REPLACE INTO traces VALUES (?, ?, ?, ?, ?)",
                (trace.id, trace.created_at, trace.query, config_hash, trace_json.to_json(trace)),
            )

    def load_trace(self, trace_id: str) -> Trace:
        """The stored trace ``trace_id``; a unique prefix of the id is enough."""
        rows = self._db.execute("SELECT body FROM traces WHERE id = ?", (trace_id,)).fetchall()
        if not rows:
            escaped = trace_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            rows = self._db.execute(
                "SELECT body FROM traces WHERE id LIKE ? ESCAPE '\\' LIMIT 2", (escaped + "%",)
            ).fetchall()
        if len(rows) != 1:
            what = "matches no stored trace" if not rows else "matches more than one trace"
            raise StoreError(
                what,
                path=str(self.db_path),
                field="trace id",
                value=trace_id,
                fix="Run `clear-rag replay --list` to see stored trace ids",
            )
        return trace_json.from_json(str(rows[0][0]))

    def add_turn(self, conversation: str, question: str, answer: str, trace_id: str) -> None:
        """Append one question and its answer to a conversation (created by its first turn)."""
        with self.transaction():
            self._db.execute(TURNS)
            self._db.execute(
                "INSERT INTO turns SELECT ?, coalesce(max(position), -1) + 1, ?, ?, ? FROM turns "
                "WHERE conversation = ?",
                (conversation, question, answer, trace_id, conversation),
            )

    def turns(self, conversation: str) -> list[tuple[str, str, str]]:
        """A conversation's turns in order, as (question, answer, trace id); none if it is unknown."""
        try:
            rows = self._db.execute(
                "SELECT question, answer, trace_id FROM turns WHERE conversation = ? ORDER BY position",
                (conversation,),
            ).fetchall()
        except sqlite3.OperationalError:
            return []  # a store from before conversations, which has had none
        return [(str(q), str(a), str(t)) for q, a, t in rows]

    def traces(self, limit: int = 20) -> list[tuple[str, str, str]]:
        """The newest traces as (id, created_at, query)."""
        rows = self._db.execute(
            "SELECT id, created_at, query FROM traces ORDER BY created_at DESC, id LIMIT ?", (limit,)
        ).fetchall()
        return [(str(a), str(b), str(c)) for a, b, c in rows]
