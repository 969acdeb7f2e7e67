"""Study ldp_indicators: a local-DP failure indicator in conditional (Beran) survival estimation."""
