"""A folder of answers that never change: pages (and series) of resolved markets, which the server
marks with an ETag and ``Cache-Control: max-age``. Keyed by URL; one file per answer; the least recently
used files go first when the folder outgrows its limit."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Union


@dataclass
class CachedAnswer:
    url: str
    etag: str
    #: When the server last confirmed the answer (a first fetch or a 304), in the client clock's seconds.
    confirmed_at: float
    #: Seconds it stays fresh after that (the answer's Cache-Control max-age): no request meanwhile.
    max_age: float
    body: bytes

    def fresh(self, now: float) -> bool:
        return now < self.confirmed_at + self.max_age


class PageCache:
    """Answers by URL in ``folder``, at most ``max_bytes`` in all (least recently used evicted first)."""

    def __init__(self, folder: Union[str, "os.PathLike[str]"], max_bytes: int = 1 << 30) -> None:
        if max_bytes <= 0:
            raise ValueError("max_bytes must be positive")
        self.folder = Path(folder)
        self.max_bytes = max_bytes
        self.folder.mkdir(parents=True, exist_ok=True)

    def _path(self, url: str) -> Path:
        return self.folder / (hashlib.sha256(url.encode("utf-8")).hexdigest() + ".page")

    def get(self, url: str) -> Optional[CachedAnswer]:
        path = self._path(url)
        try:
            with open(path, "rb") as f:
                header = json.loads(f.readline())
                body = f.read()
        except (OSError, ValueError):
            return None
        if header.get("url") != url or len(body) != header.get("size"):
            return None  # another URL's file (a hash collision) or a torn one: as if absent
        try:
            os.utime(path)  # recently used: evicted last
        except OSError:
            pass
        return CachedAnswer(url, header["etag"], header["confirmed_at"], header["max_age"], body)

    def put(self, answer: CachedAnswer) -> None:
        if len(answer.body) > self.max_bytes:
            return
        header = {
            "url": answer.url,
            "etag": answer.etag,
            "confirmed_at": answer.confirmed_at,
            "max_age": answer.max_age,
            "size": len(answer.body),
        }
        # Written aside and renamed: a reader sees the old file or the new one, never half of one.
        fd, tmp = tempfile.mkstemp(dir=self.folder, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(json.dumps(header).encode("utf-8") + b"\n")
                f.write(answer.body)
            os.replace(tmp, self._path(answer.url))
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        self._trim()

    def size(self) -> int:
        """Bytes the cached answers take."""
        return sum(e.stat().st_size for e in os.scandir(self.folder) if e.name.endswith(".page"))

    def clear(self) -> None:
        for entry in os.scandir(self.folder):
            if entry.name.endswith(".page"):
                os.unlink(entry.path)

    def _trim(self) -> None:
        entries = []
        for entry in os.scandir(self.folder):
            if entry.name.endswith(".page"):
                try:
                    st = entry.stat()
                except OSError:
                    continue
                entries.append((st.st_mtime, st.st_size, entry.path))
        total = sum(size for _, size, _ in entries)
        for _, size, path in sorted(entries):
            if total <= self.max_bytes:
                break
            try:
                os.unlink(path)
                total -= size
            except OSError:
                pass
