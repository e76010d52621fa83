"""``costtracker demo``: replay the bundled example on the emulator, print the job table,
then serve the job-cost API on the loopback until interrupted."""

from __future__ import annotations

import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "llama-lora-vs-p5.json"


def run_demo(host: str, port: int, serve: bool, scenario_path: Path | None, verbose: bool) -> int:
    from costtracker.cli import _job_table
    from costtracker.local_api import CALLER_HEADER, LOCAL_CALLER_ARN
    from costtracker.local_api import serve as make_server
    from costtracker.replay import replay_session, report
    from costtracker.scenario import load_scenario

    path = scenario_path or EXAMPLE
    scenario = load_scenario(path)
    print(f"Replaying {path.name} on the embedded AWS emulator (moto, 127.0.0.1)...", flush=True)
    with replay_session(scenario, verbose=verbose) as replayer:
        replayer.run()
        print(_job_table(report(replayer)), flush=True)
        if not serve:
            return 0
        server = make_server(host, port)
        bound_host, bound_port = str(server.server_address[0]), int(server.server_address[1])
        print(
            f"\nJob-cost API on http://{bound_host}:{bound_port} (OpenAPI at /openapi.json), "
            f"e.g. curl http://{bound_host}:{bound_port}/jobs?from=2026-11-01\n"
            "Local mode: requests are not signed and no credentials are checked; the server "
            "trusts any caller on this loopback address as the local admin "
            f"({LOCAL_CALLER_ARN}; another ARN in the {CALLER_HEADER} header tries the "
            "ledger.access rules). Ctrl-C stops it.",
            flush=True,
        )
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            print("stopped", file=sys.stderr)
        finally:
            server.server_close()
    return 0
