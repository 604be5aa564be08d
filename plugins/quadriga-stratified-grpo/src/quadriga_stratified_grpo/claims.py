"""The paper's claims (``quadriga verify quadriga-stratified-grpo``).

``stratified-grpo-advantage-identities`` checks exact identities at float precision (a
deterministic check, kept as a function). ``stratified-grpo-learning`` is a
:class:`quadriga.claims.Claim`: per-seed final training-batch returns of Stratified GRPO at
alpha 0.5 and 1 against GRPO, one comparison per alpha with Holm correction. The test bed is
unchanged (the search agent, where SAN is blind to the tool cost).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from quadriga.claims import Claim, ClaimResult, Effect, Scale, Tuning

__all__ = ["advantage_identities", "learning"]

_SCALE_TABLES = {"smoke": 200, "paper": 20_000}
# smoke: 2 seeds per method, a handful of small updates (checks that everything is produced and finite)
_SMOKE = {"seeds": 2, "num_updates": 4, "num_prompts": 2, "group_size": 4}


def advantage_identities(scale: str, *, out_dir: Path) -> ClaimResult:
    """Exact properties of SAN on random reward tables (float64).

    Checks (i) ``A_global = A_SAN + (R̄_k - R̄)`` element-wise, (ii) with ``eps = 0`` the normalised SAN
    advantages have mean 0 and population variance 1 in every stratum of size >= 2 with non-constant
    rewards, (iii) ``Var[A_global] - Var[A_SAN] = (1/G) sum_k n_k (R̄_k - R̄)^2`` with the between-stratum
    term computed independently by looping over strata. Tables mix Gaussian, Bernoulli and
    shifted-by-stratum rewards, group sizes 2-16 and 1-5 strata.

    Args:
        scale: ``"smoke"`` (200 tables) or ``"paper"`` (20000).
        out_dir: unused (no figures).

    Returns:
        :class:`ClaimResult`, passed when every error is below 1e-9.

    Source: Zhu et al. 2025, arXiv 2510.06214, Proposition 1 and Theorem 1.
    """
    import torch

    from quadriga_stratified_grpo.advantages import advantage_decomposition, stratified_advantages

    gen = torch.Generator().manual_seed(2510_06214)
    err = {"decomposition": 0.0, "stratum_mean": 0.0, "stratum_var": 0.0, "variance_gap": 0.0}
    strata_checked = 0
    for _ in range(_SCALE_TABLES[scale]):
        prompts = int(torch.randint(1, 5, (1,), generator=gen))
        size = int(torch.randint(2, 17, (1,), generator=gen))
        num_strata = int(torch.randint(1, 6, (1,), generator=gen))
        strata = torch.randint(num_strata, (prompts, size), generator=gen)
        kind = int(torch.randint(3, (1,), generator=gen))
        if kind == 0:
            rewards = torch.randn(prompts, size, generator=gen, dtype=torch.float64) * 3 + 1
        elif kind == 1:
            rewards = (torch.rand(prompts, size, generator=gen, dtype=torch.float64) < 0.4).double()
        else:
            rewards = (
                strata.double() * 0.7 + torch.randn(prompts, size, generator=gen, dtype=torch.float64) * 0.2
            )
        parts = advantage_decomposition(rewards, strata)
        err["decomposition"] = max(
            err["decomposition"],
            float((parts["global"] - parts["san"] - parts["cross_stratum_bias"]).abs().max()),
        )
        san = stratified_advantages(rewards, strata, eps=0.0)
        for p in range(prompts):
            mean, between = rewards[p].mean(), 0.0
            for k in strata[p].unique():
                r, a = rewards[p][strata[p] == k], san[p][strata[p] == k]
                between += len(r) * float((r.mean() - mean) ** 2)
                if len(r) >= 2 and float(r.std()) > 1e-6:
                    strata_checked += 1
                    err["stratum_mean"] = max(err["stratum_mean"], float(a.mean().abs()))
                    err["stratum_var"] = max(
                        err["stratum_var"], float((a.pow(2).mean() - a.mean() ** 2 - 1).abs())
                    )
            gap = float(parts["var_global"][p] - parts["var_san"][p])
            err["variance_gap"] = max(err["variance_gap"], abs(gap - between / size))
    passed = all(v < 1e-9 for v in err.values()) and strata_checked > 0
    summary = (
        f"max errors over {_SCALE_TABLES[scale]} tables ({strata_checked} strata of size >= 2): "
        f"decomposition {err['decomposition']:.1e}, stratum mean {err['stratum_mean']:.1e}, stratum variance "
        f"{err['stratum_var']:.1e}, variance gap {err['variance_gap']:.1e} (claim: all at float precision)"
    )
    return ClaimResult(
        passed=passed,
        summary=summary,
        numbers={**{f"max_error_{k}": v for k, v in err.items()}, "strata_checked": strata_checked},
    )


_SMOKE_OVERRIDES = tuple(
    f"stage.{stage}.{k}={v}" for stage in ("grpo", "sgrpo") for k, v in _SMOKE.items() if k != "seeds"
)


def _final_returns(result: Any) -> dict[str, dict[str, list[float]]]:
    """Per-replicate final training-batch returns, ``{"alpha=<a>": {"sgrpo": [...], "grpo": [...]}}``.

    The final return of one replicate is its mean ``mean_return`` over the last 10% of updates (as
    in ``training-curves``); replicate i of GRPO and of each Stratified GRPO point shares its seed.
    """
    import re

    import numpy as np

    from quadriga_stratified_grpo.curves import TrainingCurves

    fraction = TrainingCurves().final_fraction
    pattern = re.compile(r"^(grpo|sgrpo\[alpha=([0-9.]+)\])\[(\d+)\]$")
    finals: dict[str, dict[int, float]] = {}
    for name, art in result.artifacts.items():
        m = pattern.match(name)
        history = getattr(art, "history", None)
        if not m or not isinstance(history, dict) or not history.get("mean_return"):
            continue
        r = np.asarray(history["mean_return"], float)
        tail = max(1, round(fraction * len(r)))
        band = "grpo" if m.group(1) == "grpo" else f"alpha={m.group(2)}"
        finals.setdefault(band, {})[int(m.group(3))] = float(r[-tail:].mean())
    if "grpo" not in finals:
        raise RuntimeError(f"no grpo replicates among {sorted(result.artifacts)}")
    grpo = finals.pop("grpo")
    out = {}
    for band, reps in sorted(finals.items()):
        common = sorted(set(reps) & set(grpo))
        out[band] = {"sgrpo": [reps[i] for i in common], "grpo": [grpo[i] for i in common]}
    return out


learning = Claim(
    pipeline="search-agent-sgrpo",
    arms=("sgrpo", "grpo"),
    observe=_final_returns,
    effect=Effect(
        quantity="final training-batch return (mean over the last 10% of updates), Stratified GRPO - GRPO "
        "(paired by replicate seed)",
        statistic="difference",
        relation="greater",
        value=0.0,
    ),
    scales={
        "smoke": Scale(replicates=_SMOKE["seeds"], overrides=_SMOKE_OVERRIDES),
        "paper": Scale(replicates=10),
    },
    tuning={
        "sgrpo": Tuning(2, "alpha in {0.5, 1}, both reported and Holm-corrected"),
        "grpo": Tuning(1, "the same budget and entropy bonus 0.01"),
    },
)
"""Stratified GRPO's final return is above GRPO's, for each alpha (Holm over the two)."""
