"""cBioPortal clinical data through a local HTTP server with synthetic fixtures."""

from __future__ import annotations

import copy
import hashlib
import json
import logging
from pathlib import Path

import pandas as pd
import pytest

from dprepro.data import cbioportal as cb
from dprepro.data.download import DownloadError
from helpers.httpserver import Response, closed_port_url, serve

FIXTURES = Path(__file__).parent / "fixtures" / "cbioportal"
STUDY = "mds_iwg_2022"
PATIENT_RAW = (FIXTURES / f"{STUDY}_patient.json").read_bytes()
SAMPLE_RAW = (FIXTURES / f"{STUDY}_sample.json").read_bytes()
PATIENT_PATH = f"/api/studies/{STUDY}/clinical-data?clinicalDataType=PATIENT&projection=DETAILED"
SAMPLE_PATH = f"/api/studies/{STUDY}/clinical-data?clinicalDataType=SAMPLE&projection=DETAILED"


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    # A proxy from the environment would intercept requests to 127.0.0.1.
    for var in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)


def no_sleep(_seconds: float) -> None:
    pass


def patient_records():
    return json.loads(PATIENT_RAW)


def sample_records():
    return json.loads(SAMPLE_RAW)


def json_response(raw: bytes, **kw) -> Response:
    return Response(body=raw, content_type="application/json", **kw)


# ---------------------------------------------------------------- URL


def test_clinical_data_url():
    assert cb.clinical_data_url("https://www.cbioportal.org/", STUDY, "patient") == (
        "https://www.cbioportal.org/api/studies/mds_iwg_2022/clinical-data"
        "?clinicalDataType=PATIENT&projection=DETAILED"
    )
    assert cb.clinical_data_url("http://mirror.example/cbio", STUDY, "SAMPLE").startswith(
        "http://mirror.example/cbio/api/studies/mds_iwg_2022/clinical-data?clinicalDataType=SAMPLE"
    )


@pytest.mark.parametrize(
    "base, match",
    [
        ("www.cbioportal.org", "http"),
        ("ftp://www.cbioportal.org", "http"),
        ("https://", "http"),
        ("https://www.cbioportal.org/api", "without '/api'"),
        ("https://www.cbioportal.org/?x=1", "query"),
    ],
)
def test_clinical_data_url_rejects_bad_base(base, match):
    with pytest.raises(ValueError, match=match):
        cb.clinical_data_url(base, STUDY, "PATIENT")


def test_clinical_data_url_rejects_bad_type_and_study():
    with pytest.raises(ValueError, match="data_type"):
        cb.clinical_data_url(cb.DEFAULT_BASE, STUDY, "MUTATION")
    with pytest.raises(ValueError, match="study_id"):
        cb.clinical_data_url(cb.DEFAULT_BASE, " ", "PATIENT")


# ---------------------------------------------------------------- fetch


def test_fetch_clinical_keeps_raw_and_writes_manifest(tmp_path):
    routes = {PATIENT_PATH: json_response(PATIENT_RAW), SAMPLE_PATH: json_response(SAMPLE_RAW)}
    with serve(routes) as srv:
        got = cb.fetch_clinical(srv.base_url + "/", STUDY, tmp_path / "raw", sleep=no_sleep)
        assert [r.path for r in srv.requests] == [PATIENT_PATH, SAMPLE_PATH]
        assert srv.requests[0].headers["Accept"] == "application/json"
    raw_dir = tmp_path / "raw"
    assert (raw_dir / f"{STUDY}_patient.json").read_bytes() == PATIENT_RAW
    assert (raw_dir / f"{STUDY}_sample.json").read_bytes() == SAMPLE_RAW
    assert got.patient_records == patient_records()
    assert got.sample_records == sample_records()
    manifest = json.loads((raw_dir / "manifest.json").read_text())
    assert manifest == got.manifest
    assert manifest["study_id"] == STUDY and "ODbL" in manifest["licence"]
    for kind, raw in (("PATIENT", PATIENT_RAW), ("SAMPLE", SAMPLE_RAW)):
        entry = manifest["files"][kind]
        assert entry["sha256"] == hashlib.sha256(raw).hexdigest() == got.records[kind].sha256
        assert entry["bytes"] == len(raw)
        assert entry["url"] == srv.base_url + (PATIENT_PATH if kind == "PATIENT" else SAMPLE_PATH)
        assert entry["retrieved_at"].endswith("Z")
        assert entry["attempts"] == 1
    assert manifest["files"]["PATIENT"]["n_records"] == 48
    assert sorted(p.name for p in raw_dir.iterdir()) == [
        "manifest.json",
        f"{STUDY}_patient.json",
        f"{STUDY}_sample.json",
    ]


