"""One entry per mechanism: study, privacy unit, words and audit come from the registry.

The README's "add a mechanism" recipe registers one entry; everything else (the privacy
claims, the legends, the rrr release list) reads it. A registered mechanism reaches the
audit's claims, an unknown one is named in the error, and an entry of another study
cannot be shadowed.
"""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dprepro.audit.claims import privacy_claims
from dprepro.claims.registry import CLAIMS
from dprepro.mechanisms.identity import IDENTITIES, identities, identity, mechanism_name
from dprepro.mechanisms.registry import (
    MECHANISMS,
    IndicatorMechanism,
    get_mechanism,
    register,
)
from dprepro.runtime.code_version import library_modules
from dprepro.studies.rrr_survival import plan as rrr_plan
from dprepro.studies.rrr_survival.releases import release_mechanism

ROOT = Path(__file__).resolve().parents[1]


def test_a_registered_mechanism_is_one_entry_naming_its_study_unit_and_words(toy):
    entry = identity(toy.release_name)
    assert entry is identity(toy.name)
    assert (entry.study, entry.privacy_unit, entry.local, entry.audited) == (
        "ldp_indicators", "individual", True, True)
    # the project's own mechanism: its privacy claim's origin is "beyond"
    assert entry.origin == "beyond" and entry.source.startswith("beyond the paper")
    assert mechanism_name(toy.release_name) == "Toy wide laplace"
    assert mechanism_name(f"{toy.release_name}_scale0.5") == "Toy wide laplace (noise scale × 0.5)"
    # a mechanism of ldp_indicators never joins another study's release list
    assert toy.release_name not in rrr_plan.MECHANISMS


def test_the_entry_goes_with_the_mechanism():
    toy = register(IndicatorMechanism(name="gone_soon", function=lambda d, *, alpha, rng: d,
                                      description="x"))
    from dprepro.mechanisms.registry import unregister

    unregister(toy.name)
    with pytest.raises(KeyError, match="'gone_soon' has no entry"):
        identity("gone_soon")
    assert "gone_soon" not in IDENTITIES and "gone_soon" not in MECHANISMS


@pytest.mark.parametrize("name", ["rrr", "lnte", "original", "ssp"])
def test_an_indicator_mechanism_cannot_take_another_studys_name(name):
    before = (dict(IDENTITIES), dict(MECHANISMS))
    with pytest.raises(ValueError, match=f"'{name}'.*already taken"):
        register(IndicatorMechanism(name=name, function=lambda d, *, alpha, rng: d,
                                    description="x"))
    assert (dict(IDENTITIES), dict(MECHANISMS)) == before
    assert identity(name).study != "ldp_indicators"


def test_each_rrr_entry_builds_the_mechanism_it_names():
    """The release list and the builders are the entries': each object built from an
    entry states that entry's name in its privacy record (the tables' column)."""
    assert rrr_plan.MECHANISMS[0] == "original"
    for name in rrr_plan.MECHANISMS[1:]:
        entry = identity(name)
        calibration = "grid=5,rows=1" if name.startswith("lnte_grid") else "exact"
        epsilon = None if not entry.private else 1.0
        built = release_mechanism(name, epsilon=epsilon, labels=("a", "b", "c"),
                                  calibration=calibration)
        assert built.privacy_record().mechanism == name
        assert (name in rrr_plan.NO_EPSILON) == (not entry.private)
    with pytest.raises(ValueError, match="unknown mechanism 'laplace_indicators'"):
        release_mechanism("laplace_indicators", epsilon=1.0, labels=(), calibration="")


def test_every_audited_entry_is_a_privacy_claim_with_its_source():
    privacy = [d for d in CLAIMS.declarations(group="privacy") if ".privacy.pipeline." not in d.id]
    assert [d.id.split(".")[2] for d in privacy] == [e.name for e in identities(audited=True)]
    for declaration in privacy:
        entry = identity(declaration.id.split(".")[2])
        assert (declaration.study, declaration.source, declaration.origin) == (
            entry.study, entry.source, entry.origin)


def test_audit_rows_of_a_mechanism_registered_later_are_named(toy):
    """A mechanism registered after the claims were declared (not in registry.py) has no
    privacy claim: the audit's claims job stops and says where to register it."""
    audit = pd.DataFrame({
        "mechanism": [toy.release_name], "variant": ["as run"], "role": ["published"],
        "claimed_epsilon": [0.2], "true_epsilon": [0.1],
        "empirical_epsilon_lower_bound": [0.05], "level": [1e-9], "draws": [1000]})
    with pytest.raises(ValueError, match=rf"\['{toy.release_name}'\] have no privacy claim.*"
                                         r"dprepro\.mechanisms\.registry"):
        privacy_claims(audit)


def test_adding_a_mechanism_on_delta_reruns_no_rrr_or_repr_script():
    """Step scripts rerun when a library module they import changes: the registry, where
    a mechanism on δ is added, must reach the ldp and audit scripts only."""
    reach = sorted(script.stem for script in (ROOT / "scripts").glob("*.py")
                   if ROOT / "scripts/dprepro/mechanisms/registry.py" in
                   library_modules(script, ROOT / "scripts" / "dprepro"))
    assert reach and all(name.startswith(("ldp_", "privacy_audit", "audit_"))
                         for name in reach), reach
    assert {"ldp_simulate", "privacy_audit", "audit_claims"} <= set(reach)


def test_the_mechanism_the_recipe_adds_is_the_function_it_registers():
    """The README's example (Z = δ + Laplace(0, 2/α)) is (α/2)-LDP: its draws have the
    scale 2/α, and its entry says so."""
    from helpers.recipes import code_blocks, section

    (block,) = code_blocks(section("README.md", "add a mechanism?"), "python")
    namespace = {}
    exec(compile("import numpy as np\nfrom dprepro.mechanisms.registry import "
                 "indicator_mechanism\n" + block.replace('"my_mechanism"', '"readme_example"'),
                 "README.md", "exec"), namespace)
    from dprepro.mechanisms.registry import unregister

    try:
        mechanism = get_mechanism("readme_example")
        noise = mechanism.privatize(np.zeros(400_000), alpha=0.5, rng=np.random.default_rng(1))
        # Laplace(0, b): E|Z| = b = 2/α = 4 (standard error 4/sqrt(n) = 0.0063)
        assert abs(np.abs(noise).mean() - 4.0) < 6.1 * 4 / np.sqrt(noise.size)
        assert mechanism.true_epsilon(0.5) == 0.25 and mechanism.noise_variance(0.5) == 32
        assert identity("readme_example").audited
    finally:
        unregister("readme_example")
