package io.warpdata.blobcache.mirror;

import java.io.IOException;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A read-through HTTP cache that serves the store's keys under a base URL: {@code GET
 * BASE/<store key>} with a {@code Range} of whole blocks (nginx {@code proxy_cache} + {@code slice},
 * Squid, Varnish, a CDN; systemd/mirror/ has tested configurations).
 *
 * <p>What is sent is only {@code GET}, the path, {@code Host}, {@code Range} and
 * {@code User-Agent: warpd}: no Authorization (no {@link java.net.Authenticator} is set), no
 * cookies, no query string, no redirects followed (a redirect could lead to a signed URL), no
 * proxy.
 *
 * <p>The timeout bounds silence, not the whole answer: a mirror fails when nothing came from it
 * for one timeout (to connect, before the headers, or between two parts of the body), or when one
 * answer comes slower than {@link Mirror#SLOWEST_BYTES_PER_SECOND} (after {@link Mirror#ANSWER_GRACE}),
 * and never later than {@link Mirror#ANSWER_CEILING}. A cache that is itself fetching a run's slices
 * from a slow store keeps sending and is waited for; a dead or hanging one costs one timeout. The
 * body is written straight into the reader's buffer as it comes ({@link AnswerBody}), and nothing
 * is written there once {@code read} has returned or thrown. After a failure the buffer's region
 * may hold part of the answer: only a {@code true} from {@code read} says it holds the range.
 * A connection that fails (refused, reset, closed before the whole answer) is tried once more
 * before the read fails: one dropped connection does not take a mirror down for a backoff.
 */
public final class HttpMirror implements Mirror {
    /** How often an answer's pace is looked at once its grace is over. */
    private static final long PACE_CHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final Pattern CONTENT_RANGE = Pattern.compile("bytes (\\d+)-(\\d+)/(\\d+|\\*)");

    private final URI base;
    private final String name;
    private final Duration timeout;
    private final Duration ceiling;
    private final long timeoutNanos;
    private final long ceilingNanos;
    private final long graceNanos;
    private final HttpClient client;

    /**
     * @param base {@code http(s)://host[:port]/BASE}: the store's key {@code k} is at {@code BASE/k}
     * @param timeout the longest the mirror may stay silent: to connect, before the headers, and
     *        between two parts of the body (about 2 s: a cache on the local network that sends
     *        nothing for that long is dead or hanging; one that is slowly fetching from the store
     *        keeps sending and is waited for, up to {@link Mirror#ANSWER_CEILING})
     * @throws IllegalArgumentException if {@code base} is not such a URL, or carries user info, a
     *         query or a fragment (nothing secret is ever sent to a mirror)
     */
    public HttpMirror(URI base, Duration timeout) {
        this(base, timeout, ANSWER_CEILING, ANSWER_GRACE);
    }

    /** @param ceiling the longest one answer may take however steadily it comes (tests shorten it) */
    HttpMirror(URI base, Duration timeout, Duration ceiling) {
        this(base, timeout, ceiling, ANSWER_GRACE);
    }

    /** @param grace what an answer may take beyond its bytes at the slowest rate (tests shorten it) */
    HttpMirror(URI base, Duration timeout, Duration ceiling, Duration grace) {
        this.base = checkBase(base);
        this.name = this.base.toString();
        this.timeout = Objects.requireNonNull(timeout, "timeout");
        this.ceiling = Objects.requireNonNull(ceiling, "ceiling");
        if (timeout.isNegative() || timeout.isZero() || ceiling.compareTo(timeout) < 0) {
            throw new IllegalArgumentException("mirror timeout must be positive and at most the ceiling " + ceiling
                    + ", was " + timeout);
        }
        this.timeoutNanos = timeout.toNanos();
        this.ceilingNanos = ceiling.toNanos();
        // Never less than the silence allowed: a --mirror-timeout raised for long cache-lock waits
        // (docs/fleet.md) must not be undercut by the pace, which counts from the request.
        this.graceNanos = Math.max(grace.toNanos(), timeout.toNanos());
        this.client = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .followRedirects(HttpClient.Redirect.NEVER)
                .proxy(ProxySelector.of(null))
                .connectTimeout(timeout)
                .build();
    }

    /** Checks and normalises a base URL (no trailing slash). */
    static URI checkBase(URI base) {
        Objects.requireNonNull(base, "base");
        String scheme = base.getScheme() == null ? null : base.getScheme().toLowerCase(java.util.Locale.ROOT);
        if (scheme == null || !(scheme.equals("http") || scheme.equals("https")) || base.getHost() == null) {
            throw new IllegalArgumentException("'" + base + "' is not an http(s)://HOST[:PORT]/BASE URL");
        }
        String origin = scheme + "://" + base.getHost() + (base.getPort() < 0 ? "" : ":" + base.getPort());
        requirePossiblePort(base, "'" + origin + "'");
        if (base.getRawUserInfo() != null) {
            throw new IllegalArgumentException("'" + origin + "': a mirror URL must not carry user info;"
                    + " warpd never sends credentials to a mirror");
        }
        if (base.getRawQuery() != null || base.getRawFragment() != null) {
            throw new IllegalArgumentException("'" + origin + "': a mirror URL must not carry "
                    + (base.getRawQuery() != null ? "a query (no signed URLs)" : "a fragment (#...)"));
        }
        String path = base.getRawPath() == null ? "" : base.getRawPath();
        while (path.endsWith("/")) {
            path = path.substring(0, path.length() - 1);
        }
        return URI.create(scheme + "://" + base.getRawAuthority() + path);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public boolean read(MirrorRange range, byte[] dst, int dstOff) throws MirrorException {
        Objects.checkFromIndexSize(dstOff, range.length(), dst.length);
        return onceMore(() -> readOnce(range, dst, dstOff));
    }

    private boolean readOnce(MirrorRange range, byte[] dst, int dstOff) throws MirrorException {
        AnswerBody body = new AnswerBody(System::nanoTime);
        HttpResponse<Void> answer = exchange(range.key(), range.httpRange(), range.length(), body, info -> {
            if (fits(info, range)) {
                body.into(dst, dstOff, range.length());
            }
        });
        int status = answer.statusCode();
        if (status == 404) {
            return false;
        }
        if (status == 206) {
            String contentRange = answer.headers().firstValue("Content-Range").orElse("");
            if (!fits(answer, range)) {
                throw new MirrorException(MirrorException.Kind.BAD_ANSWER, name + " answered " + range + " with Content-Range '"
                        + contentRange + "'");
            }
        } else if (status == 200) {
            // A server that ignores Range sends the whole object: usable only when that is the range.
            if (range.offset() != 0) {
                throw new MirrorException(MirrorException.Kind.BAD_ANSWER, name + " ignored the Range of " + range
                        + " (200 with the whole object); configure it to serve ranges (docs/fleet.md)");
            }
        } else {
            throw new MirrorException(MirrorException.Kind.STATUS, name + " answered HTTP " + status + " for " + range);
        }
        if (body.overflowed() || body.written() != range.length()) {
            throw new MirrorException(MirrorException.Kind.BAD_ANSWER, name + " sent " + (body.overflowed() ? "more than "
                    + range.length() : body.written()) + " bytes for " + range);
        }
        return true;
    }

    /** Whether headers announce exactly {@code range}: a 206 naming it, or a 200 when it starts the object. */
    private static boolean fits(HttpResponse.ResponseInfo info, MirrorRange range) {
        return fits(info.statusCode(), info.headers(), range);
    }

    private static boolean fits(HttpResponse<?> answer, MirrorRange range) {
        return fits(answer.statusCode(), answer.headers(), range);
    }

    private static boolean fits(int status, HttpHeaders headers, MirrorRange range) {
        if (status == 200) {
            return range.offset() == 0;
        }
        if (status != 206) {
            return false;
        }
        Matcher m = CONTENT_RANGE.matcher(headers.firstValue("Content-Range").orElse(""));
        return m.matches() && Long.parseLong(m.group(1)) == range.offset() && Long.parseLong(m.group(2)) == range.last();
    }

    @Override
    public Optional<byte[]> get(String key, int maxBytes) throws MirrorException {
        return onceMore(() -> getOnce(key, maxBytes));
    }

    /** One try of a read; {@link #onceMore} may make a second. */
    @FunctionalInterface
    private interface Attempt<T> {
        T run() throws MirrorException;
    }

    /**
     * Runs {@code attempt}, and once more if the connection failed (refused, reset, or closed
     * before the whole answer came): a cache reloading its workers, a keep-alive race, or a proxy
     * dropping one of the clients it collapsed onto one fetch. Without this, one dropped connection
     * would take the mirror down for a whole backoff and send that node's reads to the store. A
     * timeout, an error status or a wrong answer is not tried again: the next one would be the same.
     * Nor is a drop that came after one timeout or more of answering: the reader has waited
     * enough, and the next tier serves it.
     */
    private <T> T onceMore(Attempt<T> attempt) throws MirrorException {
        long start = System.nanoTime();
        try {
            return attempt.run();
        } catch (MirrorException first) {
            if (first.kind() != MirrorException.Kind.CONNECTION || System.nanoTime() - start >= timeoutNanos) {
                throw first;
            }
            try {
                return attempt.run();
            } catch (MirrorException second) {
                second.addSuppressed(first);
                throw second;
            }
        }
    }

    private Optional<byte[]> getOnce(String key, int maxBytes) throws MirrorException {
        AnswerBody body = new AnswerBody(System::nanoTime);
        AtomicReference<byte[]> buffer = new AtomicReference<>();
        // A Range of maxBytes + 1 caps what a wrong or hostile mirror can make us buffer; the
        // buffer is sized by Content-Length, which must be there and at most maxBytes.
        HttpResponse<Void> answer = exchange(key, "bytes=0-" + maxBytes, maxBytes, body, info -> {
            long length = info.headers().firstValueAsLong("Content-Length").orElse(-1);
            if ((info.statusCode() == 200 || info.statusCode() == 206) && length >= 0 && length <= maxBytes) {
                byte[] b = new byte[(int) length];
                buffer.set(b);
                body.into(b, 0, b.length);
            }
        });
        int status = answer.statusCode();
        if (status == 404) {
            return Optional.empty();
        }
        if (status != 200 && status != 206) {
            throw new MirrorException(MirrorException.Kind.STATUS, name + " answered HTTP " + status + " for " + key);
        }
        byte[] b = buffer.get();
        String contentRange = answer.headers().firstValue("Content-Range").orElse("");
        if (b == null) {
            throw new MirrorException(MirrorException.Kind.BAD_ANSWER,
                    answer.headers().firstValue("Content-Length").isEmpty()
                            ? name + " sent " + key + " without a Content-Length (a chunked answer): warpd buffers a"
                            + " whole object only when its length is announced; make the cache send Content-Length"
                            : name + " has " + key + " larger than " + maxBytes + " bytes (Content-Range '" + contentRange
                            + "')");
        }
        if (status == 206) {
            Matcher m = CONTENT_RANGE.matcher(contentRange);
            if (!m.matches() || Long.parseLong(m.group(1)) != 0 || Long.parseLong(m.group(2)) + 1 != b.length
                    || (!m.group(3).equals("*") && Long.parseLong(m.group(3)) != b.length)) {
                throw new MirrorException(MirrorException.Kind.BAD_ANSWER, name + " sent a partial or mismatched answer for "
                        + key + " (" + b.length + " bytes, Content-Range '" + contentRange + "'), or it is larger than " + maxBytes);
            }
        }
        if (body.overflowed() || body.written() != b.length) {
            throw new MirrorException(MirrorException.Kind.BAD_ANSWER, name + " sent " + body.written() + " of the "
                    + b.length + " bytes it announced for " + key);
        }
        return Optional.of(b);
    }

    /**
     * One GET, its body written by {@code body}; waits while the mirror keeps sending, and gives up
     * after one timeout of silence or at the ceiling. When this returns or throws, nothing more is
     * written by the exchange.
     *
     * @param onHeaders sees the headers before any byte of the body, and points {@code body} at a
     *        region if they fit the request
     */
    private HttpResponse<Void> exchange(String key, String httpRange, long bytes, AnswerBody body,
                                        Consumer<HttpResponse.ResponseInfo> onHeaders) throws MirrorException {
        HttpRequest request = HttpRequest.newBuilder(URI.create(name + "/" + key))
                .GET()
                .header("User-Agent", "warpd")
                .header("Range", httpRange)
                .build();
        long start = System.nanoTime();
        CompletableFuture<HttpResponse<Void>> pending = client.sendAsync(request, info -> {
            body.heard();
            onHeaders.accept(info);
            return body;
        });
        try {
            while (true) {
                long now = System.nanoTime();
                long elapsed = now - start;
                long silentFor = now - body.lastHeardNanos();
                // Past the grace, the answer must keep up with the slowest rate waited for: a mirror
                // that drips is given up as soon as it falls behind, not at the end of the answer.
                long behind = Mirror.behindSlowest(body.written(), elapsed, graceNanos);
                long wait = Math.min(Math.min(timeoutNanos - silentFor, ceilingNanos - elapsed),
                        elapsed < graceNanos ? graceNanos - elapsed : PACE_CHECK_NANOS);
                if (timeoutNanos - silentFor <= 0 || ceilingNanos - elapsed <= 0 || behind > 0) {
                    boolean silent = timeoutNanos - silentFor <= 0;
                    throw new MirrorException(MirrorException.Kind.TIMEOUT, name + (silent
                            ? " sent nothing for " + timeout.toMillis() + " ms while answering " + key
                            : behind <= 0
                            ? " was still answering " + key + " after " + ceiling.toSeconds() + " s (the ceiling of one answer)"
                            : " sent " + body.written() + " of " + bytes + " bytes of " + key + " in "
                              + String.format("%.1f", elapsed / 1e9) + " s, slower than "
                              + (SLOWEST_BYTES_PER_SECOND >> 20) + " MiB/s (the slowest answer waited for)"));
                }
                try {
                    return pending.get(wait, TimeUnit.NANOSECONDS);
                } catch (TimeoutException notYet) {
                    // Look again: something may have come meanwhile.
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new MirrorException(MirrorException.Kind.TIMEOUT, "interrupted while reading " + key + " from " + name, e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof HttpTimeoutException) {
                throw new MirrorException(MirrorException.Kind.TIMEOUT, name + " did not accept a connection within "
                        + timeout.toMillis() + " ms", cause);
            }
            if (cause instanceof IOException) {
                throw new MirrorException(MirrorException.Kind.CONNECTION, name + ": " + plainly(cause) + " reading " + key,
                        cause);
            }
            throw new MirrorException(MirrorException.Kind.CONNECTION, name + ": " + cause + " reading " + key, cause);
        } finally {
            if (!pending.isDone() || pending.isCompletedExceptionally()) {
                // Cut the exchange; the body writes nothing more into the reader's buffer.
                body.abandon();
                pending.cancel(true);
            }
        }
    }

    /**
     * Refuses a port no server can listen on (0, over 65535): accepted, it failed every read
     * ("port out of range") and looked like a mirror down (audit 26).
     */
    static void requirePossiblePort(URI url, String what) {
        if (url.getPort() == 0 || url.getPort() > 65535) {
            throw new IllegalArgumentException(what + ": port " + url.getPort() + " cannot exist (1 to 65535)");
        }
    }

    /**
     * What a connection failure was, in words: the JDK's client says "ConnectException" with no
     * message for a refused connection, and "header parser received no bytes" for one closed
     * before any answer (audit 26).
     */
    static String plainly(Throwable cause) {
        String m = cause.getMessage() == null ? "" : cause.getMessage();
        if (cause instanceof java.net.ConnectException) {
            return "connection refused (nothing listens there, or a firewall rejects it)"
                    + (m.isEmpty() || m.equalsIgnoreCase("connection refused") ? "" : ": " + m);
        }
        if (m.contains("received no bytes") || cause instanceof java.io.EOFException) {
            return "the mirror closed the connection without answering (" + cause.getClass().getSimpleName()
                    + (m.isEmpty() ? "" : ": " + m) + ")";
        }
        if (cause instanceof java.net.SocketException && m.toLowerCase(java.util.Locale.ROOT).contains("reset")) {
            return "the mirror reset the connection (" + m + ")";
        }
        return cause.getClass().getSimpleName() + (m.isEmpty() ? "" : ": " + m);
    }

    @Override
    public void close() {
        client.close();
    }
}
