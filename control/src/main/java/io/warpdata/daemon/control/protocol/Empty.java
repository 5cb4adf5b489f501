package io.warpdata.daemon.control.protocol;

/** The arguments of an operation that takes none ({@code {}}), or the events of one that sends none. */
public record Empty() {
    public static final Empty INSTANCE = new Empty();
}
