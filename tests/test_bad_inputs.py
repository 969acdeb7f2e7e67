"""Bad input files give clear errors that name the file, the column or the value."""

import numpy as np
import pandas as pd
import pytest

from dprepro.data.cohorts import check_survival_frame, load_kidney, read_csv_checked
from dprepro.studies.rrr_survival.analysis import analyse_original


def write(tmp_path, text, name="cohort.csv", encoding="utf-8"):
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return path


def load(path):
    return check_survival_frame(read_csv_checked(path), source=str(path))


GOOD = "id,group,time,event\n1,A,1.5,1\n2,B,2.0,0\n3,A,3.0,1\n4,B,0.5,1\n"


def test_good_file_loads(tmp_path):
    frame = load(write(tmp_path, GOOD))
    assert list(frame.columns) == ["group", "time", "event"] and len(frame) == 4


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("id,group,duration,event\n1,A,1,1\n", r"missing column\(s\) \['time'\]"),
        ("id,grp,time,event\n1,A,1,1\n", r"missing column\(s\) \['group'\]"),
        ("id,group,time,event\n1,A,one,1\n", r"column 'time' must be numeric, got \['one'\]"),
        ("id,group,time,event\n1,A,-2,1\n", r"column 'time' must be finite and >= 0, got \[-2"),
        ("id,group,time,event\n1,A,,1\n",
         r"column 'time' has missing values \(rows \[1\], counting from 1"),
        ("id,group,time,event\n1,,1,1\n", r"column 'group' has missing values"),
        ("id,group,time,event\n1,A,1,2\n", r"column 'event' must be 0 or 1, got \[2\]"),
        ("id,group,time,event\n1,A,1,yes\n", r"column 'event' must be 0 or 1, got \['yes'\]"),
        ("id;group;time;event\n1;A;1;1\n", r"semicolon-delimited"),
        ("id\tgroup\ttime\tevent\n1\tA\t1\t1\n", r"tab-delimited"),
        ("id,group,time,event\n1,A,1,1\n1,B,2,0\n", r"duplicated values in column 'id': \[1\]"),
        ("", r"the file is empty"),
        ("id,group,time,event\n", r"no rows"),
    ],
)
def test_bad_csv_is_rejected_naming_file_and_problem(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(ValueError, match=message) as info:
        load(path)
    assert str(path) in str(info.value)


def test_wrong_encoding_is_named(tmp_path):
    path = write(tmp_path, GOOD.replace("A", "Ä"), encoding="utf-16")
    with pytest.raises(ValueError, match="not UTF-8 text") as info:
        load(path)
    assert str(path) in str(info.value)


def test_missing_file_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="nowhere.csv"):
        read_csv_checked(tmp_path / "nowhere.csv")


def test_kidney_with_renamed_column(tmp_path):
    path = write(tmp_path, "id,time,state,age,sex,disease,frail\n1,8,1,28,1,Other,2.3\n")
    with pytest.raises(ValueError, match=r"missing column\(s\) \['status'\]") as info:
        load_kidney(path)
    assert str(path) in str(info.value)


def cohort(groups, events):
    return pd.DataFrame({"group": groups, "time": np.arange(1.0, len(groups) + 1),
                         "event": events})


def test_a_label_no_one_has_is_kept_and_has_no_median():
    """The label set is public: a configured group without patients stays a label, with
    no median (NaN), rather than being dropped or given one."""
    out = analyse_original(cohort(["A", "A", "B", "B"], [1, 0, 1, 1]), labels=["A", "B", "C"],
                           grid=np.linspace(0, 2, 3))
    medians = out["medians"].set_index("group")
    assert list(medians.index) == ["A", "B", "C"]
    assert np.isnan(medians.loc["C", "median"]) and np.isfinite(medians.loc["B", "median"])


def test_comparisons_need_two_groups_with_patients():
    with pytest.raises(ValueError, match=r"two groups with patients; only \['A'\]"):
        analyse_original(cohort(["A", "A"], [1, 0]), labels=["A", "B"],
                         grid=np.linspace(0, 2, 3))


def test_single_group_cannot_be_compared():
    with pytest.raises(ValueError, match="at least two groups"):
        analyse_original(cohort(["A", "A"], [1, 0]), labels=["A"], grid=np.linspace(0, 2, 3))


def test_all_censored_is_rejected():
    with pytest.raises(ValueError, match="every observation is censored"):
        analyse_original(cohort(["A", "B", "A"], [0, 0, 0]), labels=["A", "B"],
                         grid=np.linspace(0, 3, 4))
