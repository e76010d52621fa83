"""Where daily reports go: the stack's S3 bucket, or a local folder for replay."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol


class ReportStore(Protocol):
    def put(self, key: str, body: str | bytes, content_type: str) -> None: ...


class S3ReportStore:
    def __init__(self, s3_client: Any, bucket: str) -> None:
        self._s3 = s3_client
        self._bucket = bucket

    def put(self, key: str, body: str | bytes, content_type: str) -> None:
        """Same key, same day: a re-run overwrites (the bucket keeps versions)."""
        data = body.encode() if isinstance(body, str) else body
        self._s3.put_object(Bucket=self._bucket, Key=key, Body=data, ContentType=content_type)


class DirectoryReportStore:
    def __init__(self, root: Path) -> None:
        self._root = root

    def put(self, key: str, body: str | bytes, content_type: str) -> None:
        path = self._root / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body.encode() if isinstance(body, str) else body)
