"""Claims: rows with an interval, a criterion and a verdict; the merged table and its figure."""
