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


# ---------------------------------------------------------------- what spreadsheets leave


def test_a_workbook_in_place_of_a_csv_is_named_as_one(tmp_path):
    """An .xlsx is a zip archive: parsed as CSV it fails with a tokenizer error naming
    neither cause nor fix. Its leading bytes say what it is (and a .csv name is no
    disguise); a zipped CSV named .zip is read as pandas reads it."""
    import zipfile

    for name in ("cohort.xlsx", "cohort.csv"):
        with zipfile.ZipFile(tmp_path / name, "w") as book:
            book.writestr("[Content_Types].xml", "<Types/>")
            book.writestr("xl/workbook.xml", "<workbook/>")
        with pytest.raises(ValueError, match=r"is a zip archive \(an Excel \.xlsx.*export the "
                                             r"sheet as CSV") as info:
            read_csv_checked(tmp_path / name)
        assert str(tmp_path / name) in str(info.value)
    (tmp_path / "old.xls").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504))
    with pytest.raises(ValueError, match=r"old.xls: is an Excel 97-2003 .xls workbook"):
        read_csv_checked(tmp_path / "old.xls")
    with zipfile.ZipFile(tmp_path / "zipped.zip", "w") as archive:
        archive.writestr("cohort.csv", GOOD)
    assert len(load(tmp_path / "zipped.zip")) == 4


def test_a_column_name_twice_in_the_header_is_refused(tmp_path):
    """pandas renames the second 'event' to 'event.1', so the key 'event' would silently
    read the first of two columns that may disagree."""
    path = write(tmp_path, "id,group,time,event,event\n1,A,1,1,0\n2,B,2,0,1\n")
    with pytest.raises(ValueError, match=r"column name\(s\) \['event'\] appear more than once"
                                         r" in the header") as info:
        read_csv_checked(path)
    assert str(path) in str(info.value)
    # trailing unnamed columns (a spreadsheet's empty ones) are not names given twice
    assert len(load(write(tmp_path, GOOD.replace("\n", ",,\n")))) == 4
    # a column whose name only looks like pandas' renaming is no repetition
    assert list(read_csv_checked(write(tmp_path, GOOD.replace("id,", "event.1,"))).columns) == [
        "event.1", "group", "time", "event"]


def test_rows_with_every_field_blank_are_named_by_row(tmp_path):
    """A spreadsheet exports formatted empty rows as ',,,': they are named by row number,
    not reported as missing values of id 'nan'."""
    path = write(tmp_path, GOOD + ",,,\n,,,\n")
    with pytest.raises(ValueError, match=r"2 row\(s\) have every field blank \(rows \[5, 6\], "
                                         r"counting from 1 after the header\)"):
        read_csv_checked(path)
    # a blank line (no separators) is no row at all, as pandas reads it
    assert len(load(write(tmp_path, GOOD + "\n\n"))) == 4


def test_a_byte_order_mark_is_read_as_utf8(tmp_path):
    """Excel's "CSV UTF-8" starts with a byte-order mark; the first column keeps its name."""
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbf" + GOOD.encode())
    assert list(read_csv_checked(path).columns) == ["id", "group", "time", "event"]


@pytest.mark.parametrize("date", ["2021-03-15", "15/03/2021", "2021-03-15 10:30"])
def test_dates_in_the_time_column_get_a_hint(tmp_path, date):
    path = write(tmp_path, f"id,group,time,event\n1,A,{date},1\n2,B,3,0\n")
    with pytest.raises(ValueError, match=r"column 'time' must be numeric.*looks like a date: "
                                         r"the time column holds each person's follow-up "
                                         r"duration"):
        load(path)
    # a word is not a date: no hint
    with pytest.raises(ValueError) as info:
        load(write(tmp_path, "id,group,time,event\n1,A,soon,1\n2,B,3,0\n"))
    assert "looks like a date" not in str(info.value)
