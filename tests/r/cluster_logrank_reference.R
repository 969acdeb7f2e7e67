#!/usr/bin/env Rscript
# Reference values for tests/test_cluster_logrank.py: the robust score test of
# coxph(Surv(time, status) ~ x, cluster = id, ties = "breslow") (R's "Robust"
# line, fit$rscore) and survdiff's log-rank, for every pair of kidney groups.
#
# Regenerate from the repository root (Debian 12: apt-get install r-base-core r-cran-survival;
# written with R 4.2.2, survival 3.5-3):
#   Rscript tests/r/cluster_logrank_reference.R [resources/kidney/kidney.csv [tests/data]]
suppressPackageStartupMessages(library(survival))

args <- commandArgs(trailingOnly = TRUE)
kidney_path <- if (length(args) >= 1) args[[1]] else "resources/kidney/kidney.csv"
out_dir <- if (length(args) >= 2) args[[2]] else "tests/data"
kidney <- read.csv(kidney_path, stringsAsFactors = FALSE)

# two groupings: the real disease, and a label fixed per patient by its id
# (id %% 4), so that both rows of a patient share a group in either case
levels <- c("AN", "GN", "Other", "PKD")
groupings <- list(disease = kidney$disease, by_id = levels[(kidney$id %% 4) + 1])

rows <- list()
for (case in names(groupings)) {
  g <- groupings[[case]]
  for (pair in combn(levels, 2, simplify = FALSE)) {
    keep <- g %in% pair
    d <- kidney[keep, ]
    x <- as.numeric(g[keep] == pair[2])
    fit <- coxph(Surv(time, status) ~ x, data = d, cluster = id, ties = "breslow")
    lr <- survdiff(Surv(time, status) ~ x, data = d)
    rows[[length(rows) + 1]] <- data.frame(
      case = case, group_a = pair[1], group_b = pair[2],
      robust_statistic = sprintf("%.17g", fit$rscore),
      score_statistic = sprintf("%.17g", fit$score),
      logrank_statistic = sprintf("%.17g", lr$chisq),
      stringsAsFactors = FALSE
    )
  }
}
write.csv(do.call(rbind, rows), file.path(out_dir, "r_cluster_logrank.csv"),
          row.names = FALSE, quote = TRUE)
