"""The one registry mechanism (o2ksim.registry) behind policies, priorities and workload models.

Built-in modules load on first use; a user's entry under a built-in name still
wins; the user's entries are what a sweep ships to its workers.  The
policy-module tests run in a fresh interpreter: which built-in modules are
already imported is exactly what matters there.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from o2ksim.errors import O2KSimError
from o2ksim.registry import Registry, UnknownName

SCRIPT = """
from o2ksim.policies import POLICIES, Policy, make_policy
from o2ksim.experiments.workers import user_registrations

class MyFCFS(Policy):
    kind = "fcfs"
    description = "a user's own strict FCFS"
    def schedule(self, snap):
        return []

POLICIES.register(MyFCFS)
make_policy("fcfs-backfill")      # imports the built-in module that registers "fcfs"
POLICIES.entries()                # imports every policy module
print(POLICIES.get("fcfs").__name__, sorted(user_registrations()["policies"]))
"""


def _run(script: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_a_users_kind_is_not_replaced_by_a_built_in_module_loaded_later() -> None:
    assert _run(SCRIPT) == ["MyFCFS", "['fcfs']"]


def test_a_backfill_run_imports_no_other_policy_module() -> None:
    script = (
        "import sys\nfrom o2ksim.policies import make_policy\nmake_policy('lxfw-backfill')\n"
        "print(*sorted(m for m in sys.modules if m.startswith('o2ksim.policies.')))"
    )
    loaded = _run(script)
    assert "o2ksim.policies.backfill" in loaded
    for other in ("eqspatial", "equipartition", "goal", "lsf"):
        assert f"o2ksim.policies.{other}" not in loaded


def test_an_unknown_kind_lists_every_built_in_kind() -> None:
    script = (
        "from o2ksim.policies import POLICIES\n"
        "try:\n    POLICIES.get('no-such-kind')\nexcept Exception as exc:\n    print(exc)"
    )
    words = " ".join(_run(script))
    for kind in ("backfill", "eqspatial", "fcfs", "goal", "ncsa-lsf"):
        assert kind in words


class _Loader:
    """Registers built-in ``b`` when asked for it (or for everything) and counts the calls."""

    def __init__(self, reg: Registry[int]) -> None:
        self.reg, self.calls = reg, []  # type: list[str | None]

    def __call__(self, name: str | None) -> None:
        self.calls.append(name)
        if name in ("b", None):
            self.reg.register(2, "b", builtin=True)


def test_builtins_load_on_first_use_and_once_for_a_listing() -> None:
    reg: Registry[int] = Registry("thing", {"a": 1})
    loader = _Loader(reg)
    reg.set_loader(loader)
    assert reg.get("a") == 1 and loader.calls == []  # registered: nothing loaded
    assert reg.get("b") == 2 and loader.calls == ["b"]
    assert reg.names() == ["a", "b"] and reg.names() == ["a", "b"]
    assert loader.calls == ["b", None]  # a listing loads everything, once


def test_a_users_entry_wins_over_a_built_in_registered_later() -> None:
    reg: Registry[int] = Registry("thing", {"a": 1})
    reg.set_loader(_Loader(reg))
    reg["b"] = 20  # the user's, before the built-in module loads
    reg["c"] = 30
    assert reg.get("b") == 20
    assert reg.entries() == {"a": 1, "b": 20, "c": 30}
    assert reg.user_entries() == {"b": 20, "c": 30}
    assert reg.builtin_names() == {"a"}
    del reg["c"]
    assert "c" not in reg and len(reg) == 2


def test_unknown_names_are_one_line_errors_naming_the_known_ones() -> None:
    reg: Registry[int] = Registry("workload model", {"o2k": 1, "downey": 2})
    with pytest.raises(UnknownName) as info:
        reg.get("o2x")
    assert str(info.value) == "unknown workload model 'o2x' (known: downey, o2k)"
    assert isinstance(info.value, O2KSimError) and isinstance(info.value, KeyError)


def test_objects_register_under_their_key_and_by_where_they_are_defined() -> None:
    class Mine:
        kind = "mine"

    reg: Registry[type] = Registry("policy kind", key=lambda cls: cls.kind)
    reg.register(Mine)
    assert reg.get("mine") is Mine
    assert reg.user_entries() == {"mine": Mine}  # defined in tests, not in o2ksim
    reg.register(Registry, "registry")  # a class defined in o2ksim counts as built-in
    assert reg.user_entries() == {"mine": Mine}


def test_workload_models_are_one_registry_and_load_on_first_use() -> None:
    script = (
        "import sys\nfrom o2ksim.workloads.models import MODELS, param_file\n"
        "print(sorted(MODELS), param_file('CB').name, 'o2ksim.workloads.o2k' in sys.modules)"
    )
    assert _run(script) == [
        "['cirne-berman',",
        "'downey',",
        "'o2k']",
        "cirne-berman-kth.toml",
        "False",
    ]


def test_an_unknown_model_is_a_one_line_error() -> None:
    from o2ksim.workloads.models import generate

    with pytest.raises(
        O2KSimError, match=r"unknown workload model 'o2x' \(known: o2k, cirne-berman, downey\)"
    ):
        generate("o2x", span=86400, seed=1)
