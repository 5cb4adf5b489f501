package io.warpdata.manifest;

/** A version id: SHA-256 (lowercase hex) of the manifest's canonical JSON. */
public record VersionHash(String hex) {
    public VersionHash {
        if (hex == null || !Names.HEX64.matcher(hex).matches()) {
            throw new ManifestValidationException("version_hash", "'" + hex + "' is not 64 lowercase hex digits");
        }
    }

    /** The first {@code n} hex digits, for display. */
    public String shortHex(int n) {
        return hex.substring(0, Math.min(n, hex.length()));
    }

    @Override
    public String toString() {
        return hex;
    }
}
