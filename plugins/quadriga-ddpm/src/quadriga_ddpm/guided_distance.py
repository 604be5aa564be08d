"""``guided-density-distance``: how far guided samples are from the exact guided law p_w on its grid.

For each subject (a ``Samples`` from a guided sampler, whose ``info["guidance"]`` is its weight w, or
the evaluator's ``guidance`` when set) and the reference ``conditional-gaussian-mixture`` target, the
guided law p_w(x) = p(x | c)^{1 + w} p(x)^{-w} / Z_w normalised on the target's grid
(:class:`~quadriga_ddpm.conditional.GuidedGrid`) gives:

* ``tv``: total variation between the samples' histogram and p_w's exact bin masses, on
  ``num_bins`` bins per axis over the grid's extent (samples outside it count as mass p_w does not
  have); it carries the finite-sample bias of a histogram (about sqrt(B / (2 pi n)) summed over
  bins for n samples, equal for arms of equal n);
* ``energy_distance``: the V-statistic 2 E|X - Y| - E|X - X'| - E|Y - Y'| against
  ``num_reference_samples`` draws of p_w (from the stage's ``"reference"`` stream, so every subject of
  one w is compared with the same set; std's ``weighted_pair_sum``), units of x;
* ``off_support``: the fraction of samples where p_w is below ``support_threshold`` times its
  maximum on the grid (samples in regions the guided law does not cover);
* ``guidance``: the w read.

Values are written ``"<subject>/<metric>"``.

Source: the research note on characteristic guidance (methods-wave3.md, sec. 5(d)); energy distance:
Székely & Rizzo 2013, eq. 2.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import torch

from quadriga import param
from quadriga.artifacts import Metrics, Samples
from quadriga.errors import ConfigError
from quadriga.interfaces import Evaluator, Target, named
from quadriga.seeding import child_generator
from quadriga.validators import in_range, int_at_least, optional, positive_int

__all__ = ["GuidedDensityDistance", "histogram_tv"]


def histogram_tv(x: torch.Tensor, grid: Any, num_bins: int) -> float:
    """TV between the histogram of ``x: Tensor[n, d]`` and the exact bin masses of a guided grid.

    Bins: ``num_bins`` per axis, equal width over ``[grid.lower, grid.upper]`` (each fine grid cell
    goes to the bin of its centre); a sample outside the extent is mass in no bin, where the exact
    law has none. Returns 0.5 sum_b |p_hat_b - p_b| + 0.5 (outside fraction), in [0, 1].
    """
    d = int(grid.points.shape[1])
    span = grid.upper - grid.lower

    def bin_of(z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        idx = torch.floor((z - grid.lower) / span * num_bins).long()
        inside = ((idx >= 0) & (idx <= num_bins)).all(-1)
        idx = idx.clamp(0, num_bins - 1)
        flat = torch.zeros(z.shape[0], dtype=torch.long)
        for j in range(d):
            flat = flat * num_bins + idx[:, j]
        return flat, inside

    exact = torch.zeros(num_bins**d, dtype=torch.float64)
    cells, _ = bin_of(grid.points)
    exact.index_add_(0, cells, grid.log_mass.exp())
    flat, inside = bin_of(x.to(torch.float64))
    hist = torch.zeros(num_bins**d, dtype=torch.float64)
    hist.index_add_(0, flat[inside], torch.ones(int(inside.sum()), dtype=torch.float64))
    n = x.shape[0]
    outside = float((~inside).sum()) / n
    return float(0.5 * (hist / n - exact).abs().sum() + 0.5 * outside)


@attrs.define(kw_only=True)
class GuidedDensityDistance(Evaluator):
    """Distance of guided samples to the exact guided law p_w (see the module docstring).

    Hyperparameters: ``num_bins`` (histogram bins per axis), ``num_reference_samples`` (draws of p_w
    for the energy distance), ``support_threshold``, ``guidance`` (w for every subject; ``None``:
    each subject's ``info["guidance"]``).

    Units: ``tv`` and ``off_support`` are fractions in [0, 1]; ``energy_distance`` in units of x.

    Raises:
        ConfigError: a reference without a guided grid, a subject without a guidance weight, or
            dimensions that differ.

    Source: research note methods-wave3.md sec. 5(d); Székely & Rizzo 2013 (energy distance).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"subject": (Samples,), "reference": (Target,)}
    required_inputs: ClassVar[tuple[str, ...]] = ("subject", "reference")

    num_bins: int = param(40, doc="histogram bins per axis for the TV (count)", validator=int_at_least(2))
    num_reference_samples: int = param(
        2000, doc="draws of the guided law for the energy distance (count)", validator=positive_int
    )
    support_threshold: float = param(
        1e-3,
        doc="off-support: p_w below this fraction of its grid maximum",
        validator=in_range(0.0, 1.0, low_open=True, high_open=True),
    )
    guidance: float | None = param(
        None,
        doc="guidance weight w of every subject; None: read each subject's info['guidance']",
        validator=optional(in_range(-1.0)),
    )

    def _weight(self, name: str, s: Samples) -> float:
        if self.guidance is not None:
            return float(self.guidance)
        w = (s.info or {}).get("guidance")
        if w is None:
            raise ConfigError(
                f"subject '{name}' has no info['guidance']: run its sampler with guidance = w, or set "
                "this evaluator's guidance.",
                key="guidance",
            )
        return float(w)

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """Compare each subject with p_w of its own w.

        Args:
            subject: a ``Samples`` (``x: Tensor[n, d]``) or ``{name: Samples}``.
            reference: a target with ``guided_grid(w)`` and ``guided_log_prob(x, w)`` (e.g.
                ``conditional-gaussian-mixture``).
            generator: the stage generator (the ``"reference"`` stream draws p_w; one set per w).

        Returns:
            ``Metrics`` with ``"<subject>/tv"``, ``/energy_distance``, ``/off_support``, ``/guidance``
            and ``tables["summary"]``.

        Raises:
            ConfigError: see the class docstring.
        """
        from quadriga_std.evaluators.distances import weighted_pair_sum

        if reference is None or not callable(getattr(reference, "guided_grid", None)):
            raise ConfigError(
                "the reference must be a conditional target with a guided law (guided_grid), e.g. "
                "'conditional-gaussian-mixture'.",
                key="reference",
            )
        values: dict[str, float] = {}
        rows = []
        refs: dict[float, torch.Tensor] = {}
        for name, s in named(subject).items():
            if not isinstance(s, Samples):
                raise ConfigError(f"subject '{name}' must be a Samples artifact.", key="subject")
            x = torch.as_tensor(s.x).detach().cpu().to(torch.float64).reshape(s.num_samples, -1)
            if x.shape[1] != reference.dim:
                raise ConfigError(
                    f"subject '{name}' has dimension {x.shape[1]} but the reference {reference.dim}.",
                    key="subject",
                )
            w = self._weight(name, s)
            grid = reference.guided_grid(w)
            if w not in refs:
                refs[w] = grid.sample(
                    int(self.num_reference_samples), generator=child_generator(generator, f"reference-{w:g}")
                )
            y = refs[w]
            a = torch.full((x.shape[0],), 1.0 / x.shape[0], dtype=torch.float64)
            b = torch.full((y.shape[0],), 1.0 / y.shape[0], dtype=torch.float64)

            def dist(dd: torch.Tensor) -> torch.Tensor:
                return dd

            energy = (
                2 * weighted_pair_sum(x, y, a, b, dist)
                - weighted_pair_sum(x, x, a, a, dist)
                - weighted_pair_sum(y, y, b, b, dist)
            )
            log_max = float(grid.log_density().max())
            logp = reference.guided_log_prob(x, w)
            off = float(
                (logp < log_max + torch.log(torch.tensor(float(self.support_threshold)))).double().mean()
            )
            res = {
                "tv": histogram_tv(x, grid, int(self.num_bins)),
                "energy_distance": float(energy),
                "off_support": off,
                "guidance": w,
            }
            rows.append({"subject": name, **res})
            values.update({f"{name}/{k}": float(v) for k, v in res.items()})
        return Metrics(values=values, tables={"summary": rows})
