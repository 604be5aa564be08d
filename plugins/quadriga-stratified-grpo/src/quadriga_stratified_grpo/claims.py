"""The paper's claims as runnable checks (``quadriga verify quadriga-stratified-grpo``)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import tomllib

from quadriga.claims import ClaimResult

__all__ = ["advantage_identities", "learning", "pipeline_config"]

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
        "decomposition "
        f"{err['decomposition']:.1e}, stratum mean {err['stratum_mean']:.1e}, stratum variance "
        f"{err['stratum_var']:.1e}, variance gap {err['variance_gap']:.1e} (claim: all at float precision)"
    )
    return ClaimResult(
        passed=passed,
        summary=summary,
        numbers={**{f"max_error_{k}": v for k, v in err.items()}, "strata_checked": strata_checked},
    )


def pipeline_config(scale: str) -> dict[str, Any]:
    """The ``search-agent-sgrpo`` pipeline as a dict; at ``smoke`` scale cut to 2 seeds and tiny updates."""
    text = (
        resources.files("quadriga_stratified_grpo").joinpath("pipelines/search-agent-sgrpo.toml").read_text()
    )
    config = tomllib.loads(text)
    if scale == "paper":
        return config
    keep = {}
    for name, stage in config["stage"].items():
        if stage["use"] == "training-curves":
            continue
        if int(name.rsplit("-s", 1)[1]) < _SMOKE["seeds"]:
            keep[name] = {**stage, **{k: v for k, v in _SMOKE.items() if k != "seeds"}}
    curves = dict(config["stage"]["curves"])
    curves["inputs"] = {"subject": list(keep)}
    config["stage"] = {**keep, "curves": curves}
    return config


def learning(scale: str, *, out_dir: Path) -> ClaimResult:
    """Final return and AUC of stratified-grpo (alpha 0.5 and 1) against grpo on the search agent.

    Runs the ``search-agent-sgrpo`` pipeline (paper: 10 seeds x 3 methods x 200 updates; smoke: 2 seeds,
    4 tiny updates) and reads the ``training-curves`` stage: differences of means over seeds with
    percentile-bootstrap 95% intervals.

    Returns:
        :class:`ClaimResult`. At paper scale it passes when, for some alpha, the interval of the
        final-return difference (stratified-grpo minus grpo) lies above 0; at smoke scale when every
        number is finite.

    Source: Zhu et al. 2025, arXiv 2510.06214 (Stratified GRPO outperforms GRPO in training reward).
    """
    import math
    import shutil

    from quadriga import api

    result = api.run(pipeline_config(scale), out=out_dir / "run")
    metrics = result.artifacts["curves"]
    values = dict(metrics.values)
    figures = {}
    for png in sorted((out_dir / "run").rglob("*.png")):
        target = out_dir / png.name
        shutil.copyfile(png, target)
        figures[png.stem] = target.name
    bands = [b for b in metrics.info["bands"] if b != "grpo"]
    lines = [
        "| band | final return | AUC | final return - grpo | AUC - grpo | final tool calls |",
        "|---|---|---|---|---|---|",
    ]
    for row in metrics.tables["summary"]:
        lines.append(
            f"| {row['band']} | {row['final_return']} | {row['auc']} | {row.get('final_return_diff', '')} "
            f"| {row.get('auc_diff', '')} | {row.get('final_tool_calls', '')} |"
        )
    parts = []
    for band in bands:
        parts.append(
            f"{band}: final return diff {values[f'{band}/final_return_diff']:+.3f} "
            f"[{values[f'{band}/final_return_diff_low']:+.3f}, "
            f"{values[f'{band}/final_return_diff_high']:+.3f}],"
            f" AUC diff {values[f'{band}/auc_diff']:+.3f} [{values[f'{band}/auc_diff_low']:+.3f}, "
            f"{values[f'{band}/auc_diff_high']:+.3f}]"
        )
    if scale == "paper":
        passed = any(values[f"{band}/final_return_diff_low"] > 0 for band in bands)
    else:
        passed = all(math.isfinite(v) for v in values.values())
    summary = (
        f"grpo final return {values['grpo/final_return']:.3f}; "
        + "; ".join(parts)
        + " (claim: stratified-grpo above grpo)"
    )
    return ClaimResult(
        passed=passed, summary=summary, numbers=values, figures=figures, table="\n".join(lines)
    )
