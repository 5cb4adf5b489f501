package io.warpdata.daemon.view;

import java.math.BigDecimal;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What a view selects from one table of its parent, in the order it is applied: rows matching
 * {@code where} (DuckDB SQL over the table's columns), then a seeded sample ({@code sample} rows
 * or a {@code fraction}, split over the values of {@code stratifyBy} when given), then
 * {@code orderBy}, then the first {@code limit}. Part of the view's hashed manifest, so the same
 * query of the same parent is the same version.
 *
 * @param table      the table the rows come from
 * @param where      a SQL condition, or empty for every row
 * @param orderBy    a SQL ordering, or empty for the table's own order
 * @param limit      at most this many rows after ordering
 * @param sample     a uniform sample of this many rows (with {@code stratifyBy}: in total, split over the strata)
 * @param fraction   a uniform sample of this fraction of the rows, exclusive with {@code sample}
 * @param stratifyBy the column whose values are the strata of a sample
 * @param seed       what makes a sample repeatable: the same seed, the same rows, on any machine
 */
public record ViewQuery(String table, Optional<String> where, Optional<String> orderBy, OptionalLong limit,
                        OptionalLong sample, Optional<BigDecimal> fraction, Optional<String> stratifyBy, long seed) {
    public ViewQuery {
        Objects.requireNonNull(table, "table");
        where = blankToEmpty(where);
        orderBy = blankToEmpty(orderBy);
        stratifyBy = blankToEmpty(stratifyBy);
        if (sample.isPresent() && fraction.isPresent()) {
            throw new ViewException("--sample and --fraction were both given", "Give one or the other.");
        }
        if (sample.isPresent() && sample.getAsLong() < 1) {
            throw new ViewException("--sample " + sample.getAsLong() + " selects nothing", "Give --sample 1 or more.");
        }
        if (fraction.isPresent() && (fraction.get().signum() <= 0 || fraction.get().compareTo(BigDecimal.ONE) > 0)) {
            throw new ViewException("--fraction " + fraction.get() + " is not a fraction of the rows",
                    "Give a number above 0 and at most 1, e.g. --fraction 0.1.");
        }
        if (limit.isPresent() && limit.getAsLong() < 1) {
            throw new ViewException("--limit " + limit.getAsLong() + " selects nothing", "Give --limit 1 or more.");
        }
        if (stratifyBy.isPresent() && sample.isEmpty() && fraction.isEmpty()) {
            throw new ViewException("--stratify-by " + stratifyBy.get() + " without a sample",
                    "Add --sample N or --fraction F: the strata split a sample.");
        }
    }

    private static Optional<String> blankToEmpty(Optional<String> s) {
        return s.map(String::strip).filter(t -> !t.isEmpty());
    }

    /** Whether the query selects every row in the table's order (a view that changes nothing). */
    public boolean selectsEverything() {
        return where.isEmpty() && orderBy.isEmpty() && limit.isEmpty() && sample.isEmpty() && fraction.isEmpty();
    }
}
