"""``o2ksim policies``: list the registered policy kinds and the shipped presets."""

from __future__ import annotations

import argparse

from o2ksim.errors import O2KSimError
from o2ksim.policies import POLICIES, Param, presets

HELP = "list policy presets and kinds with their parameters"


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", nargs="?", help="show one preset or kind in full")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    kinds = POLICIES.entries()
    found = presets()
    if args.name:
        if args.name in found:
            p = found[args.name]
            cls = POLICIES.get(p.kind)
            print(
                f"{p.name}  (preset of kind {p.kind}, {p.path})\n  {p.description}\n  source: {p.source}"
            )
            params = cls.validate(p.params)
        elif args.name in kinds:
            cls = kinds[args.name]
            print(f"{cls.kind}  (kind)\n  {cls.description}\n  source: {cls.source}")
            params = cls.validate({})
        else:
            raise O2KSimError(
                f"unknown policy '{args.name}' (known: {', '.join(sorted(set(found) | set(kinds)))})"
            )
        for key, spec in cls.PARAMS.items():
            flag = _flag(key, spec)
            print(f"  {key} = {params[key]!r}    # {spec.help}" + (f" [{flag}]" if flag else ""))
        return 0
    print("presets (policies/*.toml):")
    for name, p in sorted(found.items()):
        shown = ", ".join(f"{k}={v}" for k, v in p.params.items())
        print(f"  {name:<22} {p.description}" + (f"  [{shown}]" if shown else ""))
    print("kinds (Python classes; parameters):")
    for name, cls in sorted(kinds.items()):
        print(f"  {name:<22} {cls.description}")
        for key, spec in cls.PARAMS.items():
            print(f"  {'':<24}{key} (default {spec.default!r}{', ' + _flag(key, spec) if spec.option else ''}): {spec.help}")
    return 0


def _flag(key: str, spec: Param) -> str:
    """The ``o2ksim run`` option of a parameter declared as one (``Param.option``), else ``""``."""
    if not spec.option:
        return ""
    flag = key.replace("_", "-")
    return f"o2ksim run --{flag}" + (f"/--no-{flag}" if spec.type is bool else "")
