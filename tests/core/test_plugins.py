"""The plugin contract: dialects arrive through the `toolbridge` entry-point group."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import toolbridge
import toolbridge.plugin
from toolbridge import PluginError, Toolbox, UnknownDialectError
from toolbridge.plugin import Dialect, DialectRegistry, hookimpl, hookspecs
from toolbridge.plugin._manager import _PLUGINS

PLUGINS = Path(__file__).parent.parent / "plugins"


def install_distribution(site: Path, dist: str, entry_points: dict[str, str]) -> None:
    """Write the metadata pip writes for an installed distribution with entry points."""
    info = site / f"{dist}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    lines = "".join(f"{name} = {target}\n" for name, target in entry_points.items())
    (info / "entry_points.txt").write_text(f"[toolbridge]\n{lines}")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A site directory on sys.path, and plugin state forgotten before and after."""
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(PLUGINS))
    _PLUGINS.reset()
    yield tmp_path
    _PLUGINS.reset()
    for name in [m for m in sys.modules if m.startswith(("toolbridge_echo", "broken_plugin"))]:
        del sys.modules[name]


def test_third_party_dialect_found_through_its_entry_point(site: Path) -> None:
    install_distribution(site, "toolbridge_echo_plugin", {"echo": "toolbridge_echo"})
    registry = toolbridge.dialects()
    assert "echo" in registry
    assert registry.provider("echo") == "echo"
    dialect = toolbridge.get_dialect("echo")
    assert dialect.name == "echo" and type(dialect).__module__ == "toolbridge_echo"

    toolbox = Toolbox()

    @toolbox.tool
    def shout(text: str) -> str:
        return text.upper()

    body = toolbox.handle("echo", {"calls": [{"id": "a", "tool": "shout", "args": {"text": "hi"}}]})
    assert body == {"answers": [{"id": "a", "ok": True, "value": "HI"}]}


def test_block_env_var_keeps_a_plugin_out(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_distribution(site, "toolbridge_echo_plugin", {"echo": "toolbridge_echo"})
    monkeypatch.setenv("TOOLBRIDGE_BLOCK_PLUGINS", "echo")
    with pytest.raises(UnknownDialectError) as info:
        toolbridge.get_dialect("echo")
    assert "installed dialects" in str(info.value)
    assert "echo" not in info.value.installed


def test_two_plugins_registering_one_name_fail_naming_both(site: Path) -> None:
    pkg = site / "toolbridge_echo_twin.py"
    pkg.write_text(
        "from toolbridge.plugin import hookimpl\n"
        "from toolbridge_echo import EchoDialect\n"
        "@hookimpl\n"
        "def toolbridge_register_dialects(registry):\n"
        "    registry.add(EchoDialect())\n"
    )
    install_distribution(site, "echo_one", {"echo": "toolbridge_echo"})
    install_distribution(site, "echo_two", {"echo_twin": "toolbridge_echo_twin"})
    with pytest.raises(PluginError, match=r"registered twice.*'echo'.*'echo_twin'|registered "
                       r"twice.*'echo_twin'.*'echo'"):
        toolbridge.dialects()


def test_a_plugin_that_fails_to_import_is_named(site: Path) -> None:
    (site / "broken_plugin.py").write_text("raise ImportError('missing vendor SDK')\n")
    install_distribution(site, "broken", {"broken": "broken_plugin"})
    with pytest.raises(PluginError, match="missing vendor SDK"):
        toolbridge.dialects()


def test_registry_accepts_only_dialect_instances() -> None:
    registry = DialectRegistry()
    with pytest.raises(PluginError, match=r"not a toolbridge\.plugin\.Dialect instance"):
        registry.add(object())  # type: ignore[arg-type]
    with pytest.raises(UnknownDialectError, match="installed dialects: none"):
        registry["x"]


def test_runtime_registration_without_entry_points(site: Path) -> None:
    class Upper(Dialect):
        name = "upper"

        def render_tools(self, tools, *, policy="describe"):  # type: ignore[no-untyped-def]
            return toolbridge.plugin.RenderedTools([{"n": t.name.upper()} for t in tools])

        def read_calls(self, payload):  # type: ignore[no-untyped-def]
            return toolbridge.plugin.PendingCalls(())

        def write_results(self, results):  # type: ignore[no-untyped-def]
            return {}

    class Plugin:
        @hookimpl
        def toolbridge_register_dialects(self, registry: DialectRegistry) -> None:
            registry.add(Upper())

    toolbridge.plugin.register_plugin(Plugin(), "upper-plugin")
    assert toolbridge.dialects().provider("upper") == "upper-plugin"
    toolbox = Toolbox()
    toolbox.tool(lambda: None, name="noop")
    assert toolbox.definitions("upper") == [{"n": "NOOP"}]


def test_every_hook_is_documented_and_prefixed() -> None:
    docs = (Path(__file__).parents[2] / "docs" / "plugins.md").read_text()
    hooks = [name for name, f in inspect.getmembers(hookspecs, inspect.isfunction)
             if name.startswith("toolbridge_")]
    assert hooks, "no hooks found"
    for name in hooks:
        func = getattr(hookspecs, name)
        assert func.__doc__ and len(func.__doc__) > 80, f"{name} lacks a docstring"
        assert f"## `{name}(" in docs, f"docs/plugins.md has no heading for {name}"


@pytest.mark.parametrize("name", sorted(toolbridge.dialects()))
def test_conversation_of_is_deprecated_on_every_dialect(name: str) -> None:
    """Nothing reads it: every installed dialect inherits the warning (no override is left)."""
    dialect = toolbridge.plugin.get_dialect(name)
    assert "conversation_of" not in type(dialect).__dict__
    with pytest.warns(DeprecationWarning, match="ToolCall.conversation"):
        assert dialect.conversation_of({"id": "sess_1"}) == ""


def test_a_capability_reference_may_name_a_dotted_attribute() -> None:
    from toolbridge.plugin._refs import resolve
    from toolbridge.testing.emulators import Emulator

    assert resolve("toolbridge.testing.emulators:Emulator.from_options") == Emulator.from_options
    with pytest.raises(AttributeError, match="no_such"):
        resolve("toolbridge.testing.emulators:Emulator.no_such")
