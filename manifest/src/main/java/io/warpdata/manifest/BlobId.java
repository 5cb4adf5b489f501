package io.warpdata.manifest;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** A blob's content address: SHA-256 of its bytes, lowercase hex. */
public record BlobId(String hex) {
    private static final HexFormat HEX = HexFormat.of();

    public BlobId {
        if (hex == null || !Names.HEX64.matcher(hex).matches()) {
            throw new ManifestValidationException("hash", "'" + hex + "' is not 64 lowercase hex digits");
        }
    }

    /** The id of {@code data}. */
    public static BlobId of(byte[] data) {
        return fromDigest(sha256().digest(data));
    }

    /** Wraps a 32-byte SHA-256 digest. */
    public static BlobId fromDigest(byte[] digest) {
        if (digest.length != 32) {
            throw new IllegalArgumentException("SHA-256 digest must be 32 bytes, was " + digest.length);
        }
        return new BlobId(HEX.formatHex(digest));
    }

    /** The 32 digest bytes. */
    public byte[] digest() {
        return HEX.parseHex(hex);
    }

    /** A fresh SHA-256 digest instance. */
    public static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    @Override
    public String toString() {
        return hex;
    }
}
