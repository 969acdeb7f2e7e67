# Reference values of KernSmooth::dpik for tests/test_dpik.py.
#
# Run from the repository root:
#
#     Rscript tests/r/dpik_reference.R
#
# It writes
#   tests/data/dpik_reference_samples.csv.gz  long format: sample_id, value
#   tests/data/dpik_reference.csv             one row per (sample, settings) with dpik()
#       columns: sample_id, distribution, n, then the dpik() arguments (scalest, level,
#       kernel, canonical, gridsize, range_lo/range_hi -- NA for the default range(x) --
#       and truncate), n_binned (see below) and the bandwidth dpik.
# Both files are committed so that the Python tests never need R.
#
# Generated with R 4.2.2 Patched (2022-11-10 r83330) and KernSmooth 2.23.20 on
# x86_64 Linux; the versions actually used are also written into the first line of
# dpik_reference.csv.  Every value is printed with 17 significant digits, which
# round-trips IEEE doubles exactly -- provided the reader rounds correctly.  pandas'
# default fast parser does not: it is off by one ulp for about a third of these
# values, enough to flip the decision described below, so read them with
# float_precision="round_trip".  Shorter decimals are not used to shrink the file
# because R's as.numeric() is not correctly rounded either: a few 16-digit strings
# that read back equal in R parse to a neighbouring double in Python.
#
# n_binned is sum(gcounts) of the standardised linear binning inside dpik(), i.e.
# the number of observations the plug-in estimates actually use.  With
# truncate = TRUE an observation whose grid coordinate reaches the last grid point
# is dropped by the Fortran routine linbin, so the sample maximum (and its ties)
# is dropped or kept depending on the rounding of (sb - sa) / delta; recording the
# count lets the Python port check that decision sample by sample.

suppressPackageStartupMessages(library(KernSmooth))

out_dir <- file.path("tests", "data")
if (!dir.exists(out_dir)) {
  stop("run this script from the repository root (tests/data not found)")
}

# Each sample gets its own seed so that adding a sample never changes the others.
generators <- list(
  normal = function(n) rnorm(n, mean = 3, sd = 2),
  uniform = function(n) runif(n, min = -1, max = 4),
  lognormal = function(n) rlnorm(n, meanlog = 0, sdlog = 1),
  exponential = function(n) rexp(n, rate = 0.5),
  t2 = function(n) rt(n, df = 2),
  cauchy = function(n) rcauchy(n),
  # Ties: a continuous sample reported to one decimal place.
  rounded = function(n) round(rnorm(n, mean = 10, sd = 1.5), 1),
  # Ties: integer counts; lambda is large enough that the IQR is never zero.
  poisson = function(n) as.numeric(rpois(n, lambda = 6)),
  # Short decimals: the block of these samples below exists to pin the last-bit
  # arithmetic (mean, var, quantiles) that decides whether the maximum is binned.
  precision = function(n) signif(rnorm(n, mean = 10, sd = 3), 7),
  bimodal = function(n) {
    k <- rbinom(1, n, 0.4)
    c(rnorm(k, -2, 0.5), rnorm(n - k, 2, 1))[sample.int(n)]
  }
)

design <- rbind(
  expand.grid(
    distribution = c("normal", "uniform", "lognormal", "t2", "rounded", "poisson"),
    n = c(20L, 50L, 100L, 500L, 1000L),
    stringsAsFactors = FALSE
  ),
  data.frame(
    distribution = c("exponential", "exponential", "cauchy", "cauchy", "bimodal",
                     "bimodal", "normal", "t2", "exponential"),
    n = c(20L, 500L, 100L, 500L, 200L, 1000L, 5000L, 5000L, 1000L),
    stringsAsFactors = FALSE
  ),
  # About 2% of such samples get a different bandwidth if mean() or var() is
  # computed in plain double precision instead of R's long-double two-pass sums.
  data.frame(distribution = "precision", n = 15L + (seq_len(400L) %% 26L),
             stringsAsFactors = FALSE)
)
design$sample_id <- seq_len(nrow(design))

samples <- vector("list", nrow(design))
for (i in seq_len(nrow(design))) {
  set.seed(20240000L + design$sample_id[i])
  samples[[i]] <- generators[[design$distribution[i]]](design$n[i])
}