def test_fetch_clinical_retries_truncated_json_and_server_errors(tmp_path):
    routes = {
        # Content-Length matches the cut body: only JSON parsing notices.
        PATIENT_PATH: [json_response(PATIENT_RAW[:-40]), json_response(PATIENT_RAW)],
        SAMPLE_PATH: [
            Response(status=500),
            Response(status=502),
            json_response(SAMPLE_RAW, truncate_to=200),
            json_response(SAMPLE_RAW),
        ],
    }
    with serve(routes) as srv:
        got = cb.fetch_clinical(srv.base_url, STUDY, tmp_path, sleep=no_sleep)
    assert got.records["PATIENT"].attempts == 2
    assert got.records["SAMPLE"].attempts == 4
    assert (tmp_path / f"{STUDY}_patient.json").read_bytes() == PATIENT_RAW
    assert (tmp_path / f"{STUDY}_sample.json").read_bytes() == SAMPLE_RAW
    assert not [p for p in tmp_path.iterdir() if ".part-" in p.name]


def test_fetch_clinical_unknown_study_is_not_retried(tmp_path):
    body = b'{"message":"Study not_a_study is not found"}'
    with serve({}) as srv:
        with pytest.raises(DownloadError, match="HTTP 404"):
            cb.fetch_clinical(srv.base_url, "not_a_study", tmp_path, sleep=no_sleep)
        assert len(srv.requests) == 1
    routes = {"/api/studies/x/clinical-data": Response(status=404, body=body)}
    with serve(routes) as srv:
        with pytest.raises(DownloadError, match="is not found"):
            cb.fetch_clinical(srv.base_url, "x", tmp_path, sleep=no_sleep)
    assert not (tmp_path / "manifest.json").exists()


def test_fetch_clinical_writes_nothing_when_one_level_fails(tmp_path):
    routes = {PATIENT_PATH: json_response(PATIENT_RAW), SAMPLE_PATH: Response(status=403)}
    with serve(routes) as srv:
        with pytest.raises(DownloadError, match="HTTP 403"):
            cb.fetch_clinical(srv.base_url, STUDY, tmp_path / "raw", sleep=no_sleep)
    assert list((tmp_path / "raw").iterdir()) == []


def test_fetch_clinical_offline(tmp_path):
    hint = "use config/config.yaml (embedded default) or place the files in data/raw/cbioportal"
    base = closed_port_url("").rstrip("/")
    with pytest.raises(DownloadError) as info:
        cb.fetch_clinical(base, STUDY, tmp_path, retries=1, sleep=no_sleep, offline_hint=hint)
    assert hint in str(info.value) and "could not reach" in str(info.value)


def test_fetch_clinical_rejects_non_list_json(tmp_path):
    routes = {PATIENT_PATH: json_response(b'{"message": "maintenance"}')}
    with serve(routes) as srv:
        with pytest.raises(ValueError, match="maintenance"):
            cb.fetch_clinical(srv.base_url, STUDY, tmp_path, sleep=no_sleep)


# ---------------------------------------------------------------- long -> wide


def test_long_to_wide_patients():
    wide = cb.clinical_long_to_wide(patient_records(), "patientId")
    assert list(wide.columns) == ["patientId", "AGE", "OS_MONTHS", "OS_STATUS", "SEX"]
    assert len(wide) == 12
    assert wide["patientId"].tolist() == [f"P-{i:04d}" for i in range(1, 13)]
    row = wide.set_index("patientId").loc["P-0004"]
    assert row["OS_MONTHS"] == "60.47"  # values stay strings, as served
    assert row["OS_STATUS"] == "0:LIVING"


def test_long_to_wide_samples_keeps_patient_link():
    wide = cb.clinical_long_to_wide(sample_records(), "sampleId")
    assert list(wide.columns[:2]) == ["sampleId", "patientId"]
    assert set(wide.columns[2:]) == {"BM_BLAST", "CANCER_TYPE", "IPSSR", "IPSSR_SCORE"}
    assert len(wide) == 12
    s10 = wide.set_index("sampleId").loc["S-0010"]
    assert s10["patientId"] == "P-0010"
    assert pd.isna(s10["IPSSR"])  # absent record -> NaN


