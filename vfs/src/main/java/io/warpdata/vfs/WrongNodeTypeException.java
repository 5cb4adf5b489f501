package io.warpdata.vfs;

import io.warpdata.manifest.WarpException;

import java.util.Locale;

/** An operation met a node of the wrong type: reading a directory, listing a file, reading a non-link. */
public final class WrongNodeTypeException extends WarpException {
    private final Node.Type actual;

    public WrongNodeTypeException(String what, Node.Type actual) {
        super(what + " is a " + actual.name().toLowerCase(Locale.ROOT),
                "Use an operation that fits the file type.");
        this.actual = actual;
    }

    public Node.Type actual() {
        return actual;
    }

    @Override
    public String type() {
        return "WrongType";
    }
}
