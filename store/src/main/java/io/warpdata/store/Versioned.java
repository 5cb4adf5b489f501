package io.warpdata.store;

import io.warpdata.manifest.BlobId;

import java.util.Objects;

/**
 * A small object and its version tag: S3's ETag, or for stores without one a tag derived from
 * the content, so that "unchanged" can be told without comparing bytes.
 */
public record Versioned(byte[] data, String tag) {
    public Versioned {
        Objects.requireNonNull(data, "data");
        Objects.requireNonNull(tag, "tag");
    }

    /** The tag of stores that keep none: the content's SHA-256, quoted as ETags are. */
    public static Versioned ofContent(byte[] data) {
        return new Versioned(data, "\"" + BlobId.of(data).hex() + "\"");
    }
}