def test_long_to_wide_names_missing_key():
    recs = patient_records()
    del recs[5]["clinicalAttributeId"]
    with pytest.raises(ValueError, match=r"record 5 lacks key 'clinicalAttributeId'"):
        cb.clinical_long_to_wide(recs, "patientId")
    with pytest.raises(ValueError, match="lacks key 'sampleId'"):
        cb.clinical_long_to_wide(patient_records(), "sampleId")
    with pytest.raises(ValueError, match="list of objects"):
        cb.clinical_long_to_wide({"message": "x"}, "patientId")
    with pytest.raises(ValueError, match="JSON object"):
        cb.clinical_long_to_wide(["x"], "patientId")
    with pytest.raises(ValueError, match="empty"):
        cb.clinical_long_to_wide([], "patientId")


def test_long_to_wide_conflicting_duplicates():
    recs = patient_records()
    assert cb.clinical_long_to_wide(recs + [copy.deepcopy(recs[0])], "patientId").shape == (12, 5)
    clash = copy.deepcopy(recs[0])
    clash["value"] = "999"
    with pytest.raises(ValueError, match="several different values"):
        cb.clinical_long_to_wide(recs + [clash], "patientId")


# ---------------------------------------------------------------- survival table


def wide_tables(patients=None, samples=None):
    return (
        cb.clinical_long_to_wide(patients or patient_records(), "patientId"),
        cb.clinical_long_to_wide(samples or sample_records(), "sampleId"),
    )


def test_ipssr_survival_table_from_fixtures():
    table, summary = cb.ipssr_survival_table(*wide_tables())
    assert list(table.columns) == ["patient_id", "group", "time", "event"]
    assert len(table) == 11
    assert "P-0010" not in set(table["patient_id"])  # the patient without IPSSR
    assert table["patient_id"].is_monotonic_increasing
    assert table["time"].dtype == float and table["event"].dtype.kind == "i"
    row = table.set_index("patient_id")
    assert row.loc["P-0002"].tolist() == ["Low", 52.1, 1]
    assert row.loc["P-0001"].tolist() == ["Very-Low", 86.3, 0]
    assert row.loc["P-0012", "time"] == 0.0  # a zero time is valid, not missing
    assert summary["n_patients"] == 12
    assert summary["n_kept"] == 11
    assert summary["n_dropped"] == 1
    assert summary["n_dropped_missing_group"] == 1
    assert summary["n_dropped_missing_time"] == 0
    assert summary["n_events"] == int(table["event"].sum()) == 6
    assert summary["group_counts"] == {"High": 2, "Int": 2, "Low": 3, "Very-High": 2, "Very-Low": 2}
    assert summary["censored_fraction"] == pytest.approx(5 / 11)
    assert summary["n_patients_multiple_samples"] == 0
    json.dumps(summary)  # provenance-ready


def test_renamed_group_attribute_is_diagnosed():
    samples = sample_records()
    for rec in samples:
        if rec["clinicalAttributeId"] == "IPSSR":
            rec["clinicalAttributeId"] = "IPSS_R"
            rec["clinicalAttribute"]["clinicalAttributeId"] = "IPSS_R"
    patients, samples_wide = wide_tables(samples=samples)
    with pytest.raises(ValueError) as info:
        cb.ipssr_survival_table(patients, samples_wide)
    msg = str(info.value)
    assert "'IPSSR'" in msg and "SAMPLE" in msg
    assert "IPSS_R" in msg.split("similar attributes present:")[1]
    assert "group_attribute" in msg
    # ... and the new name can be passed on.
    table, _ = cb.ipssr_survival_table(patients, samples_wide, group_attribute="IPSS_R")
    assert len(table) == 11


def test_missing_survival_attributes_are_named():
    patients = [r for r in patient_records() if r["clinicalAttributeId"] != "OS_STATUS"]
    with pytest.raises(ValueError, match="'OS_STATUS' not found in the PATIENT"):
        cb.ipssr_survival_table(*wide_tables(patients=patients))
    patients = patient_records()
    for rec in patients:
        if rec["clinicalAttributeId"] == "OS_MONTHS":
            rec["clinicalAttributeId"] = "OS_MONTH"
    with pytest.raises(ValueError, match="OS_MONTHS.*similar attributes present: OS_MONTH"):
        cb.ipssr_survival_table(*wide_tables(patients=patients))


def test_attribute_at_the_other_level_is_used_and_logged(caplog):
    patients, samples = wide_tables()
    expected, _ = cb.ipssr_survival_table(patients, samples)
    moved = patients.merge(samples[["patientId", "IPSSR"]], on="patientId", how="left")
    with caplog.at_level("WARNING"):
        table, summary = cb.ipssr_survival_table(moved, samples.drop(columns="IPSSR"))
    assert "'IPSSR' is not in the SAMPLE data but in the PATIENT data" in caplog.text
    assert summary["clinical_types"]["group"] == "PATIENT"
    pd.testing.assert_frame_equal(table, expected)
    # configured at its real level: no warning
    caplog.clear()
    with caplog.at_level("WARNING"):
        cb.ipssr_survival_table(moved, samples.drop(columns="IPSSR"), group_type="PATIENT")
    assert "is not in the" not in caplog.text
    with pytest.raises(ValueError, match="'IPSSR' not found in the SAMPLE clinical data"):
        cb.ipssr_survival_table(patients, samples.drop(columns="IPSSR"))


