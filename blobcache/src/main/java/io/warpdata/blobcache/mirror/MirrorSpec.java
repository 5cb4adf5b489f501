package io.warpdata.blobcache.mirror;

import io.warpdata.store.s3.S3BlobStore;

import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * One configured mirror, as given to {@code warpd --mirror}: parsed and checked when warpd
 * starts, opened where the cache is built.
 *
 * <ul>
 *   <li>{@code http(s)://HOST[:PORT]/BASE}: a read-through HTTP cache serving the store's keys
 *       under BASE ({@link HttpMirror}). No user info, query or fragment: nothing secret is ever
 *       sent to a mirror.
 *   <li>{@code s3://BUCKET[/PREFIX][?endpoint=URL]}: an S3-compatible tier that warpd fills
 *       ({@link S3Mirror}); {@code endpoint} for MinIO or Ceph RGW (path-style), absent for AWS
 *       (S3 Express One Zone directory buckets included). Its credentials are its own: the
 *       environment's {@code WARP_MIRROR_AWS_ACCESS_KEY_ID} and
 *       {@code WARP_MIRROR_AWS_SECRET_ACCESS_KEY} when set, else the AWS SDK's default chain (the
 *       same identity as the store's, e.g. an instance role allowed on both buckets).
 * </ul>
 */
public sealed interface MirrorSpec {
    /** Environment variables naming the S3 tier's own key pair. */
    String ACCESS_KEY_ENV = "WARP_MIRROR_AWS_ACCESS_KEY_ID";
    String SECRET_KEY_ENV = "WARP_MIRROR_AWS_SECRET_ACCESS_KEY";

    /**
     * 2 s of silence ({@code --mirror-timeout}): a cache on the local network answers within
     * milliseconds, and one fetching slices from a slow store keeps sending; one that sends nothing
     * for 2 s is dead or hanging.
     */
    Duration DEFAULT_TIMEOUT = Duration.ofSeconds(2);

    /** The mirror as shown in logs, counters and status (never a secret). */
    String describe();

    /**
     * Opens the mirror's client.
     *
     * @param timeout the longest the mirror may stay silent within one read ({@code --mirror-timeout});
     *        one read takes at most {@link Mirror#ANSWER_CEILING} however steadily it comes
     */
    Mirror open(Duration timeout);

    /** Opens the mirror as a remote tier of the block cache's read plan. */
    default MirrorTier openTier(Duration timeout) {
        return new MirrorTier(open(timeout), timeout);
    }

    /** A read-through HTTP cache at {@code base}. */
    record Http(URI base) implements MirrorSpec {
        public Http {
            base = HttpMirror.checkBase(base);
        }

        @Override
        public String describe() {
            return base.toString();
        }

        @Override
        public Mirror open(Duration timeout) {
            return new HttpMirror(base, timeout);
        }
    }

    /**
     * An S3-compatible tier.
     *
     * @param bucket the bucket
     * @param prefix the key prefix without slashes at either end, or empty
     * @param endpoint a non-AWS server, or empty for AWS
     * @param credentials the tier's own key pair, or empty for the SDK's default chain
     */
    record S3(String bucket, String prefix, Optional<URI> endpoint, Optional<S3BlobStore.Credentials> credentials)
            implements MirrorSpec {
        public S3 {
            Objects.requireNonNull(bucket, "bucket");
            Objects.requireNonNull(prefix, "prefix");
            Objects.requireNonNull(endpoint, "endpoint");
            Objects.requireNonNull(credentials, "credentials");
            if (!bucket.matches("[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")) {
                throw new IllegalArgumentException("'" + bucket + "' is not a valid bucket name");
            }
            if (prefix.startsWith("/") || prefix.endsWith("/") || prefix.contains("//")) {
                throw new IllegalArgumentException("the prefix '" + prefix + "' has an empty path segment");
            }
        }

        /** {@code s3://bucket/prefix}, as the store's URI is written. */
        public String uri() {
            return prefix.isEmpty() ? "s3://" + bucket : "s3://" + bucket + "/" + prefix;
        }

        @Override
        public String describe() {
            return uri() + endpoint.map(e -> " (endpoint " + e + ")").orElse("");
        }

        @Override
        public Mirror open(Duration timeout) {
            // One attempt; the timeout bounds the socket's silence (connect, and between two reads
            // of an answer), not the whole call, which only the ceiling bounds: a tier that keeps
            // sending is waited for, a silent one is skipped, and the store is the retry.
            S3BlobStore.Config config = S3BlobStore.Config.defaults()
                    .withAnswerTimeout(timeout)
                    .withTimeouts(Mirror.ANSWER_CEILING, Mirror.ANSWER_CEILING)
                    .withRetries(1, Duration.ofMillis(100), Duration.ofMillis(100));
            if (credentials.isPresent()) {
                config = config.withCredentials(credentials.get().accessKeyId(), credentials.get().secretAccessKey());
            }
            Duration grace = timeout.compareTo(Mirror.ANSWER_GRACE) > 0 ? timeout : Mirror.ANSWER_GRACE;
            // Named with its endpoint: two tiers of one bucket name on two servers are two names
            // (one name made their metrics clash, and every scrape failed).
            return new S3Mirror(describe(), S3BlobStore.open(uri(), endpoint.map(URI::toString), config), S3Mirror.DEFAULT_QUEUE_BYTES,
                    grace);
        }
    }

    /**
     * Parses one {@code --mirror} value.
     *
     * @param env the environment, for the S3 tier's key pair
     * @throws IllegalArgumentException naming what is wrong; the message shows valid forms
     */
    static MirrorSpec parse(String text, Map<String, String> env) {
        String t = Objects.requireNonNull(text, "text").trim();
        URI uri;
        try {
            uri = new URI(t);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("'" + t + "' is not a URL: " + e.getReason());
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(java.util.Locale.ROOT);
        return switch (scheme) {
            case "http", "https" -> new Http(uri);
            case "s3" -> s3(uri, env);
            default -> throw new IllegalArgumentException("'" + t + "' is neither http(s)://HOST[:PORT]/BASE nor s3://BUCKET/PREFIX");
        };
    }

    private static S3 s3(URI uri, Map<String, String> env) {
        if (uri.getRawUserInfo() != null) {
            throw new IllegalArgumentException("an s3:// mirror must not carry credentials in its URL;"
                    + " set " + ACCESS_KEY_ENV + " and " + SECRET_KEY_ENV + " instead");
        }
        String bucket = uri.getHost() == null ? uri.getAuthority() : uri.getHost();
        if (bucket == null || bucket.isEmpty()) {
            throw new IllegalArgumentException("'" + uri + "' names no bucket");
        }
        String prefix = uri.getPath() == null ? "" : uri.getPath();
        while (prefix.startsWith("/")) {
            prefix = prefix.substring(1);
        }
        while (prefix.endsWith("/")) {
            prefix = prefix.substring(0, prefix.length() - 1);
        }
        Map<String, String> params = new LinkedHashMap<>();
        if (uri.getRawQuery() != null) {
            for (String pair : uri.getRawQuery().split("&")) {
                int eq = pair.indexOf('=');
                String k = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
                String v = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
                if (!k.equals("endpoint")) {
                    throw new IllegalArgumentException("unknown parameter '" + k + "' in " + bucket
                            + "'s mirror URL; the only one is endpoint=URL (credentials go in " + ACCESS_KEY_ENV + "/"
                            + SECRET_KEY_ENV + ")");
                }
                params.put(k, v);
            }
        }
        Optional<URI> endpoint = Optional.ofNullable(params.get("endpoint")).map(e -> {
            URI u = URI.create(e);
            if (u.getScheme() == null || u.getHost() == null || u.getRawUserInfo() != null) {
                throw new IllegalArgumentException("endpoint '" + e + "' is not a URL such as http://minio.rack7:9000");
            }
            HttpMirror.requirePossiblePort(u, "endpoint '" + e + "'");
            return u;
        });
        String access = env.get(ACCESS_KEY_ENV);
        String secret = env.get(SECRET_KEY_ENV);
        boolean hasAccess = access != null && !access.isBlank();
        boolean hasSecret = secret != null && !secret.isBlank();
        if (hasAccess != hasSecret) {
            throw new IllegalArgumentException("only one of " + ACCESS_KEY_ENV + " and " + SECRET_KEY_ENV
                    + " is set; set both, or neither to use the AWS SDK's default chain");
        }
        Optional<S3BlobStore.Credentials> credentials = hasAccess
                ? Optional.of(new S3BlobStore.Credentials(access.trim(), secret.trim())) : Optional.empty();
        return new S3(bucket, prefix, endpoint, credentials);
    }
}
