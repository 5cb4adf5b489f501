package io.warpdata.daemon.control.protocol;

/**
 * One operation of the control socket as both sides see it: its {@code op} name and the
 * records of its request ({@code args}), its result and its events (progress, or another
 * kind named in {@link #event()}). {@link Calls} lists them all.
 *
 * @param op        the {@code op} name, e.g. {@code cache.gc}
 * @param request   the record the {@code args} object reads into
 * @param reply     the record of the {@code result}
 * @param events    the record of each event line ({@link Empty} when the operation sends none)
 * @param event     the {@code "event"} name of those lines: {@code progress}, or e.g. {@code batch}
 */
public record Call<Q, R, E>(String op, Class<Q> request, Class<R> reply, Class<E> events, String event) {

    public static <Q, R> Call<Q, R, Empty> of(String op, Class<Q> request, Class<R> reply) {
        return new Call<>(op, request, reply, Empty.class, Events.PROGRESS);
    }

    public static <Q, R, E> Call<Q, R, E> withProgress(String op, Class<Q> request, Class<R> reply, Class<E> events) {
        return new Call<>(op, request, reply, events, Events.PROGRESS);
    }
}
