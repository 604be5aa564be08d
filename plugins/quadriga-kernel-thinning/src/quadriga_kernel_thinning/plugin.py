"""Registration of quadriga-kernel-thinning's components, pipelines and claims (imports nothing heavy)."""

from __future__ import annotations

import quadriga

_P = "quadriga_kernel_thinning"
_KT = "Dwivedi & Mackey, Kernel Thinning, JMLR 2024, Alg. 1"
_GKT = "Dwivedi & Mackey, Generalized Kernel Thinning, ICLR 2022"
_CPP = "Shetty, Dwivedi & Mackey, Distribution Compression in Near-linear Time, ICLR 2022"

COMPONENTS = [
    (
        "sampler",
        "kernel-thinning",
        "thinning:KernelThinning",
        "Kernel thinning of a Samples artifact to ~sqrt(n) points: root/target/power KT, KT+, "
        "Compress++ (goodpoints)",
        f"{_KT}; {_GKT}; {_CPP}",
    ),
    (
        "evaluator",
        "mmd-to-target",
        "evaluators:MMDToTarget",
        "MMD to a Gaussian or Gaussian-mixture target via its closed-form kernel mean embedding",
        f"{_KT}, App. (closed-form Pk and PPk)",
    ),
    (
        "evaluator",
        "integration-error",
        "evaluators:IntegrationError",
        "Errors of sample means of three test functions against their exact Gaussian(-mixture) expectations",
        _KT,
    ),
]

PIPELINES = [
    (
        "kt-gaussian",
        "pipelines/kt-gaussian.toml",
        "N(0, I_d): iid sqrt(n), standard thinning, root KT, target KT, KT+, KT-Compress++; exact MMD to P",
    ),
    (
        "kt-after-mcmc",
        "pipelines/kt-after-mcmc.toml",
        "MALA on the 4-mode 2-D mixture, then thinned; exact MMD and integration errors",
    ),
]

CLAIMS = [
    (
        "kt-mmd-rate",
        "claims:mmd_rate",
        "KT's MMD to P decays like n^-1/2 against about n^-1/4 for iid sqrt(n) points (d = 2, 10)",
        f"{_KT}, Thm. 1 and Fig. 2",
    ),
    (
        "kt-after-mcmc",
        "claims:after_mcmc",
        "Thinning a MALA chain on the 4-mode mixture with KT gives lower MMD to P than standard thinning",
        f"{_KT}, sec. 6 (MCMC experiments)",
    ),
]


#: capability tags of each component (quadriga.tags), found by `quadriga list --where TAG`
TAGS = {
    ("sampler", "kernel-thinning"): ("thinning",),
    ("evaluator", "mmd-to-target"): ("exact-target", "thinning"),
    ("evaluator", "integration-error"): ("exact-target", "thinning"),
}


@quadriga.hookimpl
def quadriga_register(registry):
    """Register the kernel-thinning sampler, the exact-MMD evaluators, the pipelines and the claims."""
    for kind, name, target, summary, paper in COMPONENTS:
        registry.add(
            kind,
            name,
            f"{_P}.{target}",
            summary=summary,
            paper=paper,
            tags=TAGS.get((kind, name), ()),
        )
    for name, path, summary in PIPELINES:
        registry.add_pipeline(name, f"{_P}:{path}", summary=summary)
    for name, target, summary, paper in CLAIMS:
        registry.add_claim(name, f"{_P}.{target}", summary=summary, paper=paper)
