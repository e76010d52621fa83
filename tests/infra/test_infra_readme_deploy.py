"""The README's Deploy commands work as written: run them (``synth`` in place of
``deploy``) through the real CDK CLI and the Makefile, as an admin would."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

from conftest import REPO_ROOT

README = REPO_ROOT / "README.md"


def deploy_commands(readme: Path = README) -> list[str]:
    """The commands of the first code block of the README's "## Deploy" section."""
    text = readme.read_text()
    section = text.split("\n## Deploy\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```[a-z]*\n(.*?)```", section, re.S)
    assert block, "the Deploy section has no code block"
    lines = [line.strip() for line in block.group(1).splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def as_synth(command: str) -> str:
    return re.sub(r"\b(make|cdk) deploy\b", r"\1 synth", command)


def test_the_deploy_section_deploys_with_make() -> None:
    commands = deploy_commands()
    assert any(re.search(r"\bmake deploy\b", c) for c in commands), commands
    assert all(".venv/bin/npx" not in c for c in commands)


def test_the_readme_deploy_commands_synthesize() -> None:
    env = {
        **os.environ,
        "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
        "CDK_DISABLE_CLI_TELEMETRY": "true",
    }
    for key in ("CDK_CONTEXT_JSON", "CDK_OUTDIR"):
        env.pop(key, None)
    started = time.monotonic()
    ran = []
    for command in map(as_synth, deploy_commands()):
        result = subprocess.run(
            ["bash", "-c", command],
            cwd=REPO_ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        output = f"{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
        assert result.returncode == 0, f"{command}\n{output}"
        ran.append(command)
    print(f"README deploy commands as synth: {time.monotonic() - started:.1f} s")
    assert any(" synth " in c for c in ran)
    # The -c values took effect: the template goes to that account, mails that address.
    template = json.loads((REPO_ROOT / "cdk.out" / "CostTracker.template.json").read_text())
    manifest = json.loads((REPO_ROOT / "cdk.out" / "manifest.json").read_text())
    environment = manifest["artifacts"]["CostTracker"]["environment"]
    assert environment == "aws://111122223333/us-east-1"
    emails = {
        r["Properties"]["Endpoint"]
        for r in template["Resources"].values()
        if r["Type"] == "AWS::SNS::Subscription"
    }
    assert "finops@example.com" in emails
