"""Registration of quadriga-kernel-thinning's components, pipelines and claims (imports nothing heavy)."""

from __future__ import annotations

import quadriga

_P = "quadriga_kernel_thinning"
_KT = "Dwivedi & Mackey, Kernel Thinning, JMLR 2024, Alg. 1"
_CPP = "Shetty, Dwivedi & Mackey, Distribution Compression in Near-linear Time, ICLR 2022"


@quadriga.hookimpl
def quadriga_register(registry):
    """Register the kernel-thinning sampler, the exact-MMD evaluators, the pipelines and the claims."""
    registry.add(
        "sampler",
        "kernel-thinning",
        f"{_P}.thinning:KernelThinning",
        summary=(
            "Kernel thinning of a Samples artifact to ~sqrt(n) points: root/target/power KT, KT+, "
            "Compress++ (goodpoints)"
        ),
        paper=(
            "Dwivedi & Mackey, Kernel Thinning, JMLR 2024, Alg. 1; Dwivedi & Mackey, Generalized Kernel "
            f"Thinning, ICLR 2022; {_CPP}"
        ),
        tags=("thinning",),
    )
    registry.add(
        "evaluator",
        "mmd-to-target",
        f"{_P}.evaluators:MMDToTarget",
        summary="MMD to a Gaussian or Gaussian-mixture target via its closed-form kernel mean embedding",
        paper=f"{_KT}, App. (closed-form Pk and PPk)",
        tags=("exact-target", "thinning"),
    )
    registry.add(
        "evaluator",
        "integration-error",
        f"{_P}.evaluators:IntegrationError",
        summary=(
            "Errors of sample means of three test functions against their exact Gaussian(-mixture) "
            "expectations"
        ),
        paper=f"{_KT}",
        tags=("exact-target", "thinning"),
    )
    registry.add_pipelines(__package__)
    registry.add_claim(
        "kt-mmd-rate",
        f"{_P}.claims:mmd_rate",
        summary="KT's MMD to P decays like n^-1/2 against about n^-1/4 for iid sqrt(n) points (d = 2, 10)",
        paper=f"{_KT}, Thm. 1 and Fig. 2",
    )
    registry.add_claim(
        "kt-after-mcmc",
        f"{_P}.claims:after_mcmc",
        summary=(
            "Thinning a MALA chain on the 4-mode mixture with KT gives lower MMD to P than standard thinning"
        ),
        paper=f"{_KT}, sec. 6 (MCMC experiments)",
    )
