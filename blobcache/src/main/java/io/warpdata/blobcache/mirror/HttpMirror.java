package io.warpdata.blobcache.mirror;

import java.io.IOException;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
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
 * proxy. A whole answer, body included, must arrive within the timeout; a mirror slower than that
 * is a failure, and the read goes on to the next source.
 */
public final class HttpMirror implements Mirror {
    private static final Pattern CONTENT_RANGE = Pattern.compile("bytes (\\d+)-(\\d+)/(\\d+|\\*)");

    private final URI base;
    private final String name;
    private final Duration timeout;
    private final HttpClient client;

    /**
     * @param base {@code http(s)://host[:port]/BASE}: the store's key {@code k} is at {@code BASE/k}
     * @param timeout the longest a whole answer may take (about 2 s: a cache on the local network
     *        answers a 1 MiB block in milliseconds; one that does not is better skipped)
     * @throws IllegalArgumentException if {@code base} is not such a URL, or carries user info, a
     *         query or a fragment (nothing secret is ever sent to a mirror)
     */
    public HttpMirror(URI base, Duration timeout) {
        this.base = checkBase(base);
        this.name = this.base.toString();
        this.timeout = Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("mirror timeout must be positive, was " + timeout);
        }
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
        String scheme = base.getScheme();
        if (scheme == null || !(scheme.equals("http") || scheme.equals("https")) || base.getHost() == null) {
            throw new IllegalArgumentException("'" + base + "' is not an http(s)://HOST[:PORT]/BASE URL");
        }
        if (base.getRawUserInfo() != null) {
            throw new IllegalArgumentException("'" + base.getHost() + "': a mirror URL must not carry user info;"
                    + " warpd never sends credentials to a mirror");
        }
        if (base.getRawQuery() != null || base.getRawFragment() != null) {
            throw new IllegalArgumentException("'" + base.getScheme() + "://" + base.getHost()
                    + "': a mirror URL must not carry a query or a fragment (no signed URLs)");
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
        HttpResponse<byte[]> answer = send(range.key(), Optional.of(range.httpRange()));
        int status = answer.statusCode();
        if (status == 404) {
            return false;
        }
        byte[] body = answer.body();
        if (status == 206) {
            String contentRange = answer.headers().firstValue("Content-Range").orElse("");
            Matcher m = CONTENT_RANGE.matcher(contentRange);
            if (!m.matches() || Long.parseLong(m.group(1)) != range.offset() || Long.parseLong(m.group(2)) != range.last()) {
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
        if (body.length != range.length()) {
            throw new MirrorException(MirrorException.Kind.BAD_ANSWER, name + " sent " + body.length + " bytes for " + range);
        }
        System.arraycopy(body, 0, dst, dstOff, body.length);
        return true;
    }

    @Override
    public Optional<byte[]> get(String key, int maxBytes) throws MirrorException {
        // A Range of maxBytes + 1 caps what a wrong or hostile mirror can make us buffer.
        HttpResponse<byte[]> answer = send(key, Optional.of("bytes=0-" + maxBytes));
        int status = answer.statusCode();
        if (status == 404) {
            return Optional.empty();
        }
        if (status != 200 && status != 206) {
            throw new MirrorException(MirrorException.Kind.STATUS, name + " answered HTTP " + status + " for " + key);
        }
        byte[] body = answer.body();
        if (status == 206) {
            Matcher m = CONTENT_RANGE.matcher(answer.headers().firstValue("Content-Range").orElse(""));
            if (!m.matches() || Long.parseLong(m.group(1)) != 0 || Long.parseLong(m.group(2)) - Long.parseLong(m.group(1)) + 1 != body.length
                    || (!m.group(3).equals("*") && Long.parseLong(m.group(3)) != body.length)) {
                throw new MirrorException(MirrorException.Kind.BAD_ANSWER, name + " sent a partial or mismatched answer for "
                        + key + " (" + body.length + " bytes, Content-Range '"
                        + answer.headers().firstValue("Content-Range").orElse("") + "'), or it is larger than " + maxBytes);
            }
        }
        if (body.length > maxBytes) {
            throw new MirrorException(MirrorException.Kind.BAD_ANSWER, name + " has " + key + " larger than " + maxBytes + " bytes");
        }
        return Optional.of(body);
    }

    private HttpResponse<byte[]> send(String key, Optional<String> httpRange) throws MirrorException {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(name + "/" + key))
                .GET()
                .timeout(timeout)
                .header("User-Agent", "warpd");
        httpRange.ifPresent(r -> request.header("Range", r));
        CompletableFuture<HttpResponse<byte[]>> pending = client.sendAsync(request.build(), HttpResponse.BodyHandlers.ofByteArray());
        try {
            // The request timeout ends at the headers; this bounds the body too.
            return pending.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            pending.cancel(true);
            throw new MirrorException(MirrorException.Kind.TIMEOUT, name + " did not answer " + key + " within " + timeout.toMillis()
                    + " ms", e);
        } catch (InterruptedException e) {
            pending.cancel(true);
            Thread.currentThread().interrupt();
            throw new MirrorException(MirrorException.Kind.TIMEOUT, "interrupted while reading " + key + " from " + name, e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof HttpTimeoutException) {
                throw new MirrorException(MirrorException.Kind.TIMEOUT, name + " did not answer " + key + " within "
                        + timeout.toMillis() + " ms", cause);
            }
            if (cause instanceof IOException) {
                throw new MirrorException(MirrorException.Kind.CONNECTION, name + ": " + cause.getClass().getSimpleName()
                        + " reading " + key + (cause.getMessage() == null ? "" : ": " + cause.getMessage()), cause);
            }
            throw new MirrorException(MirrorException.Kind.CONNECTION, name + ": " + cause + " reading " + key, cause);
        }
    }

    @Override
    public void close() {
        client.close();
    }
}
