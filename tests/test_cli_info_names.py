"""`quadriga info NAME > my.toml` stays a TOML file when NAME also names a claim or a component,
and a name asked for under the wrong kind says which kind it is."""

from __future__ import annotations

import pytest
import tomllib

from quadriga.cli import main


def _info(capsys, *argv):
    capsys.readouterr()
    try:
        rc = main(["info", *argv])
    except SystemExit as exc:
        rc = exc.code
    got = capsys.readouterr()
    return rc, got.out, got.err


def test_a_pipeline_sharing_its_name_prints_as_toml_and_names_the_others(capsys):
    pytest.importorskip("quadriga_kernel_thinning")
    rc, out, _ = _info(capsys, "kt-after-mcmc")
    assert rc == 0
    data = tomllib.loads(out)  # the whole output parses: the claim is named in a comment only
    assert data["pipeline"]["name"] == "kt-after-mcmc"
    assert "# 'kt-after-mcmc' also names a claim: quadriga info kt-after-mcmc --kind claim" in out
    assert max(len(line) for line in out.splitlines() if line.startswith("#")) <= 80
    rc, out, _ = _info(capsys, "kt-after-mcmc", "--kind", "claim")
    assert rc == 0 and "[pipeline]" not in out


def test_a_name_of_another_kind_says_which_kind_it_is(capsys):
    rc, _, err = _info(capsys, "mala", "--kind", "learner")
    assert rc == 2
    assert "'mala' is registered as sampler, not as learner" in " ".join(err.split())
    assert "Did you mean 'mala'" not in err
