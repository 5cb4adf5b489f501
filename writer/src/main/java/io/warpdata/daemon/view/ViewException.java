package io.warpdata.daemon.view;

import io.warpdata.manifest.WarpException;

/**
 * A view cannot be made as asked: a query DuckDB refuses (its message, and the table's columns),
 * an unknown column, a view that selects no rows, a selected row naming a member its artifact
 * lacks, a view that would silently replace the source's latest. Nothing is published then.
 */
public final class ViewException extends WarpException {
    public ViewException(String message, String nextStep) {
        super(message, nextStep);
    }

    public ViewException(String message, String nextStep, Throwable cause) {
        super(message, nextStep, cause);
    }

    @Override
    public String type() {
        return "InvalidView";
    }
}
