"""The account's Data Exports in S3: the CUR 2.0 Parquet objects of one bill period (keys
``<prefix>/.../BILLING_PERIOD=YYYY-MM/...parquet``, as Data Exports writes them), read
whole (``shared.services.data_exports`` turns them into billed lines)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


class S3ExportFiles:
    def __init__(self, s3: Any, bucket: str, prefix: str = "") -> None:
        self._s3, self._bucket, self._prefix = s3, bucket, prefix

    def period_files(self, period: str) -> Iterator[tuple[str, bytes]]:
        """Each Parquet object of the bill period ``period`` (``YYYY-MM``), in key order,
        with its ``s3://`` address (what an error about the file names)."""
        for key in self._keys(f"BILLING_PERIOD={period}/"):
            body = self._s3.get_object(Bucket=self._bucket, Key=key)["Body"].read()
            yield f"s3://{self._bucket}/{key}", body

    def _keys(self, marker: str) -> list[str]:
        keys: list[str] = []
        kwargs = {"Bucket": self._bucket, "Prefix": self._prefix}
        while True:
            page = self._s3.list_objects_v2(**kwargs)
            keys += [
                o["Key"]
                for o in page.get("Contents", [])
                if marker in o["Key"] and o["Key"].endswith(".parquet")
            ]
            if not page.get("IsTruncated"):
                return sorted(keys)
            kwargs["ContinuationToken"] = page["NextContinuationToken"]
