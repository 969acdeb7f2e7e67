#!/usr/bin/env Rscript
# Reference values for tests/test_cox.py: coxph fits of a factor (treatment coding,
# first level as reference) plus numeric covariates, with Efron and Breslow ties, with
# and without cluster-robust variance, on two bundled R survival tables:
#   kidney:  Surv(time, status) ~ factor(disease) + age          (cluster = id: 2 rows/patient)
#   veteran: Surv(time, status) ~ factor(celltype) + karno + age (cluster = diagtime, a toy)
# and the factor alone (kidney_factor, veteran_factor: the level-sum kernel's designs).
# Both have tied event times.
#
# Regenerate from the repository root (written with R 4.2.2, survival 3.5-3):
#   Rscript tests/r/cox_reference.R
# It writes tests/data/cox_reference_r.csv, one row per (dataset, ties, cluster, term):
# coef, se (model-based, fit$naive.var when clustered), robust_se (NA without cluster),
# loglik (partial log-likelihood at the estimate) and loglik_null; 17 significant digits.
suppressPackageStartupMessages(library(survival))

kidney <- read.csv("resources/kidney/kidney.csv", stringsAsFactors = FALSE)
veteran <- read.csv("resources/r-survival/veteran.csv", stringsAsFactors = FALSE)
cases <- list(
  kidney = list(data = kidney, formula = Surv(time, status) ~ factor(disease) + age,
                cluster = "id"),
  veteran = list(data = veteran, formula = Surv(time, status) ~ factor(celltype) + karno + age,
                 cluster = "diagtime"),
  kidney_factor = list(data = kidney, formula = Surv(time, status) ~ factor(disease),
                       cluster = "id"),
  veteran_factor = list(data = veteran, formula = Surv(time, status) ~ factor(celltype),
                        cluster = "diagtime")
)

fmt <- function(x) sprintf("%.17g", x)
rows <- list()
for (name in names(cases)) {
  case <- cases[[name]]
  for (ties in c("efron", "breslow")) {
    for (clustered in c(FALSE, TRUE)) {
      d <- case$data
      if (clustered) {
        d$cl <- d[[case$cluster]]
        fit <- coxph(case$formula, data = d, ties = ties, cluster = cl,
                     control = coxph.control(eps = 1e-14, iter.max = 100, toler.chol = 1e-15))
        naive <- fit$naive.var
        robust <- sqrt(diag(fit$var))
      } else {
        fit <- coxph(case$formula, data = d, ties = ties,
                     control = coxph.control(eps = 1e-14, iter.max = 100, toler.chol = 1e-15))
        naive <- fit$var
        robust <- rep(NA_real_, length(coef(fit)))
      }
      rows[[length(rows) + 1]] <- data.frame(
        dataset = name, ties = ties,
        cluster = if (clustered) case$cluster else "",
        term = names(coef(fit)), coef = fmt(coef(fit)), se = fmt(sqrt(diag(naive))),
        robust_se = ifelse(is.na(robust), "NA", fmt(robust)),
        loglik = fmt(fit$loglik[2]), loglik_null = fmt(fit$loglik[1]),
        stringsAsFactors = FALSE
      )
    }
  }
}
out <- do.call(rbind, rows)
write.csv(out, "tests/data/cox_reference_r.csv", row.names = FALSE, quote = TRUE)
