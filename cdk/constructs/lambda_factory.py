"""The one way this app makes a Lambda function, and the layer they all share.

Every function: Python 3.11 on arm64 (the version the project bundles, lints and
type-checks for: ``pyproject.toml``), ``functions/<name>/handler.py:handler``, the
shared dependencies layer (``requirements/lambda.txt`` + the ``shared`` package), its
own role with no managed policy, its own log group with retention, active tracing.
The functions that write or read Parquet (``uses_pyarrow`` in the catalog) also get the
pyarrow layer (``requirements/lambda-pyarrow.txt``), built the same way (docs/parquet.md).
Async (event / schedule) functions also get an SQS dead-letter queue and two
retries of asynchronous invocations.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsii
from aws_cdk import (
    AssetHashType,
    BundlingOptions,
    DockerImage,
    Duration,
    ILocalBundling,
    RemovalPolicy,
)
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from cdk.nag import acknowledge

REPO_ROOT = Path(__file__).resolve().parents[2]
FUNCTIONS_DIR = REPO_ROOT / "functions"
SHARED_DIR = REPO_ROOT / "shared"
REQUIREMENTS = REPO_ROOT / "requirements" / "lambda.txt"
PYARROW_REQUIREMENTS = REPO_ROOT / "requirements" / "lambda-pyarrow.txt"
# Never read by a running function: pyarrow's own tests, and the C++ headers and sources
# for building extensions against it (about 8 MB unzipped).
PYARROW_UNUSED = ("pyarrow/tests", "pyarrow/include", "pyarrow/src")

RUNTIME = lambda_.Runtime.PYTHON_3_11
RUNTIME_VERSION = "3.11"
ARCHITECTURE = lambda_.Architecture.ARM_64
# The wheels pip picks must match RUNTIME and ARCHITECTURE.
PIP_TARGET_ARGS = (
    "--platform", "manylinux2014_aarch64",
    "--only-binary=:all:",
    "--python-version", RUNTIME_VERSION,
    "--implementation", "cp",
)  # fmt: skip
_IGNORED = ("__pycache__", "*.pyc")
_XRAY_REASON = (
    "X-Ray (active tracing) xray:PutTraceSegments/PutTelemetryRecords do not support "
    "resource-level permissions and need Resource '*'."
)

RETENTION = {
    1: logs.RetentionDays.ONE_DAY,
    3: logs.RetentionDays.THREE_DAYS,
    5: logs.RetentionDays.FIVE_DAYS,
    7: logs.RetentionDays.ONE_WEEK,
    14: logs.RetentionDays.TWO_WEEKS,
    30: logs.RetentionDays.ONE_MONTH,
    60: logs.RetentionDays.TWO_MONTHS,
    90: logs.RetentionDays.THREE_MONTHS,
    120: logs.RetentionDays.FOUR_MONTHS,
    150: logs.RetentionDays.FIVE_MONTHS,
    180: logs.RetentionDays.SIX_MONTHS,
    365: logs.RetentionDays.ONE_YEAR,
    400: logs.RetentionDays.THIRTEEN_MONTHS,
    545: logs.RetentionDays.EIGHTEEN_MONTHS,
    731: logs.RetentionDays.TWO_YEARS,
    1096: logs.RetentionDays.THREE_YEARS,
    1827: logs.RetentionDays.FIVE_YEARS,
    2192: logs.RetentionDays.SIX_YEARS,
    2557: logs.RetentionDays.SEVEN_YEARS,
    2922: logs.RetentionDays.EIGHT_YEARS,
    3288: logs.RetentionDays.NINE_YEARS,
    3653: logs.RetentionDays.TEN_YEARS,
}


def _files(root: Path) -> Iterator[Path]:
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            yield path


def layer_asset_hash(
    requirements: Path = REQUIREMENTS, *, with_shared: bool = True, unused: Sequence[str] = ()
) -> str:
    """Changes only when the layer's pinned requirements, the pip target, what it leaves
    out or (for the shared layer) the ``shared`` package change: edits elsewhere in the
    repo do not rebuild it."""
    digest = hashlib.sha256()
    digest.update(" ".join(PIP_TARGET_ARGS).encode())
    digest.update(requirements.read_bytes())
    digest.update("\0".join(unused).encode() + b"\0")
    for path in _files(SHARED_DIR) if with_shared else ():
        digest.update(path.relative_to(REPO_ROOT).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


@jsii.implements(ILocalBundling)
class PipLayerBundling:
    """Builds a layer without Docker: pip downloads arm64/cp311 wheels only. The shared
    layer by default; ``pyarrow_bundling()`` the pyarrow one."""

    def __init__(
        self,
        requirements: Path = REQUIREMENTS,
        *,
        with_shared: bool = True,
        unused: Sequence[str] = (),
    ) -> None:
        self.requirements, self.with_shared, self.unused = requirements, with_shared, unused

    def asset_hash(self) -> str:
        return layer_asset_hash(self.requirements, with_shared=self.with_shared, unused=self.unused)

    def try_bundle(self, output_dir: str, options: Any = None, **_: Any) -> bool:
        target = Path(output_dir) / "python"
        subprocess.run(
            [
                sys.executable, "-m", "pip", "install",
                *PIP_TARGET_ARGS,
                "--no-compile",
                "--disable-pip-version-check",
                "--quiet",
                "--target", str(target),
                "-r", str(self.requirements),
            ],
            check=True,
        )  # fmt: skip
        # Console scripts are of no use in a layer.
        shutil.rmtree(target / "bin", ignore_errors=True)
        for unused in self.unused:
            shutil.rmtree(target / unused)  # a path that is gone is a mistake: said
        if self.with_shared:
            shutil.copytree(SHARED_DIR, target / "shared", ignore=shutil.ignore_patterns(*_IGNORED))
        compile_for_runtime(target)
        return True


def pyarrow_bundling() -> PipLayerBundling:
    """The pyarrow layer's build: ``requirements/lambda-pyarrow.txt``, without ``shared``
    and without what a running function never reads (``PYARROW_UNUSED``)."""
    return PipLayerBundling(PYARROW_REQUIREMENTS, with_shared=False, unused=PYARROW_UNUSED)


def runtime_python() -> str | None:
    """A Python of the runtime's version on this machine, to compile the layer with."""
    candidates = [shutil.which(f"python{RUNTIME_VERSION}")] + [
        str(p) for p in sorted(Path.home().glob(f".pyenv/versions/{RUNTIME_VERSION}.*/bin/python3"))
    ]
    for candidate in filter(None, candidates):
        probe = subprocess.run(
            [candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if probe.returncode == 0 and probe.stdout.strip() == RUNTIME_VERSION:
            return candidate
    return None


def compile_for_runtime(target: Path) -> bool:
    """Bytecode for the runtime's Python, so a cold start does not compile every module
    (/opt is read-only in Lambda: without .pyc files each cold start pays for it again).
    Only a Python of the runtime's exact minor version can write them; without one the
    layer ships source only, and says so."""
    python = runtime_python()
    if python is None:
        print(
            f"costtracker: no python{RUNTIME_VERSION} here: the layer ships without bytecode "
            "(slower cold starts)",
            file=sys.stderr,
        )
        return False
    subprocess.run(
        [python, "-m", "compileall", "-q", "-j", "0", "--invalidation-mode", "unchecked-hash",
         str(target)],
        check=True,
    )  # fmt: skip
    return True


@dataclass(frozen=True)
class LedgerFunction:
    function: lambda_.Function
    role: iam.Role
    log_group: logs.LogGroup
    # The SQS dead-letter queue of async functions (None for the API function).
    dead_letter_queue: sqs.Queue | None

    def grant_unscoped(self, actions: Sequence[str], reason: str) -> None:
        """Allow ``actions`` on Resource "*" — only for actions that AWS does not
        support resource-level permissions for; ``reason`` says so for cdk-nag."""
        self.role.add_to_policy(iam.PolicyStatement(actions=list(actions), resources=["*"]))
        acknowledge(self.role, "IAM5", f"{reason} {_XRAY_REASON}", finding="Resource::*")


class LambdaFactory(Construct):
    """Makes every function of the app (``function``) with the shared layer."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        environment: Mapping[str, str],
        log_retention_days: int,
    ) -> None:
        super().__init__(scope, construct_id)
        self._environment = {
            "POWERTOOLS_SERVICE_NAME": "costtracker",
            # pydantic otherwise scans installed entry points for plugins at import.
            "PYDANTIC_DISABLE_PLUGINS": "__all__",
            **environment,
        }
        self._retention = RETENTION[log_retention_days]
        self.layer = self._layer(
            "Dependencies",
            "costtracker: requirements/lambda.txt and the shared package",
            PipLayerBundling(),
        )
        self.pyarrow_layer = self._layer(
            "Pyarrow",
            "costtracker: pyarrow (requirements/lambda-pyarrow.txt), for the functions "
            "that write or read Parquet",
            pyarrow_bundling(),
        )

    def _layer(
        self, construct_id: str, description: str, bundling: PipLayerBundling
    ) -> lambda_.LayerVersion:
        return lambda_.LayerVersion(
            self,
            construct_id,
            description=description,
            code=lambda_.Code.from_asset(
                str(REQUIREMENTS.parent),
                asset_hash_type=AssetHashType.CUSTOM,
                asset_hash=bundling.asset_hash(),
                bundling=BundlingOptions(
                    # Never pulled: local bundling always succeeds (or raises).
                    image=DockerImage.from_registry("unused"),
                    local=bundling,
                ),
            ),
            compatible_runtimes=[RUNTIME],
            compatible_architectures=[ARCHITECTURE],
        )

    def function(
        self,
        name: str,
        *,
        timeout: Duration,
        asynchronous: bool,
        memory_mb: int = 256,
        description: str = "",
        extra_environment: Mapping[str, str] | None = None,
        reserved_concurrency: int | None = None,
        pyarrow: bool = False,
    ) -> LedgerFunction:
        """``functions/<name>`` as a function; ``asynchronous`` adds the DLQ and retries,
        ``pyarrow`` the pyarrow layer."""
        source = FUNCTIONS_DIR / name
        if not (source / "handler.py").is_file():
            raise ValueError(f"no handler module at {source / 'handler.py'}")
        scope = Construct(self, _pascal(name))
        log_group = logs.LogGroup(
            scope,
            "Logs",
            retention=self._retention,
            removal_policy=RemovalPolicy.DESTROY,
        )
        # A role of its own, without AWSLambdaBasicExecutionRole (which allows
        # writing to any log group): logging rights to its own group only.
        role = iam.Role(
            scope,
            "Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description=f"costtracker {name} function",
        )
        role.add_to_policy(
            iam.PolicyStatement(
                actions=["logs:CreateLogStream", "logs:PutLogEvents"],
                resources=[log_group.log_group_arn],
            )
        )
        dead_letter_queue = None
        if asynchronous:
            dead_letter_queue = sqs.Queue(
                scope,
                "DeadLetterQueue",
                encryption=sqs.QueueEncryption.SQS_MANAGED,
                enforce_ssl=True,
                retention_period=Duration.days(14),
            )
        function = lambda_.Function(
            scope,
            "Function",
            description=description or f"costtracker {name}",
            runtime=RUNTIME,
            architecture=ARCHITECTURE,
            code=lambda_.Code.from_asset(str(source), exclude=list(_IGNORED)),
            handler="handler.handler",
            layers=[self.layer, self.pyarrow_layer] if pyarrow else [self.layer],
            role=role,
            log_group=log_group,
            environment={**self._environment, **(extra_environment or {})},
            tracing=lambda_.Tracing.ACTIVE,
            memory_size=memory_mb,
            timeout=timeout,
            dead_letter_queue=dead_letter_queue,
            retry_attempts=2 if asynchronous else None,
            reserved_concurrent_executions=reserved_concurrency,
        )
        acknowledge(
            function,
            "L1",
            "Pinned to Python 3.11 on purpose: the dependencies and pyarrow layers are built "
            "from cp311 wheels (PIP_TARGET_ARGS), and ruff and mypy target 3.11; all move "
            "together.",
        )
        acknowledge(role, "IAM5", _XRAY_REASON, finding="Resource::*")
        return LedgerFunction(function, role, log_group, dead_letter_queue)


def _pascal(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))
