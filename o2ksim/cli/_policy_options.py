"""The policy parameters that are ``o2ksim run`` options, built from the policies' declarations.

A policy kind declares each of its parameters once, as a
:class:`~o2ksim.policies.base.Param` in its ``PARAMS`` (name, type, default,
help); one with ``option=True`` is also a command-line option,
``--name-with-dashes`` (``--quantum``, ``--min-interval``, ...).  This module
turns the registry's declarations into ``argparse`` options
(:func:`add_policy_options`), checks a value where it is typed
(:func:`option_value`: the parameter's own type, choices and check), and
refuses an option the chosen policy does not declare
(:func:`refuse_foreign_options`), in one line naming the option and the policy.
A parameter several kinds declare (``immediate_service``: backfill and
EQspatial) is one option.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from o2ksim import paths
from o2ksim.errors import O2KSimError
from o2ksim.plugins import is_object_spec
from o2ksim.policies import POLICIES, Param, Policy, load_preset


@dataclass(frozen=True)
class PolicyOption:
    """One ``o2ksim run`` option: the parameter ``key``, its declaration and the kinds declaring it."""

    key: str
    param: Param
    kinds: tuple[str, ...]

    @property
    def flag(self) -> str:
        return "--" + self.key.replace("_", "-")


def declared_options(kinds: Iterable[type[Policy]] | None = None) -> list[PolicyOption]:
    """Every parameter declared with ``option=True`` by the registered kinds (or ``kinds``),
    in kind-name then declaration order; the first declaration gives the option's type."""
    classes = sorted(POLICIES.entries().values() if kinds is None else kinds, key=lambda c: c.kind)
    found: dict[str, tuple[Param, list[str]]] = {}
    for cls in classes:
        for key, param in cls.PARAMS.items():
            if param.option:
                found.setdefault(key, (param, []))[1].append(cls.kind)
    return [PolicyOption(key, param, tuple(kinds)) for key, (param, kinds) in found.items()]


def add_policy_options(parser: argparse.ArgumentParser) -> tuple[str, ...]:
    """Add every declared policy option to ``parser`` (an argument group); returns their keys.

    An option whose name the command already uses is left out (the parameter
    can still be given with ``--set``)."""
    group = parser.add_argument_group(
        "policy parameters",
        "declared by the policy kinds (see `o2ksim policies`); each overrides the chosen "
        "policy's parameter, and is refused for a policy that does not take it",
    )
    keys = []
    for opt in declared_options():
        param = opt.param
        text = param.help.replace("%", "%%") + f" [{', '.join(opt.kinds)}]"
        try:
            if param.type is bool:
                group.add_argument(
                    opt.flag,
                    dest=opt.key,
                    action=argparse.BooleanOptionalAction,
                    default=None,
                    help=text,
                )
            else:
                group.add_argument(
                    opt.flag, dest=opt.key, type=option_value(opt), default=None,
                    metavar=param.metavar or ("{" + ",".join(map(str, param.choices)) + "}"
                                              if param.choices else opt.key.upper()),
                    help=text,
                )  # fmt: skip
        except argparse.ArgumentError:
            continue  # the command has an option of that name: --set reaches the parameter
        keys.append(opt.key)
    return tuple(keys)


def option_value(opt: PolicyOption) -> Callable[[str], Any]:
    """The ``argparse`` type of ``opt``: the text as the first of the parameter's types
    (string, integer, number) that its choices and check accept, or a usage error."""
    param = opt.param
    types = param.type if isinstance(param.type, tuple) else (param.type,)

    def convert(text: str) -> Any:
        for value in _candidates(text, types):
            if param.choices is not None and value not in param.choices:
                continue
            if param.check is not None and not param.check(value):
                continue
            return value
        if param.choices is not None:
            why = f"must be one of {', '.join(map(str, param.choices))}"
        else:
            why = param.check_help or f"expected {' or '.join(t.__name__ for t in types)}"
        raise argparse.ArgumentTypeError(f"{why}, got '{text}'")

    convert.__name__ = opt.key  # argparse names the type in some messages
    return convert


def _candidates(text: str, types: tuple[type, ...]) -> list[Any]:
    out: list[Any] = []
    if str in types:
        out.append(text)
    if int in types:
        with contextlib.suppress(ValueError):
            out.append(int(text))
    if float in types:
        try:
            number = float(text)
        except ValueError:
            pass
        else:
            if math.isfinite(number):
                out.append(number)
    return out


def policy_class(name: str) -> type[Policy] | None:
    """The class a ``--policy`` name stands for: a preset's kind or a registered kind;
    ``None`` for ``module:Class`` or an unknown name (building the policy says why)."""
    text = os.fspath(name)
    if is_object_spec(text):
        return None
    if text.endswith(".toml") or os.sep in text:
        return POLICIES.get(load_preset(paths.resolve("policies", text)).kind)
    found = paths.available("policies")
    if text in found:
        return POLICIES.get(load_preset(found[text]).kind)
    return POLICIES.entries().get(text)


def refuse_foreign_options(
    args: argparse.Namespace, keys: Iterable[str], overrides: Iterable[str] = ()
) -> dict[str, Any]:
    """The policy options given on the command line, by parameter; an option the chosen
    policy (``args.policy``) does not declare is an error naming the option and the policy.

    A parameter given both by its option and by ``--set`` (``overrides``: the keys
    of the ``--set`` pairs), e.g. ``--no-sliding --set sliding=true``, is refused:
    one of the two would be dropped without a word.
    """
    given = {k: getattr(args, k) for k in keys if getattr(args, k, None) is not None}
    for key in given:
        if key in set(overrides):
            flag = "--" + ("no-" if given[key] is False else "") + key.replace("_", "-")
            raise O2KSimError(
                f"{flag} and --set {key}: the same parameter given twice; give one of them"
            )
    if not given:
        return given
    cls = policy_class(args.policy)
    if cls is None:
        return given
    for key in given:
        if key not in cls.PARAMS:
            flag = "--" + key.replace("_", "-")
            raise O2KSimError(
                f"{flag}: policy '{args.policy}' (kind {cls.kind}) does not take it "
                f"(its parameters: {', '.join(cls.PARAMS) or 'none'})"
            )
    return given
