"""The checks as pytest items: :func:`plugin_cases` and :func:`parametrize_with_checks`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from quadriga.registry import Registry
from quadriga.testing.case import ComponentCase, _registry
from quadriga.testing.checks import CHECK_FUNCTIONS
from quadriga.testing.report import CHECKS, CheckFailed, CheckInputsUnavailable, CheckSkipped


# ------------------------------------------------------------------ pytest
def plugin_cases(
    distribution: str,
    *,
    setup: Mapping[tuple[str, str], Mapping[str, Any]] | None = None,
    registry: Registry | None = None,
) -> list[ComponentCase]:
    """One :class:`ComponentCase` per component a distribution registers.

    Args:
        distribution: e.g. ``"quadriga-std"``.
        setup: ``{(kind, name): {"params": ..., "task": ..., "inputs": ...}}`` for components whose
            class does not declare its own check setup.
        registry: as for :class:`ComponentCase`.

    Raises:
        ValueError: the distribution registers no component (not installed?), or ``setup`` names
            a component it does not register.
    """
    reg = _registry(registry)
    specs = [s for s in reg.components() if s.distribution == distribution]
    if not specs:
        raise ValueError(f"'{distribution}' registers no component; is it installed (pip install -e ...)?")
    setup = dict(setup or {})
    stray = set(setup) - {(s.kind, s.name) for s in specs}
    if stray:
        raise ValueError(f"setup names components '{distribution}' does not register: {sorted(stray)}")
    return [ComponentCase(s.kind, s.name, registry=reg, **setup.get((s.kind, s.name), {})) for s in specs]


def parametrize_with_checks(
    cases: Iterable[ComponentCase | tuple[str, str]], *, checks: Iterable[str] = CHECKS
) -> Any:
    """A ``pytest.mark.parametrize`` giving one item per (component, check), with arguments ``case, check``.

    Item ids are ``kind-name-check`` (``sampler-mala-determinism``), so a failing check is one red
    test with its name. A check the class declares in ``check_xfail`` is marked ``xfail`` with its
    reason; a check that does not apply is skipped with the reason. Every item carries the marker
    ``quadriga_check``, from which quadriga's pytest plugin prints ``N run / M skipped / K failed``.

    Args:
        cases: :class:`ComponentCase` objects or ``(kind, name)`` pairs.
        checks: names from :data:`CHECKS`.

    Raises:
        ValueError: an unknown check name.
    """
    import pytest

    checks = tuple(checks)
    unknown = set(checks) - set(CHECKS)
    if unknown:
        raise ValueError(f"unknown check(s) {sorted(unknown)}; checks are {', '.join(CHECKS)}")
    params = []
    for case in cases:
        if not isinstance(case, ComponentCase):
            case = ComponentCase(*case)
        xfail = case.expected_failures
        for check in checks:
            marks = [pytest.mark.quadriga_check(check)]
            if check in xfail:
                marks.append(pytest.mark.xfail(reason=xfail[check], raises=CheckFailed, strict=True))
            params.append(pytest.param(case, _PytestCheck(check), id=f"{case}-{check}", marks=marks))
    return pytest.mark.parametrize(("case", "check"), params)


@attrs.frozen
class _PytestCheck:
    """A check as pytest calls it: a skipped check becomes ``pytest.skip`` with its reason."""

    name: str

    def __call__(self, case: ComponentCase) -> None:
        import pytest

        try:
            CHECK_FUNCTIONS[self.name](case)
        except CheckSkipped as exc:
            pytest.skip(str(exc))
        except CheckInputsUnavailable as exc:
            raise CheckFailed(f"{case.kind} '{case.name}' [{self.name}]: {exc}") from exc

    def __repr__(self) -> str:
        """The check's name (shown in pytest's output)."""
        return self.name
