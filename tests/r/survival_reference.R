#!/usr/bin/env Rscript
# Reference values from R's `survival` package for tests/test_km.py.
#
# Regenerate from the repository root (Debian 12: apt-get install r-base-core r-cran-survival;
# written with R 4.2.2, survival 3.5-3):
#   Rscript tests/r/survival_reference.R [resources/kidney/kidney.csv [tests/data]]
#
# Every number is written with 17 significant digits so that the Python side can
# compare at ~1e-12 instead of at write.csv's default 15 digits.
suppressPackageStartupMessages(library(survival))

args <- commandArgs(trailingOnly = TRUE)
kidney_path <- if (length(args) >= 1) args[[1]] else "resources/kidney/kidney.csv"
out_dir <- if (length(args) >= 2) args[[2]] else "tests/data"
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)

fmt <- function(df) {
  for (nm in names(df)) {
    if (is.double(df[[nm]])) df[[nm]] <- sprintf("%.17g", df[[nm]])
  }
  df
}
write_ref <- function(df, name) {
  write.csv(fmt(df), file.path(out_dir, name), row.names = FALSE, quote = TRUE)
}

# One survfit curve (a stratum or the pooled data) as a long table.
curve_table <- function(time, status, label) {
  fit_log <- survfit(Surv(time, status) ~ 1, conf.type = "log")
  fit_ll <- survfit(Surv(time, status) ~ 1, conf.type = "log-log")
  data.frame(
    group = label, time = fit_log$time, n.risk = fit_log$n.risk,
    n.event = fit_log$n.event, n.censor = fit_log$n.censor, surv = fit_log$surv,
    std.err = fit_log$std.err, lower_log = fit_log$lower, upper_log = fit_log$upper,
    lower_loglog = fit_ll$lower, upper_loglog = fit_ll$upper,
    stringsAsFactors = FALSE
  )
}

# survfit's median (quantile.survfit: midpoint rule when S == 0.5 on an interval)
# with the CI from both the default "log" and the "log-log" confidence curves.
median_table <- function(time, status, label) {
  q_log <- quantile(survfit(Surv(time, status) ~ 1, conf.type = "log"), probs = 0.5)
  q_ll <- quantile(survfit(Surv(time, status) ~ 1, conf.type = "log-log"), probs = 0.5)
  data.frame(
    group = label, median = unname(q_log$quantile),
    lower_log = unname(q_log$lower), upper_log = unname(q_log$upper),
    lower_loglog = unname(q_ll$lower), upper_loglog = unname(q_ll$upper),
    stringsAsFactors = FALSE
  )
}

pairwise_survdiff <- function(time, status, group) {
  labels <- sort(unique(as.character(group)))
  rows <- list()
  for (pair in combn(labels, 2, simplify = FALSE)) {
    keep <- group %in% pair
    sd <- survdiff(Surv(time[keep], status[keep]) ~ as.character(group[keep]))
    df <- length(sd$n) - 1
    rows[[length(rows) + 1]] <- data.frame(
      group_a = pair[[1]], group_b = pair[[2]], chisq = sd$chisq,
      p = pchisq(sd$chisq, df = df, lower.tail = FALSE), stringsAsFactors = FALSE
    )
  }
  do.call(rbind, rows)
}

per_group <- function(fun, time, status, group) {
  labels <- sort(unique(as.character(group)))
  parts <- lapply(labels, function(g) fun(time[group == g], status[group == g], g))
  do.call(rbind, c(parts, list(fun(time, status, "overall"))))
}

# --- kidney: grouped by disease, time in 30-day months (as in the RRR paper) ---
kidney <- read.csv(kidney_path, stringsAsFactors = FALSE)
k_time <- kidney$time / 30
k_status <- kidney$status
k_group <- kidney$disease
write_ref(per_group(curve_table, k_time, k_status, k_group), "kidney_survfit.csv")
write_ref(per_group(median_table, k_time, k_status, k_group), "kidney_median_r.csv")
write_ref(pairwise_survdiff(k_time, k_status, k_group), "kidney_survdiff.csv")

# --- small synthetic data with heavy ties (within and across groups, and events
# tied with censorings) for the log-rank tie handling ---
set.seed(20240611)
n_per <- c(A = 14, B = 11, C = 9)
ties <- data.frame(
  group = rep(names(n_per), times = n_per),
  time = c(
    sample(1:8, n_per[["A"]], replace = TRUE),
    sample(2:10, n_per[["B"]], replace = TRUE),
    sample(1:6, n_per[["C"]], replace = TRUE)
  ),
  event = rbinom(sum(n_per), 1, 0.7),
  stringsAsFactors = FALSE
)
ties$time <- as.numeric(ties$time)
write_ref(ties, "ties_data.csv")
write_ref(pairwise_survdiff(ties$time, ties$event, ties$group), "ties_survdiff.csv")
write_ref(per_group(curve_table, ties$time, ties$event, ties$group), "ties_survfit.csv")

# --- a sample whose KM equals exactly 0.5 on an interval: survfit reports the
# midpoint of that interval, lifelines the interval's left end ---
half <- data.frame(time = c(1, 2, 3, 4, 5, 6), event = c(1, 1, 1, 0, 1, 1))
write_ref(half, "median_tie_data.csv")
write_ref(median_table(half$time, half$event, "all"), "median_tie_r.csv")

cat(sprintf("R %s, survival %s: wrote references to %s\n",
            getRversion(), as.character(packageVersion("survival")), out_dir))
