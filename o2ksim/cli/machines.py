"""``o2ksim machines``: list the machine files in hosts/."""

from __future__ import annotations

import argparse
import math

from o2ksim import paths
from o2ksim.machine import load_machine

HELP = "list machine files (hosts/*.toml) or show one"


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", nargs="?", help="show one machine's hosts")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.name:
        m = load_machine(args.name)
        print(m.describe())
        for h in m.hosts:
            mem = "not constrained" if math.isinf(h.memory) else f"{h.memory_gb:g} GB"
            print(f"  {h.name:<12} {h.procs:>6} procs  {mem}")
        return 0
    for name, path in sorted(paths.available("hosts").items()):
        print(f"  {name:<14} {load_machine(path).describe()}")
    return 0
