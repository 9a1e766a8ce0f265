"""Policy modules load on first use; a user's class under a built-in kind name still wins.

Runs in a fresh interpreter: which built-in modules are already imported is
exactly what matters here.
"""

from __future__ import annotations

import subprocess
import sys

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
POLICIES.kinds()                  # imports every policy module
print(POLICIES.get("fcfs").__name__, sorted(user_registrations()["policies"]))
"""


def test_a_users_kind_is_not_replaced_by_a_built_in_module_loaded_later() -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["MyFCFS", "['fcfs']"]
