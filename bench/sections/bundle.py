"""Section 5 of the table: zipped sizes of each function and of the layer against
Lambda's limit (the layer is left out with ``--skip-layer``)."""

from __future__ import annotations

from typing import Any

from bench.report import WIDTH, Report

MB = 1_000_000


def section_bundle(
    r: Report, functions: dict[str, Any], layer: dict[str, Any] | None, args_match: bool | None
) -> None:
    s = "5. Bundle size (zip, deflate)"
    r.section(s)
    r.header()
    for name, f in functions.items():
        r.figure(
            s,
            f"functions/{name}/",
            f["zipped_bytes"] / 1000,
            "kB",
            "<= 10 MB",
            f["zipped_bytes"] <= 10 * MB,
            ",.1f",
        )
    if layer is None:
        r.out("layer: skipped (--skip-layer)")
        return
    r.figure(
        s,
        "layer (requirements/lambda.txt + shared/)",
        layer["zipped_bytes"] / MB,
        "MB",
        "<= 10 MB",
        layer["zipped_bytes"] <= 10 * MB,
    )
    r.figure(s, "layer unzipped", layer["unzipped_bytes"] / MB, "MB", "", None)
    biggest = max((f["zipped_bytes"] for f in functions.values()), default=0)
    total = biggest + layer["zipped_bytes"]
    r.figure(s, "largest function + layer", total / MB, "MB", "<= 10 MB", total <= 10 * MB)
    parts = ", ".join(f"{x['name']} {x['bytes'] / MB:.1f}" for x in layer["largest_unzipped"])
    r.out(f"layer's largest (unzipped MB): {parts}"[:WIDTH])
    r.out(f"pip target args equal to cdk/constructs/lambda_factory.py: {args_match}")