def test_missing_tokens_and_types_from_config():
    patients, samples = wide_tables()
    samples.loc[samples["patientId"] == "P-0002", "IPSSR"] = "Unknown"
    table, summary = cb.ipssr_survival_table(patients, samples)
    assert "P-0002" in set(table["patient_id"])  # "Unknown" is a category by default
    table, summary = cb.ipssr_survival_table(patients, samples,
                                             missing_values=["", "NA", "Unknown"])
    assert "P-0002" not in set(table["patient_id"])
    assert summary["n_dropped_missing_group"] == 2
    with pytest.raises(ValueError, match="time_type must be one of"):
        cb.ipssr_survival_table(patients, samples, time_type="patient")


def _patient(pid, months, status):
    recs = [
        {"patientId": pid, "studyId": STUDY, "clinicalAttributeId": "OS_MONTHS", "value": months}
    ]
    if status is not None:
        recs.append(
            {
                "patientId": pid,
                "studyId": STUDY,
                "clinicalAttributeId": "OS_STATUS",
                "value": status,
            }
        )
    return recs


def _sample(sid, pid, group):
    return [
        {
            "sampleId": sid,
            "patientId": pid,
            "studyId": STUDY,
            "clinicalAttributeId": "IPSSR",
            "value": group,
        }
    ]


def test_multiple_samples_missing_values_and_orphans(caplog):
    patients = (
        _patient("A", "10.5", "1:DECEASED")
        + _patient("B", "NA", "0:LIVING")
        + _patient("C", "7", None)
        + _patient("D", "3", "0:LIVING")
        + _patient("E", "-1", "1:DECEASED")
        + _patient("G", "12", "0:LIVING")
    )
    samples = (
        _sample("A-2", "A", "High")
        + _sample("A-1", "A", "Low")  # conflict: A-1 wins
        + _sample("B-1", "B", "Int")
        + _sample("C-1", "C", "Int")
        + _sample("D-1", "D", "NA")
        + _sample("E-1", "E", "Low")
        + _sample("F-1", "F", "Low")  # a sample whose patient has no survival
        + _sample("G-1", "G", "[Not Available]")
        + _sample("G-2", "G", "Very-Low")
    )
    with caplog.at_level(logging.INFO, logger="dprepro.data.cbioportal"):
        table, summary = cb.ipssr_survival_table(*wide_tables(patients, samples))
    assert table.to_dict("list") == {
        "patient_id": ["A", "G"],
        "group": ["Low", "Very-Low"],
        "time": [10.5, 12.0],
        "event": [1, 0],
    }
    assert summary["n_patients"] == 7
    assert summary["n_samples"] == 9
    assert summary["n_dropped"] == 5
    assert summary["n_dropped_missing_group"] == 1  # D
    assert summary["n_dropped_missing_time"] == 2  # B, F
    assert summary["n_dropped_missing_status"] == 2  # C, F
    assert summary["n_dropped_negative_time"] == 1  # E
    assert summary["n_patients_multiple_samples"] == 2  # A, G
    assert summary["n_patients_conflicting_group"] == 1
    assert summary["conflicting_group_patients"] == ["A"]
    assert "different IPSSR values" in caplog.text


def test_parse_os_status():
    assert cb.parse_os_status("1:DECEASED") == 1
    assert cb.parse_os_status("0:LIVING") == 0
    assert cb.parse_os_status(" 1: Dead ") == 1
    assert cb.parse_os_status(None) is None
    assert cb.parse_os_status(float("nan")) is None
    assert cb.parse_os_status("NA") is None
    with pytest.raises(ValueError, match="DECEASED"):
        cb.parse_os_status("DECEASED")


def test_unexpected_status_coding_is_an_error():
    patients = _patient("A", "5", "DEAD")
    with pytest.raises(ValueError, match="unrecognised survival status 'DEAD'"):
        cb.ipssr_survival_table(*wide_tables(patients, _sample("A-1", "A", "Low")))


def test_non_numeric_time_is_an_error():
    patients = _patient("A", "five", "0:LIVING")
    with pytest.raises(ValueError, match="OS_MONTHS has non-numeric values"):
        cb.ipssr_survival_table(*wide_tables(patients, _sample("A-1", "A", "Low")))
