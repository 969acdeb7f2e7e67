"""The one privacy policy (dprepro.runtime.privacy_record): record columns, sidecar entries, budget
split.
"""

import dataclasses
import json
import math

import numpy as np
import pytest

from dprepro.runtime.privacy_record import (
    BudgetSplit,
    PrivacyRecord,
    budget_split,
    non_private,
    provenance_of,
)


def rrr_record(**changes):
    fields = {"mechanism": "rrr", "release": True, "stated": 1.0,
              "true_epsilon": 1.0 + math.log(4), "privacy_unit": "patient",
              "note": "paper calibration", "extra": {"calibration": "paper", "k": 5}}
    return PrivacyRecord(**{**fields, **changes})


def test_columns_default_order_names_the_parameter_and_puts_extra_before_true_epsilon():
    columns = rrr_record().columns()
    assert list(columns) == ["mechanism", "epsilon", "calibration", "k", "true_epsilon",
                             "privacy_note"]
    assert columns["epsilon"] == 1.0
    assert columns["true_epsilon"] == pytest.approx(2.386294, abs=1e-6)  # 1 + ln 4


def test_alpha_records_use_an_alpha_column():
    record = PrivacyRecord(mechanism="laplace", release=True, parameter="alpha", stated=0.2,
                           true_epsilon=0.2, privacy_unit="individual")
    assert list(record.columns()) == ["mechanism", "alpha", "true_epsilon", "privacy_note"]
    assert "epsilon" not in record.columns()


def test_columns_with_an_order_select_and_order_including_the_unit():
    columns = rrr_record().columns(order=["privacy_unit", "epsilon", "mechanism"])
    assert columns == {"privacy_unit": "patient", "epsilon": 1.0, "mechanism": "rrr"}
    assert list(columns) == ["privacy_unit", "epsilon", "mechanism"]
    with pytest.raises(KeyError, match="alpha"):
        rrr_record().columns(order=["mechanism", "alpha"])


@pytest.mark.parametrize(("changes", "message"), [
    ({"parameter": "delta"}, "parameter must be 'epsilon' or 'alpha'"),
    ({"mechanism": ""}, "mechanism must be a non-empty string"),
    ({"stated": 0.0}, "stated epsilon must be > 0"),
    ({"stated": -1.0}, "stated epsilon must be > 0"),
])
def test_invalid_records_are_refused(changes, message):
    with pytest.raises(ValueError, match=message):
        rrr_record(**changes)


def test_records_are_immutable():
    with pytest.raises(dataclasses.FrozenInstanceError):
        rrr_record().stated = 3.0


def test_provenance_is_json_safe_with_inf_as_text_and_nan_as_null():
    record = rrr_record(true_epsilon=math.inf, extra={"bound": math.inf, "share": math.nan,
                                                      "calibration": "paper"})
    entry = record.provenance()
    assert entry["true_epsilon"] == "inf"
    assert entry["bound"] == "inf" and entry["share"] is None
    assert entry["calibration"] == "paper"
    assert entry["release"] is True and entry["parameter"] == "epsilon"
    json.dumps(entry, allow_nan=False)  # strict JSON: would raise on a bare inf or nan


def test_references_state_no_parameter_and_no_unit():
    reference = non_private("original KM")
    assert reference.release is False and reference.mechanism == "non_private"
    assert math.isnan(reference.stated) and math.isnan(reference.true_epsilon)
    entry = reference.provenance()
    assert entry["epsilon"] is None and entry["true_epsilon"] is None
    assert "privacy_unit" not in entry and entry["note"] == "original KM"
    assert math.isnan(reference.columns()["epsilon"])


def test_provenance_of_a_mixed_table_keeps_distinct_records_in_order():
    original, one, two = non_private("original"), rrr_record(), rrr_record(stated=2.0)
    entry = provenance_of([original, one, one, two, original])
    assert entry["release"] is True
    assert entry["records"] == [original.provenance(), one.provenance(), two.provenance()]
    assert provenance_of([original])["release"] is False
    assert provenance_of(one) == one.provenance()
    assert provenance_of({"release": False}) == {"release": False}
    assert provenance_of(None) is None
    with pytest.raises(TypeError, match="PrivacyRecord"):
        provenance_of([one, {"release": True}])


def test_the_statement_gives_the_stated_and_the_true_level_and_whose_data():
    from dprepro.mechanisms.rrr import RevisedRandomizedResponse

    # the paper's calibration of RRR guarantees ε + ln(k - 1), not ε (docs/design.md §4)
    paper = RevisedRandomizedResponse(epsilon=2, categories="abcd").privacy_record(
        privacy_unit="patient")
    assert paper.statement().startswith(
        f"rrr: stated ε = 2, true ε = {2 + math.log(3):.4g} per patient (RRR on the group label")
    exact = RevisedRandomizedResponse(epsilon=2, categories="abcd", calibration="exact")
    assert exact.privacy_record().statement().startswith("rrr: stated ε = 2, true ε = 2 per record")
    laplace = PrivacyRecord(mechanism="laplace", release=True, parameter="alpha", stated=0.5,
                            true_epsilon=math.inf, privacy_unit="individual")
    assert laplace.statement() == "laplace: stated α = 0.5, true ε = inf per individual"
    assert rrr_record(true_epsilon=math.nan, note="").statement() == \
        "rrr: stated ε = 1, true ε = unknown per patient"
    assert non_private("the original labels").statement() == \
        "non_private: no privacy release (the original labels)"

def test_budget_split_halves_epsilon_with_feature_selection():
    split = budget_split(1.5, feature_selection=True)
    assert split == BudgetSplit(total=1.5, selection=0.75, learner=0.75)
    assert split.selection + split.learner == split.total  # basic composition spends ε
    assert split.note.startswith("selection 0.75 ") and "learner 0.75" in split.note


def test_budget_split_without_selection_gives_the_learner_everything():
    split = budget_split(2, feature_selection=False)
    assert split.learner == 2.0 and split.total == 2.0
    assert math.isnan(split.selection)
    assert split.note == ""


def test_budget_split_accepts_numpy_numbers_and_infinity():
    assert budget_split(np.float64(1.0), feature_selection=True).learner == 0.5
    assert budget_split(np.int64(4), feature_selection=True).selection == 2.0
    inf = budget_split(math.inf, feature_selection=True)
    assert inf.learner == math.inf and inf.selection == math.inf


@pytest.mark.parametrize(("epsilon", "error"), [
    (0, ValueError), (-1.0, ValueError), (math.nan, ValueError),
    (True, TypeError), ("1", TypeError), (None, TypeError),
])
def test_budget_split_refuses_bad_epsilons(epsilon, error):
    with pytest.raises(error, match="epsilon"):
        budget_split(epsilon, feature_selection=True)
