"""`toolbridge.plugin.lazy_module`, `lazy_attributes` and `lazy_options`: loaded on first use;
`moved_attributes`: old names that warn and resolve to their new path."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolbridge._lazy import moved_attributes
from toolbridge.plugin import lazy_attributes, lazy_module, lazy_options


@pytest.fixture
def probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A package ``lazy_probe``; its ``heavy`` module records each run in ``lazy_probe.runs``."""
    package = tmp_path / "lazy_probe"
    package.mkdir()
    (package / "__init__.py").write_text("runs = []\n")
    (package / "heavy.py").write_text("from . import runs\nruns.append('heavy')\n"
                                      "VALUE = 42\nclass Thing:\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "lazy_probe"
    for name in [m for m in sys.modules if m == "lazy_probe" or m.startswith("lazy_probe.")]:
        del sys.modules[name]


def test_lazy_module_runs_the_module_on_first_attribute_access(probe: str) -> None:
    import lazy_probe  # type: ignore[import-not-found]

    heavy = lazy_module(f"{probe}.heavy")
    assert lazy_probe.runs == []
    assert sys.modules[f"{probe}.heavy"] is heavy
    assert heavy.VALUE == 42
    assert lazy_probe.runs == ["heavy"]
    assert heavy.Thing.__module__ == f"{probe}.heavy"
    from lazy_probe.heavy import Thing  # type: ignore[import-not-found]

    assert Thing is heavy.Thing
    assert lazy_probe.runs == ["heavy"]  # once


def test_lazy_module_of_an_imported_module_is_that_module(probe: str) -> None:
    import lazy_probe.heavy  # type: ignore[import-not-found]

    assert lazy_module(f"{probe}.heavy") is lazy_probe.heavy
    assert lazy_probe.runs == ["heavy"]


def test_lazy_module_of_a_missing_module_raises_import_error(probe: str) -> None:
    with pytest.raises(ImportError, match=r"lazy_probe\.nothing"):
        lazy_module(f"{probe}.nothing")


def test_lazy_attributes_import_each_name_once_and_refuse_others(probe: str) -> None:
    import lazy_probe

    getattr_ = lazy_attributes(probe, {"Thing": ".heavy"})
    assert lazy_probe.runs == []
    thing = getattr_("Thing")
    assert lazy_probe.runs == ["heavy"]
    assert lazy_probe.Thing is thing  # kept in the module: its __getattr__ is not asked again
    with pytest.raises(AttributeError, match="module 'lazy_probe' has no attribute 'Other'"):
        getattr_("Other")


def test_lazy_options_import_the_class_when_first_read(probe: str) -> None:
    import lazy_probe

    class Holder:
        options = lazy_options(f"{probe}.heavy:Thing")

    assert lazy_probe.runs == []
    assert Holder.options is Holder().options is sys.modules[f"{probe}.heavy"].Thing
    assert lazy_probe.runs == ["heavy"]


def test_moved_attributes_warn_with_the_new_path_on_every_access(probe: str) -> None:
    import lazy_probe

    getattr_ = moved_attributes(probe, {"Old": f"{probe}.heavy.Thing"},
                                then=lazy_attributes(probe, {"VALUE": ".heavy"}))
    for _ in range(2):  # never kept in the module: each access warns again
        with pytest.warns(DeprecationWarning,
                          match=r"^lazy_probe\.Old is deprecated: use lazy_probe\.heavy\.Thing$"):
            old = getattr_("Old")
        assert old is sys.modules[f"{probe}.heavy"].Thing
    assert not hasattr(lazy_probe, "Old")
    assert getattr_("VALUE") == 42  # other names go to ``then``
    with pytest.raises(AttributeError, match="no attribute 'Other'"):
        getattr_("Other")
    with pytest.raises(AttributeError, match="module 'lazy_probe' has no attribute 'Other'"):
        moved_attributes(probe, {})("Other")