# Mirrors the first lines of dpik() to report how many observations survive binning.
n_binned <- function(x, scalest, gridsize, range.x, truncate) {
  s <- switch(scalest,
              stdev = sqrt(var(x)),
              iqr = (quantile(x, 3/4) - quantile(x, 1/4)) / 1.349,
              minim = min((quantile(x, 3/4) - quantile(x, 1/4)) / 1.349, sqrt(var(x))))
  sx <- (x - mean(x)) / s
  sa <- (range.x[1L] - mean(x)) / s
  sb <- (range.x[2L] - mean(x)) / s
  sum(KernSmooth:::linbin(sx, seq(sa, sb, length = gridsize), truncate))
}

rows <- list()
add_row <- function(id, scalest = "minim", level = 2L, kernel = "normal",
                    canonical = FALSE, gridsize = 401L, range.x = NULL, truncate = TRUE) {
  x <- samples[[id]]
  rx <- if (is.null(range.x)) range(x) else range.x
  rows[[length(rows) + 1L]] <<- data.frame(
    sample_id = id,
    distribution = design$distribution[id],
    n = length(x),
    scalest = scalest,
    level = level,
    kernel = kernel,
    canonical = canonical,
    gridsize = gridsize,
    # NA means the default range.x = range(x).
    range_lo = if (is.null(range.x)) NA else sprintf("%.17g", range.x[1L]),
    range_hi = if (is.null(range.x)) NA else sprintf("%.17g", range.x[2L]),
    truncate = truncate,
    n_binned = sprintf("%.17g", n_binned(x, scalest, gridsize, rx, truncate)),
    dpik = sprintf("%.17g", dpik(x, scalest = scalest, level = level, kernel = kernel,
                                 canonical = canonical, gridsize = gridsize, range.x = rx,
                                 truncate = truncate)),
    stringsAsFactors = FALSE
  )
}

# Coarse-grid warnings (heavy tails squeeze the bulk into a few bins) are expected.
suppressWarnings({
  for (id in design$sample_id) add_row(id)
  mid <- design$sample_id[design$n %in% c(100L, 500L)]
  for (id in mid) {
    add_row(id, scalest = "stdev")
    add_row(id, scalest = "iqr")
  }
  for (id in design$sample_id[design$n == 500L]) {
    for (lev in c(0L, 1L, 3L, 4L, 5L)) add_row(id, level = lev)
  }
  for (id in design$sample_id[design$n == 100L]) {
    for (k in c("box", "epanech", "biweight", "triweight")) add_row(id, kernel = k)
  }
  # Non-default grids: canonical scale, other grid sizes, a range that cuts off both
  # tails (truncated or piled onto the end points) and one that is wider than the data.
  for (id in design$sample_id[design$n == 50L]) {
    x <- samples[[id]]
    inner <- quantile(x, c(0.1, 0.85), names = FALSE)
    add_row(id, canonical = TRUE)
    add_row(id, gridsize = 101L)
    add_row(id, gridsize = 1000L)
    add_row(id, range.x = inner)
    add_row(id, range.x = inner, truncate = FALSE)
    add_row(id, range.x = range(x) + c(-1, 1) * diff(range(x)) / 3)
    add_row(id, truncate = FALSE)
  }
})
ref <- do.call(rbind, rows)

long <- data.frame(
  sample_id = rep(design$sample_id, lengths(samples)),
  value = sprintf("%.17g", unlist(samples))
)

con <- gzfile(file.path(out_dir, "dpik_reference_samples.csv.gz"), "w", compression = 9)
write.csv(long, con, row.names = FALSE, quote = FALSE)
close(con)

ref_path <- file.path(out_dir, "dpik_reference.csv")
writeLines(
  sprintf("# %s; KernSmooth %s; generated by tests/r/dpik_reference.R",
          R.version.string, as.character(packageVersion("KernSmooth"))),
  ref_path
)
suppressWarnings(write.table(ref, ref_path, sep = ",", row.names = FALSE, quote = FALSE,
                             append = TRUE))

cat(sprintf("wrote %d samples (%d values) and %d reference rows\n",
            nrow(design), nrow(long), nrow(ref)))
