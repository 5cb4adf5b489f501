package io.warpdata.store.s3;

import io.warpdata.store.InvalidRemoteException;

import java.net.URI;
import java.util.Optional;

/**
 * Where a store lives: a bucket, the key prefix under it ({@code ""} or ending in {@code /}),
 * and for a non-AWS server its endpoint. Parsed once from {@code s3://bucket[/prefix]}; every
 * message that names an object names it through {@link #describe(String)}.
 *
 * @param bucket the bucket's name
 * @param root the key prefix, empty or ending in {@code /}
 * @param endpoint a non-AWS server (path-style access), or empty for S3 itself
 */
record S3Location(String bucket, String root, Optional<URI> endpoint) {

    /**
     * Parses {@code s3://bucket[/prefix]} and an optional endpoint.
     *
     * @throws InvalidRemoteException if the URI or the endpoint is not of that form
     */
    static S3Location parse(String remote, Optional<String> endpoint) {
        if (remote == null || !remote.startsWith("s3://")) {
            throw new InvalidRemoteException(String.valueOf(remote), "not an s3:// URI");
        }
        String rest = remote.substring("s3://".length());
        int slash = rest.indexOf('/');
        String bucket = slash < 0 ? rest : rest.substring(0, slash);
        String prefix = slash < 0 ? "" : rest.substring(slash + 1);
        while (prefix.endsWith("/")) {
            prefix = prefix.substring(0, prefix.length() - 1);
        }
        if (!bucket.matches("[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")) {
            throw new InvalidRemoteException(remote, "'" + bucket + "' is not a valid bucket name");
        }
        if (prefix.contains("//")) {
            throw new InvalidRemoteException(remote, "the prefix has an empty path segment");
        }
        Optional<URI> endpointUri = endpoint.filter(e -> !e.isBlank()).map(e -> {
            try {
                URI u = URI.create(e);
                if (u.getScheme() == null || u.getHost() == null) {
                    throw new IllegalArgumentException("no scheme or host");
                }
                return u;
            } catch (IllegalArgumentException ex) {
                throw InvalidRemoteException.endpoint(e);
            }
        });
        return new S3Location(bucket, prefix.isEmpty() ? "" : prefix + "/", endpointUri);
    }

    /** The object key of a store key: the prefix and the key. */
    String key(String key) {
        return root + key;
    }

    /** The store itself, as the user wrote it: {@code s3://bucket[/prefix]}. */
    String describe() {
        return root.isEmpty() ? "s3://" + bucket : "s3://" + bucket + "/" + root.substring(0, root.length() - 1);
    }

    /** One object, for messages: {@code s3://bucket/prefix/key}. */
    String describe(String key) {
        return "s3://" + bucket + "/" + root + key;
    }

    /** The server, for "cannot connect" messages: the endpoint given, or S3 itself. */
    String server() {
        return endpoint.map(URI::toString).orElse("S3");
    }
}
