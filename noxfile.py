"""Each real framework under test in a virtual environment of its own.

The frameworks pin dependency sets that do not mix (and the main install of turnbound
carries none of them), so each gets a nox session: install turnbound with the
framework's extra, print the installed versions, run the framework's real-code tests,
then drive the unchanged framework through `turnbound conform` with no network (a fresh
network namespace, where the machine allows one).

    nox -s conform-pydantic-ai        # one framework
    nox -t frameworks                 # all of them (what .ci/run calls)
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass

import nox

nox.options.default_venv_backend = "uv|venv"  # uv builds an environment in seconds; venv without it
nox.options.error_on_missing_interpreters = True
nox.options.sessions = []  # nothing runs unless named: `nox -s NAME` or `nox -t frameworks`

POINTS = "build/knob-points"
"""Where each session writes its framework's measured curve (git-ignored)."""


@dataclass(frozen=True)
class Framework:
    profile: str  # the table in spec/, and the session's name
    extra: str  # the pyproject extra that installs the pinned framework
    distributions: tuple[str, ...]  # whose installed versions the log shows
    adapter: str  # MODULE:NAME for `turnbound conform --adapter`
    tests: str  # the pytest file that drives the real code
    fuzz: int = 500  # Hypothesis examples against the real code


FRAMEWORKS: tuple[Framework, ...] = (
    # One entry per framework; adding a framework is a table, an adapter module and a line here.
    Framework(
        "langgraph-react",
        "langgraph-react",
        ("langgraph", "langgraph-prebuilt", "langchain", "langchain-core"),
        "turnbound.properties.adapters.langgraph_react:scheduler",
        "tests/frameworks/test_langgraph_react_real.py",
    ),
    Framework(
        "pydantic-ai",
        "pydantic-ai",
        ("pydantic-ai-slim", "pydantic", "turnbound"),
        "turnbound.properties.adapters.pydantic_ai:scheduler",
        "tests/frameworks/test_pydantic_ai_real.py",
    ),
    Framework(
        "openai-agents",
        "openai-agents",
        ("openai-agents", "openai"),
        "turnbound.properties.adapters.openai_agents:scheduler",
        "tests/frameworks/test_openai_agents_real.py",
        fuzz=500,
    ),
    Framework(
        "google-adk",
        "google-adk",
        ("google-adk", "google-genai"),
        "turnbound.properties.adapters.google_adk:scheduler",
        "tests/frameworks/test_google_adk_real.py",
    ),
    Framework(
        "smolagents",
        "smolagents",
        ("smolagents", "huggingface-hub"),
        "turnbound.properties.adapters.smolagents:scheduler",
        "tests/frameworks/test_smolagents_real.py",
    ),
    Framework(
        "strands-agents",
        "strands-agents",
        ("strands-agents", "opentelemetry-api"),
        "turnbound.properties.adapters.strands_agents:scheduler",
        "tests/frameworks/test_strands_agents_real.py",
        fuzz=500,
    ),
)


def _offline_prefix() -> list[str]:
    """`unshare --net` when this process may make a network namespace (root on Linux), else nothing."""
    tool = shutil.which("unshare")
    if tool is None:
        return []
    probe = subprocess.run([tool, "--net", "true"], capture_output=True, check=False)
    return [tool, "--net", "--"] if probe.returncode == 0 else []


def _define(fw: Framework) -> None:
    @nox.session(name=f"conform-{fw.profile}", tags=["frameworks"])
    def conform(session: nox.Session) -> None:
        session.install(f".[{fw.extra}]", "pytest>=8")
        versions = ", ".join(f"'{d}'" for d in fw.distributions)
        session.run(
            "python",
            "-c",
            "from importlib.metadata import version\n"
            f"for d in ({versions},): print(f'{{d}} {{version(d)}}')",
        )
        offline = _offline_prefix()
        if not offline:
            session.log("no network namespace here: the run is offline by construction only")
        session.run(*offline, "python", "-m", "pytest", "-p", "no:cacheprovider", fw.tests, external=True)
        session.run(
            *offline,
            "turnbound",
            "conform",
            fw.profile,
            "--fuzz",
            str(fw.fuzz),
            "--adapter",
            fw.adapter,
            external=True,
        )
        # The knob's curve, N = 0..8: each of the engines' longest runs replayed on the real
        # code; the comparison notebook (notebooks/05_frameworks) draws these points.
        session.run(
            *offline,
            "turnbound",
            "knobs",
            fw.profile,
            "--adapter",
            fw.adapter,
            "--points",
            f"{POINTS}/{fw.profile}.json",
            external=True,
        )


for _fw in FRAMEWORKS:
    _define(_fw)
