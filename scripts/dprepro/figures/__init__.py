"""Figure style shared by every study: layout, footers and atomic saving."""
